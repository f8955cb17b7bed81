import assert from 'node:assert/strict';
import { callGate, lastUserMessage, startFakeOpenAI, type AnswerScript, type FakeMessage, type FakeOpenAI } from '../fakes/index.js';
import { harness } from './harness.js';
import { Api, eventually, newUser } from './client.js';
import { addModelServer } from './chat-helpers.js';
import { upload, waitForRun } from './documents-helpers.js';

/** Every summary carries this word, so retrieval can ask for summaries. */
const MARK = 'Cairnsummary';

const TOPICS = [
  'The granite cairn marks the mountain trail above the pass',
  'Salmon swim up the cold river to spawn in autumn gravel',
  'Volcanic basalt columns stand in hexagons along the coast',
  'The alpine glacier retreats a little further every summer',
];

const isSummary = (messages: FakeMessage[]) => lastUserMessage(messages).includes('Paragraphs:\n');
const clusterOf = (messages: FakeMessage[]) => lastUserMessage(messages).split('Paragraphs:\n')[1] ?? '';
/** Summary calls a step makes at once (SUMMARY_CONCURRENCY in activities/raptor.ts). */
const SUMMARY_SLOTS = 4;

/** A title line and a summary naming the cluster's first words: different clusters, different summaries. */
const summaries: AnswerScript = (messages) => {
  if (!isSummary(messages)) return { answer: 'ok' };
  const lines = clusterOf(messages).split('\n');
  return { answer: `${MARK} of ${lines.length} paragraphs\n${MARK}: ${lines.map((l) => l.split(' ').slice(0, 6).join(' ')).join('; ')}` };
};

function summaryRequests(fake: FakeOpenAI, marker = ''): string[] {
  return fake.requests
    .filter((r) => r.path === '/v1/chat/completions' && Array.isArray(r.body?.messages) && isSummary(r.body.messages))
    .map((r) => clusterOf(r.body.messages))
    .filter((cluster) => cluster.includes(marker));
}

/** `n` one-line paragraphs cycling through the topics, each its own chunk (chunk_token_num 24). */
function text(n: number, marker = ''): string {
  return Array.from({ length: n }, (_, i) => `${TOPICS[i % TOPICS.length]} ${marker}note ${i}.`).join('\n');
}

let seq = 0;

async function parsedDataset(api: Api, files: Record<string, string>, parserConfig: Record<string, unknown> = {}): Promise<{ id: string; docs: string[] }> {
  const ds = await api.post('/datasets', { name: `raptor-${++seq}-${Date.now() % 100000}`, parser_config: { chunk_token_num: 24, ...parserConfig } });
  assert.equal(ds.status, 200, JSON.stringify(ds.body));
  const id: string = ds.body.data.id;
  const up = await upload(api, id, Object.entries(files).map(([name, t]) => ({ name, bytes: Buffer.from(t) })));
  assert.equal(up.status, 200, JSON.stringify(up.body));
  const docs: string[] = up.body.data.map((d: { id: string }) => d.id);
  const parse = await api.post(`/datasets/${id}/chunks`, { document_ids: docs });
  assert.equal(parse.status, 200, JSON.stringify(parse.body));
  for (const d of docs) assert.equal((await waitForRun(api, id, d)).run, 'DONE');
  return { id, docs };
}

