import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { startCairn, type Cairn } from '../../src/server.js';
import { startFakes, type Fakes } from '../fakes/index.js';
import { Api, type ApiResponse } from './client.js';
import { upload } from './documents-helpers.js';
import { harness } from './harness.js';
import { useFakeProviders } from './providers-helpers.js';

const CORPUS = [
  'Granite cairns mark the summit trail above the tree line.',
  'Hikers stack flat stones into cairns along coastal paths.',
  'The lighthouse keeper logs the weather every evening.',
  'Snow covers the granite ridge from November to April.',
  'Cairns in the desert guide caravans between wells.',
];
/** Filler chunks, so that each retrieval has real work to do while the burst arrives. */
const FILLER = Array.from({ length: 60 }, (_, i) => `Field note ${i}: the granite path crosses meadows, streams and ridges near stone marker ${i}.`);
const BURST = 16;

describe('overload: admission control, event-loop lag in healthz', function () {
  this.timeout(180_000);
  let cairn: Cairn;
  let fakes: Fakes;
  let api: Api;
  let dataDir: string;
  let ds: string;

  before(async () => {
    const h = await harness();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-overload-'));
    const base = loadConfig({ ...process.env, CAIRN_DATA_DIR: dataDir, CAIRN_MAX_INFLIGHT: '1', CAIRN_MAX_QUEUE: '2', CAIRN_MAX_QUEUE_WAIT_MS: '0' });
    assert.deepEqual(base.admission.short, { maxInFlight: 1, maxQueue: 2, maxWaitMs: 0 });
    // Its own Cairn (small limits, its own data dir) on the harness's Temporal server; no worker is needed.
    cairn = await startCairn(
      { ...base, port: 0, temporalAddress: h.temporal.address, taskQueue: `cairn-overload-${process.pid}`, embeddedWorker: false },
      { log: pino({ level: process.env.CAIRN_TEST_LOG ?? 'silent' }) },
    );
    api = new Api(cairn.url, cairn.adminApiKey);
    fakes = await startFakes();
    const models = await useFakeProviders(api, fakes);
    ds = (await api.post('/datasets', { name: 'overload', embedding_model: models.embedding })).body.data.id;
    const doc = (await upload(api, ds, [{ name: 'trails.txt', bytes: Buffer.from('x') }])).body.data[0].id;
    for (const content of [...CORPUS, ...FILLER]) {
      const res = await api.post(`/datasets/${ds}/documents/${doc}/chunks`, { content });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
  });

  after(async () => {
    await cairn?.stop();
    await fakes?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const retrieve = (question: string) => api.post('/retrieval', { dataset_ids: [ds], question, similarity_threshold: 0 });
  const timedHealthz = async () => {
    const start = performance.now();
    const res = await api.get('/system/healthz');
    return { res, ms: performance.now() - start };
  };

  it('healthz reports the event-loop lag and the resident memory', async () => {
    const { res } = await timedHealthz();
    assert.equal(res.status, 200);
    const { event_loop, rss_mb } = res.body;
    for (const key of ['mean_ms', 'p99_ms', 'max_ms']) assert.ok(Number.isFinite(event_loop[key]) && event_loop[key] >= 0, key);
    assert.ok(event_loop.max_ms >= event_loop.p99_ms && event_loop.p99_ms >= 0);
    assert.ok(Number.isInteger(rss_mb) && rss_mb > 10 && rss_mb < 64 * 1024, String(rss_mb));
  });

  it('a burst beyond capacity gets 503 with Retry-After, the accepted answers are right, healthz and lists stay fast', async () => {
    let bursting = true;
    const health: { res: ApiResponse; ms: number }[] = [];
    const poll = (async () => {
      while (bursting) {
        health.push(await timedHealthz());
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const answers = await Promise.all(Array.from({ length: BURST }, () => retrieve('granite cairns summit')));
    const list = await api.get('/datasets');
    bursting = false;
    await poll;

    const refused = answers.filter((r) => r.status === 503);
    const accepted = answers.filter((r) => r.status === 200);
    assert.ok(refused.length >= 1, `some of ${BURST} were refused: ${answers.map((r) => r.status).join(',')}`);
    assert.ok(accepted.length >= 3, 'the one running and the two queued are answered');
    assert.equal(refused.length + accepted.length, BURST, 'nothing but 200 and 503');
    for (const r of refused) {
      assert.match(r.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.equal(r.body.code, 503);
      assert.match(r.body.message, /^Service busy: the queue is full; .*CAIRN_MAX_INFLIGHT/);
      assert.deepEqual(Object.keys(r.body).sort(), ['code', 'message']);
    }
    for (const r of accepted) {
      assert.equal(r.body.code, 0);
      assert.match(r.body.data.chunks[0].content, /^Granite cairns mark the summit trail/);
    }
    assert.equal(list.status, 200, 'a light route is never refused');
    assert.ok(health.length >= 1);
    for (const { res, ms } of health) {
      assert.equal(res.status, 200);
      assert.ok(ms < 1500, `healthz answered in ${Math.round(ms)} ms during the burst`);
    }
  });

  it('after the burst everything answers 200 again', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await retrieve('lighthouse weather');
      assert.equal(res.status, 200);
      assert.match(res.body.data.chunks[0].content, /lighthouse keeper/);
    }
    assert.equal((await timedHealthz()).res.status, 200);
  });
});
