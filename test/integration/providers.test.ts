import assert from 'node:assert/strict';
import net from 'node:net';
import { newUser, type Api } from './client.js';
import { startFakes, type Fakes } from '../fakes/index.js';

describe('model providers over HTTP', () => {
  let api: Api;
  let fakes: Fakes;

  before(async () => {
    api = (await newUser('providers')).api;
    fakes = await startFakes();
  });
  after(() => fakes.close());

  it('lists the provider kinds, including Ollama (kind A) and Xinference (kind B)', async () => {
    const res = await api.get('/providers');
    const names = res.body.data.map((p: any) => p.name);
    for (const n of ['OpenAI-API-Compatible', 'Ollama', 'Xinference', 'Builtin']) assert.ok(names.includes(n), n);
  });

  it('configures an instance with models; secrets are never returned in full', async () => {
    const res = await api.post('/providers/OpenAI-API-Compatible/instances', {
      instance_name: 'main',
      base_url: fakes.openai.baseUrl,
      api_key: 'sk-very-secret-1234',
      model_info: [{ model_name: 'gpt-x', model_type: ['chat', 'image2text'] }, { model_name: 'emb-x', model_type: 'embedding' }],
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.data.api_key, 'sk-…1234');
    assert.ok(!JSON.stringify(res.body).includes('very-secret'));
    const got = await api.get('/providers/OpenAI-API-Compatible/instances/main');
    assert.deepEqual(got.body.data.models.map((m: any) => [m.model_name, m.vision]), [['emb-x', false], ['gpt-x', true]]);
    const dup = await api.post('/providers/OpenAI-API-Compatible/instances', { instance_name: 'main', base_url: fakes.openai.baseUrl });
    assert.equal(dup.status, 400);
  });

  it('an update refused for a bad model changes nothing, not even the key', async () => {
    const res = await api.put('/providers/OpenAI-API-Compatible/instances/main', { api_key: 'sk-other-key-0000', model_info: [{ model_name: 'b@d', model_type: 'chat' }] });
    assert.equal(res.status, 400);
    assert.match(res.body.message, /must not contain @/);
    assert.equal((await api.get('/providers/OpenAI-API-Compatible/instances/main')).body.data.api_key, 'sk-…1234');
  });

  it('adding models where one is invalid is refused and stores none of them', async () => {
    const res = await api.post('/providers/OpenAI-API-Compatible/instances/main/models', { model_info: [{ model_name: 'good', model_type: 'chat' }, { model_name: 'b@d', model_type: 'chat' }] });
    assert.equal(res.status, 400);
    assert.match(res.body.message, /must not contain @/);
    const got = await api.get('/providers/OpenAI-API-Compatible/instances/main/models');
    assert.deepEqual(got.body.data.map((m: any) => m.model_name).sort(), ['emb-x', 'gpt-x']);
  });

  it('a model named twice in model_info is a 400 naming it, and no instance is created', async () => {
    const res = await api.post('/providers/OpenAI-API-Compatible/instances', {
      instance_name: 'dup',
      base_url: fakes.openai.baseUrl,
      model_info: [{ model_name: 'twice', model_type: 'chat' }, { model_name: 'twice', model_type: 'embedding' }],
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.match(res.body.message, /'twice' more than once/);
    assert.equal((await api.get('/providers/OpenAI-API-Compatible/instances/dup')).status, 404);
  });

  it('lists selectable models by type, the built-in chat and embedding models included', async () => {
    const chat = await api.get('/models', { type: 'chat' });
    assert.deepEqual(chat.body.data.map((m: any) => m.model_id), ['SmolLM2-135M-Instruct@Builtin', 'gpt-x@main@OpenAI-API-Compatible']);
    assert.equal(chat.body.data[0].provider_name, 'Builtin');
    const emb = await api.get('/models', { type: 'embedding' });
    const ids = emb.body.data.map((m: any) => m.model_id);
    assert.deepEqual(ids.slice(0, 2), ['BAAI/bge-small-en-v1.5@Builtin', 'sentence-transformers/all-MiniLM-L6-v2@Builtin'], 'both built-in embedders, the default first');
    assert.ok(ids.includes('emb-x@main@OpenAI-API-Compatible'));
  });

  it('sets per-tenant defaults by model_name@model_factory and reads them back', async () => {
    const other = (await newUser('other-defaults')).api;
    const fresh = (await other.get('/models/default')).body.data;
    assert.equal(fresh.chat_model, 'SmolLM2-135M-Instruct@Builtin', 'a new tenant chats with the built-in model');
    assert.equal(fresh.embedding_model, 'BAAI/bge-small-en-v1.5@Builtin');
    const set = await api.patch('/models/default', { model_type: 'chat', model_id: 'gpt-x@OpenAI-API-Compatible' });
    assert.equal(set.status, 200);
    assert.equal(set.body.data.chat_model, 'gpt-x@main@OpenAI-API-Compatible');
    assert.equal((await other.get('/models/default')).body.data.chat_model, 'SmolLM2-135M-Instruct@Builtin', 'defaults are per tenant');
    const wrongType = await api.patch('/models/default', { model_type: 'rerank', model_id: 'gpt-x@OpenAI-API-Compatible' });
    assert.equal(wrongType.status, 400);
    const unknown = await api.patch('/models/default', { model_type: 'chat', model_id: 'nope@OpenAI-API-Compatible' });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.message, /nope@OpenAI-API-Compatible/);
  });

  it('uses a configured embedding model for a dataset', async () => {
    const ds = await api.post('/datasets', { name: 'custom-embed', embedding_model: 'emb-x@OpenAI-API-Compatible' });
    assert.equal(ds.status, 200);
    assert.equal(ds.body.data.embedding_model, 'emb-x@OpenAI-API-Compatible');
  });

  it('checks a connection: a pulled Ollama model passes, a missing one is named', async () => {
    const ok = await api.post('/providers/Ollama/connection', { base_url: fakes.ollama.url, model_name: 'llama3.2', model_type: 'chat' });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const missing = await api.post('/providers/Ollama/connection', { base_url: fakes.ollama.url, model_name: 'not-pulled', model_type: 'chat' });
    assert.equal(missing.status, 400);
    assert.match(missing.body.message, /not-pulled/);
  });

  it('fails fast with connection refused on a wrong base URL', async () => {
    const port = await closedPort();
    const t0 = Date.now();
    const res = await api.post('/providers/Ollama/connection', { base_url: `http://127.0.0.1:${port}`, model_name: 'llama3.2', model_type: 'chat' });
    assert.ok(res.status >= 400 && res.status < 600 && res.status !== 500, `status ${res.status}`);
    assert.match(res.body.message, /Ollama/);
    assert.match(res.body.message, /connection refused/i);
    assert.ok(Date.now() - t0 < 5000, 'fails fast');
  });

  it('removes models and instances', async () => {
    assert.equal((await api.delete('/providers/OpenAI-API-Compatible/instances/main/models/emb-x')).status, 200);
    assert.equal((await api.delete('/providers/OpenAI-API-Compatible/instances/main')).status, 200);
    assert.equal((await api.get('/providers/OpenAI-API-Compatible/instances/main')).status, 404);
    assert.equal((await api.get('/providers/NoSuchKind/instances')).status, 404);
  });
});

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
