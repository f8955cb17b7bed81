import assert from 'node:assert/strict';
import { harness } from './harness.js';
import { Api, newUser } from './client.js';

describe('HTTP conventions', () => {
  let api: Api;
  before(async () => {
    api = (await newUser('http')).api;
  });

  it('answers 400 to malformed JSON', async () => {
    const res = await api.request('POST', '/datasets', { raw: '{"name": ', headers: { 'Content-Type': 'application/json' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 400);
    assert.match(res.body.message, /Malformed JSON/);
  });

  it('answers 413 to a body over the limit, without a stack trace', async () => {
    const res = await api.request('POST', '/datasets', { raw: JSON.stringify({ name: 'x', description: 'y'.repeat(2 * 1024 * 1024) }), headers: { 'Content-Type': 'application/json' } });
    assert.equal(res.status, 413);
    assert.match(res.body.message, /too large/);
    assert.ok(!JSON.stringify(res.body).includes('at '), 'no stack trace');
  });

  it("answers RAGFlow's JSON 404 to an unknown route and 405 to a wrong method", async () => {
    const missing = await api.get('/no/such/route');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { code: 404, message: 'Not Found: /api/v1/no/such/route', data: null, error: 'Not Found' });
    const wrong = await api.request('PATCH', '/datasets');
    assert.equal(wrong.status, 405);
    assert.match(wrong.headers.get('allow')!, /GET/);
  });

  it('serves an OpenAPI 3.1 document generated from the request schemas', async () => {
    const res = await new Api((await harness()).url).get('/openapi.json');
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    const create = res.body.paths['/api/v1/datasets'].post;
    assert.deepEqual(create.requestBody.content['application/json'].schema.required, ['name']);
    assert.ok(res.body.paths['/api/v1/datasets/{dataset_id}'].put);
  });

  it('reports database, index and Temporal health, and the built-in chat model', async () => {
    const res = await new Api((await harness()).url).get('/system/healthz');
    assert.equal(res.status, 200);
    const { chat_model: chatModel, event_loop: eventLoop, rss_mb: rssMb, caches, builtin_embedding: embedding, ...rest } = res.body;
    assert.deepEqual(rest, { database: 'ok', index: 'ok', temporal: 'ok', status: 'ok' });
    assert.deepEqual(Object.keys(eventLoop).sort(), ['max_ms', 'mean_ms', 'p99_ms']);
    assert.ok(rssMb > 0);
    assert.equal(chatModel.status, 'ok');
    assert.equal(chatModel.model, 'SmolLM2-135M-Instruct@Builtin');
    assert.ok(['not_loaded', 'loading', 'loaded'].includes(chatModel.state), chatModel.state);
    assert.equal(typeof chatModel.memory_bytes, 'number');
    assert.ok(chatModel.context_size > 0 && chatModel.parallel > 0);
    // Beside the memory: each cache's size, and whether the embedding model's process is running.
    for (const name of ['model_clients', 'stems', 'document_names']) assert.ok(Number.isInteger(caches[name]?.entries), `${name}: ${JSON.stringify(caches)}`);
    assert.equal(typeof embedding.running, 'boolean');
    assert.ok(Number.isInteger(embedding.pending_requests));
  });
});