async function task(api: Api, ds: string) {
  const res = await api.get(`/datasets/${ds}/index?type=raptor`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

/** Polls the task until it has ended. */
async function waitTask(api: Api, ds: string, timeoutMs = 120_000) {
  return eventually(async () => {
    const t = await task(api, ds);
    return t.status && t.status !== 'running' ? t : undefined;
  }, timeoutMs, 100);
}

async function summaryChunks(api: Api, ds: string, doc: string) {
  const res = await api.get(`/datasets/${ds}/documents/${doc}/chunks`, { page_size: 100 });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body.data.chunks as { id: string; content: string; raptor_kwd?: string; raptor_layer?: number }[]).filter((c) => c.raptor_kwd === 'raptor');
}

describe('RAPTOR: POST|GET|DELETE /datasets/{id}/index?type=raptor', function () {
  this.timeout(300_000);
  let api: Api;
  let fake: FakeOpenAI;

  before(async () => {
    await harness();
    fake = await startFakeOpenAI({ answer: summaries });
    api = (await newUser('raptor')).api;
    await addModelServer(api, fake.baseUrl);
  });

  after(async () => {
    await fake.close();
  });

  afterEach(() => {
    fake.behaviour.answer = summaries;
    fake.behaviour.failure = undefined;
    fake.behaviour.gate?.release();
    fake.behaviour.gate = undefined;
  });

  describe('a dataset of two documents, scope file', () => {
    let ds: string;
    let docs: string[];
    let firstCalls: number;
    let firstSummaries: string[];

    before(async () => {
      ({ id: ds, docs } = await parsedDataset(api, { 'a.txt': text(12, 'alpha '), 'b.txt': text(12, 'beta ') }, { raptor: { use_raptor: false, max_cluster: 8 } }));
    });

    it('runs to done, showing its level and summaries done on the way; the calls match the model', async () => {
      fake.clear();
      // The model answers the first summary of level 1 and holds the others until the test has seen the progress.
      let firstLevel = 0;
      const gate = callGate((messages) => isSummary(messages) && !clusterOf(messages).includes(MARK) && ++firstLevel > 1);
      fake.behaviour.gate = gate;
      const start = await api.post(`/datasets/${ds}/index?type=raptor`);
      assert.equal(start.status, 200, JSON.stringify(start.body));
      const midway = await eventually(async () => {
        const t = await task(api, ds);
        return /^level 1: summarising 1\/\d+$/.test(t.progress_msg) ? t : undefined;
      }, 60_000, 100);
      assert.equal(midway.status, 'running', JSON.stringify(midway));
      gate.release();
      const done = await waitTask(api, ds);
      assert.equal(done.status, 'done', JSON.stringify(done));
      assert.equal(done.id, start.body.data.task_id);
      assert.match(done.progress_msg, /^done: \d+ summaries in \d+ levels?$/);
      assert.equal(done.progress, 1);
      assert.equal(done.done, done.total);
      assert.equal(done.model_calls, summaryRequests(fake).length);
      assert.equal(done.cached_calls, 0);
      assert.ok(done.tokens > 0);
      firstCalls = done.model_calls;
      const ids: string[] = [];
      for (const doc of docs) {
        const mine = await summaryChunks(api, ds, doc);
        assert.ok(mine.length >= 2, `${mine.length} summaries of ${doc}`);
        assert.ok(mine.every((c) => c.content.startsWith(MARK) && (c.raptor_layer ?? 0) >= 1));
        const top = Math.max(...mine.map((c) => c.raptor_layer!));
        assert.equal(mine.filter((c) => c.raptor_layer === top).length, 1, 'one root per document');
        ids.push(...mine.map((c) => c.id));
      }
      assert.equal(ids.length, firstCalls, 'one summary per call');
      firstSummaries = ids.sort();
    });

    it('retrieval returns the summaries like other chunks, marked raptor with their level', async () => {
      const res = await api.post('/retrieval', { question: `${MARK} granite cairn trail`, dataset_ids: [ds], similarity_threshold: 0 });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const chunks = res.body.data.chunks as { id: string; document_id: string; raptor_kwd?: string; raptor_layer?: number }[];
      const marked = chunks.filter((c) => c.raptor_kwd === 'raptor');
      assert.ok(marked.length > 0, JSON.stringify(chunks.slice(0, 3)));
      assert.ok(marked.every((c) => docs.includes(c.document_id) && c.raptor_layer! >= 1));
      assert.ok(chunks.some((c) => c.raptor_kwd === undefined && c.raptor_layer === undefined), 'ordinary chunks stay unmarked');
    });

    it('a re-run makes no model call (all answers cached) and leaves the same summaries, once', async () => {
      fake.clear();
      const start = await api.post(`/datasets/${ds}/index?type=raptor`);
      assert.equal(start.status, 200, JSON.stringify(start.body));
      const done = await waitTask(api, ds);
      assert.equal(done.status, 'done', JSON.stringify(done));
      assert.equal(summaryRequests(fake).length, 0, 'no request reached the model');
      assert.equal(done.model_calls, 0);
      assert.equal(done.cached_calls, firstCalls);
      const ids = (await Promise.all(docs.map((d) => summaryChunks(api, ds, d)))).flat().map((c) => c.id).sort();
      assert.deepEqual(ids, firstSummaries);
    });

    it('DELETE /datasets/{id}/raptor removes the summaries and the task; the chunks stay', async () => {
      const before = (await api.get(`/datasets/${ds}/documents/${docs[0]}/chunks`)).body.data.total;
      const res = await api.delete(`/datasets/${ds}/raptor`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      for (const doc of docs) assert.deepEqual(await summaryChunks(api, ds, doc), []);
      assert.deepEqual(await task(api, ds), {});
      const after = (await api.get(`/datasets/${ds}/documents/${docs[0]}/chunks`)).body.data.total;
      assert.ok(before > 12, `${before} chunks listed with the summaries`);
      assert.equal(after, 12, 'the 12 chunks, no summary');
      const hits = await api.post('/retrieval', { question: `${MARK} granite`, dataset_ids: [ds], similarity_threshold: 0 });
      assert.ok((hits.body.data.chunks as { raptor_kwd?: string }[]).every((c) => c.raptor_kwd === undefined));
    });
  });

  it('scope dataset: one tree over all documents; its summaries belong to the dataset (its id and name)', async () => {
    const { id: ds, docs } = await parsedDataset(api, { 'c.txt': text(8), 'd.txt': text(8) }, { raptor: { scope: 'dataset' } });
    assert.equal((await api.post(`/datasets/${ds}/index?type=raptor`)).status, 200);
    assert.equal((await waitTask(api, ds)).status, 'done');
    const res = await api.post('/retrieval', { question: `${MARK} salmon river`, dataset_ids: [ds], similarity_threshold: 0 });
    const marked = (res.body.data.chunks as { document_id: string; document_name: string; raptor_kwd?: string }[]).filter((c) => c.raptor_kwd === 'raptor');
    const name = (await api.get('/datasets', { id: ds })).body.data[0].name;
    assert.ok(marked.length > 0);
    assert.ok(marked.every((c) => c.document_id === ds && c.document_name === name));
    for (const doc of docs) assert.deepEqual(await summaryChunks(api, ds, doc), []);
  });

  it('DELETE while running stops the task: no more model calls, nothing written, status cancelled', async () => {
    const { id: ds, docs } = await parsedDataset(api, { 'e.txt': text(24, 'gamma ') }, { raptor: { max_cluster: 16, clustering_threshold: 1, clustering_ratio: 1 } });
    fake.clear();
    // The model holds every summary call: the task is mid-level at the DELETE, however slow the machine.
    const gate = callGate((messages) => isSummary(messages) && clusterOf(messages).includes('gamma'));
    fake.behaviour.gate = gate;
    assert.equal((await api.post(`/datasets/${ds}/index?type=raptor`)).status, 200);
    await eventually(async () => gate.held === SUMMARY_SLOTS, 60_000, 50);
    const cancel = api.delete(`/datasets/${ds}/index?type=raptor&wipe=false`);
    // The cancel reaches the step at its next heartbeat and aborts the calls it has open.
    await eventually(async () => gate.held === 0, 30_000, 50).catch(() => assert.fail(`${gate.held} summary calls still open 30 s after the cancel`));
    const res = await cancel;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const t = await task(api, ds);
    assert.equal(t.status, 'cancelled', JSON.stringify(t));
    // From now on the model answers at once: a step still running would ask on.
    gate.release();
    const asked = summaryRequests(fake, 'gamma').length;
    assert.equal(asked, SUMMARY_SLOTS, 'only the calls open at the cancel were made');
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(summaryRequests(fake, 'gamma').length, asked, 'no call after the cancel');
    assert.deepEqual(await summaryChunks(api, ds, docs[0]!), []);
  });

  it('deleting the dataset while RAPTOR runs stops the task: no more model calls', async () => {
    const { id: ds } = await parsedDataset(api, { 'f.txt': text(24, 'delta ') }, { raptor: { max_cluster: 16, clustering_threshold: 1, clustering_ratio: 1 } });
    fake.clear();
    // The model holds every summary call: the task is mid-level at the deletion, however slow the machine.
    const gate = callGate((messages) => isSummary(messages) && clusterOf(messages).includes('delta'));
    fake.behaviour.gate = gate;
    assert.equal((await api.post(`/datasets/${ds}/index?type=raptor`)).status, 200);
    await eventually(async () => gate.held === SUMMARY_SLOTS, 60_000, 50);
    const deletion = api.delete('/datasets', { ids: [ds] });
    // The cancel reaches the step at its next heartbeat and aborts the calls it has open.
    await eventually(async () => gate.held === 0, 30_000, 50).catch(() => assert.fail(`${gate.held} summary calls still open 30 s after the deletion`));
    const res = await deletion;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    // From now on the model answers at once: a step still running would ask on.
    gate.release();
    const asked = summaryRequests(fake, 'delta').length;
    assert.equal(asked, SUMMARY_SLOTS, 'only the calls open at the deletion were made');
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(summaryRequests(fake, 'delta').length, asked, 'no call after the deletion');
  });

  it('a worker killed mid-task resumes: no answered call is asked again', async () => {
    const h = await harness();
    const { id: ds } = await parsedDataset(api, { 'k.txt': text(40, 'killtest ') }, { raptor: { max_cluster: 16, clustering_threshold: 1, clustering_ratio: 1 } });
    fake.clear();
    // From the third summary on, the model holds its answers: the worker dies with those calls open.
    let summaryCalls = 0;
    const gate = callGate((messages) => isSummary(messages) && clusterOf(messages).includes('killtest') && ++summaryCalls >= 3);
    fake.behaviour.gate = gate;
    assert.equal((await api.post(`/datasets/${ds}/index?type=raptor`)).status, 200);
    // Every slot waits on a held call: each earlier answer was stored before its slot asked again.
    await eventually(async () => gate.held === SUMMARY_SLOTS, 60_000, 50);
    const beforeKill = summaryRequests(fake, 'killtest');
    assert.equal(beforeKill.length, 2 + SUMMARY_SLOTS);
    const finished = beforeKill.slice(0, 2);
    await h.killWorker();
    // The new worker's calls are answered at once.
    gate.release();
    const done = await waitTask(api, ds, 180_000);
    assert.equal(done.status, 'done', JSON.stringify(done));
    const asked = summaryRequests(fake, 'killtest');
    const times = new Map<string, number>();
    for (const cluster of asked) times.set(cluster, (times.get(cluster) ?? 0) + 1);
    for (const cluster of finished) assert.equal(times.get(cluster), 1, 'an answered call is never asked again');
    const repeated = [...times.values()].filter((n) => n > 1).length;
    assert.ok(repeated <= beforeKill.length - finished.length, `${repeated} calls repeated; only the ${beforeKill.length - finished.length} open at the kill may be`);
    assert.ok(done.cached_calls >= finished.length, `${done.cached_calls} cached calls`);
    assert.equal(done.model_calls + done.cached_calls, done.done);
  });

  it('a model that keeps failing fails the task with its reason; the summaries built before stay', async () => {
    const { id: ds, docs } = await parsedDataset(api, { 'f.txt': text(8, 'delta ') });
    assert.equal((await api.post(`/datasets/${ds}/index?type=raptor`)).status, 200);
    assert.equal((await waitTask(api, ds)).status, 'done');
    const built = (await summaryChunks(api, ds, docs[0]!)).map((c) => c.id).sort();
    // Other settings, other calls: nothing cached helps.
    await api.put(`/datasets/${ds}`, { parser_config: { raptor: { prompt: 'Other prompt.\nParagraphs:\n{cluster_content}' } } });
    fake.behaviour.failure = { status: 503, message: 'model overloaded', path: '/v1/chat' };
    assert.equal((await api.post(`/datasets/${ds}/index?type=raptor`)).status, 200);
    const failed = await waitTask(api, ds, 180_000);
    assert.equal(failed.status, 'failed', JSON.stringify(failed));
    assert.match(failed.message, /model overloaded/);
    assert.equal(failed.progress_msg, failed.message);
    assert.equal(failed.progress, -1);
    assert.deepEqual((await summaryChunks(api, ds, docs[0]!)).map((c) => c.id).sort(), built);
  });

  it('a model that refuses the key fails the task at once (no retries)', async () => {
    const { id: ds } = await parsedDataset(api, { 'g.txt': text(6, 'epsilon ') });
    fake.clear();
    fake.behaviour.failure = { status: 401, message: 'bad key', path: '/v1/chat' };
    assert.equal((await api.post(`/datasets/${ds}/index?type=raptor`)).status, 200);
    const failed = await waitTask(api, ds, 60_000);
    assert.equal(failed.status, 'failed', JSON.stringify(failed));
    assert.match(failed.message, /authentication failed.*bad key/);
    const calls = fake.requests.filter((r) => r.path === '/v1/chat/completions').length;
    assert.ok(calls <= 4, `${calls} calls: one batch's, not retried`);
  });

  it('a parse with raptor.use_raptor on starts the dataset task by itself, covering every document parsed', async () => {
    const { id: ds, docs } = await parsedDataset(api, { 'h.txt': text(8, 'zeta '), 'i.txt': text(8, 'eta ') }, { raptor: { use_raptor: true } });
    const done = await eventually(async () => {
      const t = await task(api, ds);
      return t.status === 'done' ? t : undefined;
    }, 120_000, 200);
    assert.match(done.progress_msg, /^done: /);
    for (const doc of docs) assert.ok((await summaryChunks(api, ds, doc)).length > 0, `document ${doc} has summaries`);
  });
});
