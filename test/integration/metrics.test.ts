import assert from 'node:assert/strict';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import { parsePrometheusText, sampleSum, sampleValue, type Family } from '../support/prometheus-text.js';
import { harness } from './harness.js';
import { Api, eventually } from './client.js';
import { addModelServer, createChat, parsedDataset, userWithModel } from './chat-helpers.js';
import { upload, waitForRun } from './documents-helpers.js';
import { createAgent, messageCanvas, runStream } from './agent-helpers.js';

type Metrics = Map<string, Family>;

describe('GET /metrics', function () {
  this.timeout(240_000);
  let url: string;
  let admin: Api;
  let user: Api;
  let fake: FakeOpenAI;

  before(async () => {
    const h = await harness();
    url = h.url;
    admin = new Api(url, h.adminKey);
    fake = await startFakeOpenAI();
    user = (await userWithModel('metrics', fake.baseUrl)).api;
  });

  after(() => fake.close());

  async function scrapeRaw(key?: string) {
    return fetch(new URL('/metrics', url), { headers: key ? { Authorization: `Bearer ${key}` } : {} });
  }

  async function scrape(): Promise<Metrics> {
    const res = await scrapeRaw(admin.key);
    assert.equal(res.status, 200);
    return parsePrometheusText(await res.text());
  }

  const requests = (m: Metrics, route: string, method: string, status: string) => sampleValue(m, 'cairn_http_requests_total', { route, method, status }) ?? 0;

  it('answers 401 without credentials and 403 to a user who is not an admin', async () => {
    const anonymous = await scrapeRaw();
    assert.equal(anonymous.status, 401);
    assert.equal((await anonymous.json()).code, 401);
    const notAdmin = await scrapeRaw(user.key);
    assert.equal(notAdmin.status, 403);
    const body = await notAdmin.json();
    assert.equal(body.code, 403);
    assert.match(body.message, /admin/);
  });

  it('is valid Prometheus text exposition (version 0.0.4) for an admin key', async () => {
    const res = await scrapeRaw(admin.key);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusText(await res.text());
    for (const name of ['cairn_http_requests_total', 'cairn_http_request_duration_seconds', 'cairn_documents', 'process_resident_memory_bytes']) {
      assert.ok(families.has(name), `${name} is exported`);
    }
    assert.equal(families.get('cairn_http_request_duration_seconds')!.type, 'histogram');
    assert.equal(families.get('cairn_http_requests_total')!.type, 'counter');
  });

  it('counts requests by route pattern, method and status, 404s of unknown paths under one label, and times them in cumulative buckets', async () => {
    const before = await scrape();
    const ds = await user.post('/datasets', { name: `metrics-${Date.now()}` });
    assert.equal(ds.status, 200);
    const datasetId: string = ds.body.data.id;
    for (let i = 0; i < 3; i++) assert.equal((await user.get(`/datasets/${datasetId}/documents`)).status, 200);
    assert.equal((await user.get(`/no-such-resource/${datasetId}`)).status, 404);
    // Outside /api the web console answers GETs that accept HTML; a JSON client gets the 404.
    assert.equal((await fetch(new URL(`/not-the-api/${datasetId}`, url), { headers: { Accept: 'application/json' } })).status, 404);
    assert.equal((await user.delete('/system/ping')).status, 405);
    const unknownDataset = await user.get('/datasets/ffffffffffffffffffffffffffffffff/documents');
    assert.ok([403, 404].includes(unknownDataset.status), JSON.stringify(unknownDataset.body));
    const after = await scrape();

    const delta = (route: string, method: string, status: string) => requests(after, route, method, status) - requests(before, route, method, status);
    assert.equal(delta('/api/v1/datasets', 'POST', '200'), 1);
    assert.equal(delta('/api/v1/datasets/:dataset_id/documents', 'GET', '200'), 3);
    assert.equal(delta('/api/v1/datasets/:dataset_id/documents', 'GET', String(unknownDataset.status)), 1);
    assert.equal(delta('unmatched', 'GET', '404'), 2);
    assert.equal(delta('/api/v1/system/ping', 'DELETE', '405'), 1);
    assert.equal(delta('/metrics', 'GET', '200'), 1, 'the previous scrape counts too');

    const routes = new Set(after.get('cairn_http_requests_total')!.samples.map((s) => s.labels.route));
    for (const route of routes) assert.ok(route === 'unmatched' || !route!.includes(datasetId), `no raw path as a label: ${route}`);

    const count = (m: Metrics) =>
      sampleValue(m, 'cairn_http_request_duration_seconds_count', { route: '/api/v1/datasets/:dataset_id/documents', method: 'GET', status_class: '2xx' }) ?? 0;
    assert.equal(count(after) - count(before), 3);
    const buckets = after
      .get('cairn_http_request_duration_seconds')!
      .samples.filter((s) => s.name.endsWith('_bucket') && s.labels.route === '/api/v1/datasets/:dataset_id/documents' && s.labels.method === 'GET' && s.labels.status_class === '2xx');
    assert.ok(buckets.length > 5);
    assert.equal(buckets.find((b) => b.labels.le === '+Inf')!.value, count(after));
  });

  it('reports documents by run state as the API reports them', async () => {
    // Start from a quiet store: a parse still running elsewhere would move counts between the scrapes.
    await eventually(async () => sampleValue(await scrape(), 'cairn_documents', { run: 'RUNNING' }) === 0, 120_000, 500);
    const before = await scrape();
    const ds = (await user.post('/datasets', { name: `metrics-docs-${Date.now()}` })).body.data.id;
    const up = await upload(user, ds, [
      { name: 'parsed.txt', bytes: Buffer.from('Granite cairns mark the summit trail.') },
      { name: 'waiting.txt', bytes: Buffer.from('This one is never parsed.') },
    ]);
    assert.equal(up.status, 200);
    const [parsed, waiting] = up.body.data.map((d: { id: string }) => d.id);
    assert.equal((await user.post(`/datasets/${ds}/chunks`, { document_ids: [parsed] })).status, 200);
    assert.equal((await waitForRun(user, ds, parsed)).run, 'DONE');

    const listed = (await user.get(`/datasets/${ds}/documents`)).body.data.docs as { id: string; run: string }[];
    const runOf = (id: string) => listed.find((d) => d.id === id)!.run;
    assert.equal(runOf(parsed), 'DONE');
    assert.equal(runOf(waiting), 'UNSTART');

    const after = await scrape();
    const delta = (run: string) => sampleValue(after, 'cairn_documents', { run })! - sampleValue(before, 'cairn_documents', { run })!;
    assert.deepEqual(
      Object.fromEntries(['UNSTART', 'RUNNING', 'CANCEL', 'DONE', 'FAIL'].map((run) => [run, delta(run)])),
      { UNSTART: 1, RUNNING: 0, CANCEL: 0, DONE: 1, FAIL: 0 },
    );
  });

  it('times model calls per provider and kind: chat through a remote provider, embeddings with the built-in model, and counts failures', async () => {
    const { id: datasetId } = await parsedDataset(user, `metrics-kb-${Date.now()}`, { 'trail.txt': 'Granite cairns mark the summit trail above the tree line.' });
    const chatId = (await createChat(user, { name: `metrics-chat-${Date.now()}`, prompt_config: { system: 'Be brief.', parameters: [] } })).id;
    const calls = (m: Metrics, labels: Record<string, string>) => sampleSum(m, 'cairn_model_call_duration_seconds_count', labels);
    const before = await scrape();

    const retrieval = await user.post('/retrieval', { dataset_ids: [datasetId], question: 'granite cairns', similarity_threshold: 0, highlight: true });
    assert.equal(retrieval.status, 200);
    assert.ok(retrieval.body.data.chunks.length > 0);
    const answer = await user.post('/chat/completions', { chat_id: chatId, stream: false, messages: [{ role: 'user', content: 'hello' }] });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));

    fake.behaviour = { ...fake.behaviour, failure: { status: 401, message: 'bad key', path: '/v1/chat/completions', times: 1 } };
    const failed = await user.post('/chat/completions', { chat_id: chatId, stream: false, messages: [{ role: 'user', content: 'again' }] });
    fake.behaviour = { ...fake.behaviour, failure: undefined };
    assert.notEqual(failed.body.code, 0, 'the provider failure reaches the caller');

    const after = await scrape();
    const delta = (labels: Record<string, string>) => calls(after, labels) - calls(before, labels);
    assert.equal(delta({ provider: 'Builtin', kind: 'embedding', operation: 'embed', outcome: 'ok' }), 1, 'the question is embedded once');
    assert.ok(
      sampleSum(after, 'cairn_model_embedded_texts_total', { provider: 'Builtin' }) - sampleSum(before, 'cairn_model_embedded_texts_total', { provider: 'Builtin' }) >= 1,
    );
    assert.equal(delta({ provider: 'OpenAI-API-Compatible', kind: 'chat', outcome: 'ok' }), 1);
    assert.equal(delta({ provider: 'OpenAI-API-Compatible', kind: 'chat', outcome: 'error' }), 1);
    const errors = (m: Metrics) => sampleSum(m, 'cairn_model_call_errors_total', { provider: 'OpenAI-API-Compatible', kind: 'chat' });
    assert.equal(errors(after) - errors(before), 1);
    assert.ok(sampleValue(after, 'cairn_model_chat_first_token_seconds_count', { provider: 'OpenAI-API-Compatible' })! >= 1);
  });

  it('counts agent runs by Temporal status', async () => {
    const agentId = await createAgent(user, messageCanvas('All done.'));
    const completed = (m: Metrics) => sampleValue(m, 'cairn_agent_runs', { status: 'Completed' }) ?? 0;
    const before = completed(await scrape());
    await runStream(user, { agent_id: agentId, query: 'hi' });
    // Temporal's visibility store catches up with a closed workflow shortly after it closes.
    await eventually(async () => completed(await scrape()) === before + 1, 30_000, 250);
    const m = await scrape();
    assert.equal(sampleValue(m, 'cairn_metrics_source_up', { source: 'temporal' }), 1);
    assert.ok(sampleValue(m, 'cairn_agent_runs', { status: 'Running' }) !== undefined);
  });

  it('reports memory, event-loop lag, cache sizes and the built-in models', async () => {
    const m = await scrape();
    assert.ok(sampleValue(m, 'process_resident_memory_bytes')! > 10e6);
    assert.ok(sampleValue(m, 'nodejs_heap_size_used_bytes')! > 0);
    for (const stat of ['mean', 'p99', 'max']) {
      const lag = sampleValue(m, `nodejs_eventloop_lag_${stat}_seconds`);
      assert.ok(lag !== undefined && lag >= 0 && lag < 10, `${stat} lag ${lag}`);
    }
    assert.ok(sampleValue(m, 'process_cpu_seconds_total')! > 0);
    // The retrieval above loaded the sign bits of a dataset with vectors.
    assert.ok(sampleValue(m, 'cairn_cache_entries', { cache: 'sign_bits' })! >= 1);
    assert.ok(sampleValue(m, 'cairn_cache_bytes', { cache: 'sign_bits' })! > 0);
    assert.ok(sampleValue(m, 'cairn_cache_entries', { cache: 'model_clients' })! >= 1);
    // The highlighted retrieval above stemmed the question's words.
    assert.ok(sampleValue(m, 'cairn_cache_entries', { cache: 'stems' })! >= 1);
    assert.equal(sampleSum(m, 'cairn_builtin_chat_model_state'), 1, 'exactly one state is current');
    assert.equal(sampleValue(m, 'cairn_builtin_embedding_worker_running'), 1, 'the retrieval started the embedding worker');
    assert.equal(sampleValue(m, 'cairn_metrics_source_up', { source: 'metadata_store' }), 1);
  });

  it('is described in the OpenAPI document at the root path, as text', async () => {
    const doc = (await admin.get('/openapi.json')).body;
    const op = doc.paths['/metrics']?.get;
    assert.ok(op, 'GET /metrics is described');
    assert.ok(Object.keys(op.responses['200'].content).some((t) => t.startsWith('text/plain')));
    assert.equal(doc.paths['/api/v1/metrics'], undefined);
  });

  it('keeps a model server added for the tenant in the model clients cache count', async () => {
    const m1 = sampleValue(await scrape(), 'cairn_cache_entries', { cache: 'model_clients' })!;
    const other = await startFakeOpenAI();
    try {
      await addModelServer(user, other.baseUrl, { instance: 'second', chat: 'second-chat' });
      const chatId = (await createChat(user, { name: `metrics-second-${Date.now()}`, prompt_config: { system: 'Be brief.', parameters: [] } })).id;
      assert.equal((await user.post('/chat/completions', { chat_id: chatId, stream: false, messages: [{ role: 'user', content: 'hi' }] })).status, 200);
    } finally {
      await other.close();
    }
    assert.equal(sampleValue(await scrape(), 'cairn_cache_entries', { cache: 'model_clients' }), m1 + 1);
  });
});
