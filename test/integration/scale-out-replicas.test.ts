import assert from 'node:assert/strict';
import { stepComponentOf } from '../../src/pipelines/run-types.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { loadConfig, type Config } from '../../src/config.js';
import { startCairn, type Cairn } from '../../src/server.js';
import { startDevServer, type DevServer } from '../../src/engine/dev-server.js';
import { workflowIds } from '../../src/engine/task-queues.js';
import { echoAnswer, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import { scaleOutEnv } from '../support/meta-store.js';
import { Api, eventually } from './client.js';
import { addModelServer } from './chat-helpers.js';
import { createAgent, llmCanvas } from './agent-helpers.js';
import { getDoc, longText, upload, waitForRun } from './documents-helpers.js';
import { startWorkerProcess, type WorkerProcess } from './worker-process.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/**
 * The scale-out topology on one machine: one Temporal dev server, two API replicas (`cairn start
 * --no-worker`: startCairn without an embedded worker, each on a data directory of its own) and two
 * `cairn worker` processes (each on its own data directory too), all on one PostgreSQL database, one
 * Milvus database and one S3 bucket. Nothing travels between them through local files.
 */
describe('scale-out: two API replicas and two workers on PostgreSQL, Milvus and S3', function () {
  this.timeout(300_000);
  const taskQueue = `cairn-replicas-${process.pid}`;
  const dirs: string[] = [];
  let env: Record<string, string>;
  let temporalServer: DevServer;
  let connection: Connection;
  let client: Client;
  let replicas: Cairn[] = [];
  let workers: WorkerProcess[] = [];
  let a: Api;
  let b: Api;
  let fake: FakeOpenAI;

  const dataDir = (name: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cairn-${name}-`));
    dirs.push(dir);
    return dir;
  };
  const configFor = (name: string): Config => ({
    ...loadConfig({ ...process.env, ...env, CAIRN_DATA_DIR: dataDir(name) }),
    port: 0,
    temporalAddress: temporalServer.address,
    taskQueue,
    embeddedWorker: false,
  });

  /** The process ids of the workers that ran each activity of a workflow, once it has ended, by activity name. */
  async function activityWorkers(workflowId: string): Promise<{ activity: string; pid: number; attempt: number }[]> {
    const handle = client.workflow.getHandle(workflowId);
    // Temporal records an activity's start in the history when the activity ends: wait for all of them.
    await handle.result();
    const history = await handle.fetchHistory();
    const events: HistoryEvent[] = history.events ?? [];
    // A run's steps are one activity type (runPipelineStep), each named by its activity id.
    const name = (a: { activityId?: string | null; activityType?: { name?: string | null } | null }) => stepComponentOf(a.activityId) ?? a.activityType!.name!;
    const scheduled = new Map(events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => [Number(e.eventId), name(e.activityTaskScheduledEventAttributes!)]));
    return events
      .filter((e) => e.activityTaskStartedEventAttributes)
      .map((e) => {
        const started = e.activityTaskStartedEventAttributes!;
        return { activity: scheduled.get(Number(started.scheduledEventId))!, pid: pidOf(started.identity), attempt: started.attempt ?? 1 };
      });
  }
  const workerPids = () => workers.map((w) => w.child.pid!);

  before(async function () {
    this.timeout(180_000);
    // The model servers and the fake are on loopback: the SSRF guard must let every process reach them.
    process.env.CAIRN_ALLOW_PRIVATE_URLS = 'true';
    const rootDir = loadConfig().rootDir;
    const temporalDir = dataDir('temporal');
    [env, temporalServer, fake] = await Promise.all([
      scaleOutEnv(),
      startDevServer({ rootDir, dbFile: path.join(temporalDir, 'temporal.db'), port: 0 }),
      startFakeOpenAI({ answer: echoAnswer }),
    ]);
    connection = await Connection.connect({ address: temporalServer.address });
    client = new Client({ connection });
    const log = pino({ level: process.env.CAIRN_TEST_LOG ?? 'silent' });
    // Replicas and workers start together on the empty installation, as an orchestrator starts them.
    const workerEnv = { ...env, CAIRN_ALLOW_PRIVATE_URLS: 'true' };
    [replicas, workers] = await Promise.all([
      Promise.all([startCairn(configFor('api-a'), { log }), startCairn(configFor('api-b'), { log })]),
      Promise.all(['worker-1', 'worker-2'].map((name) => startWorkerProcess(configFor(name), temporalServer.address, workerEnv))),
    ]);
    const adminKeys = replicas.map((r) => r.adminApiKey).filter(Boolean);
    assert.equal(adminKeys.length, 1, 'exactly one replica created the admin and its key');
    a = new Api(replicas[0]!.url, adminKeys[0]);
    b = new Api(replicas[1]!.url, adminKeys[0]);
  });

  after(async () => {
    for (const r of replicas) await r.stop();
    for (const w of workers) await w.stop();
    await fake?.close();
    await connection?.close();
    await temporalServer?.stop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a document uploaded through replica A parses on a worker and is retrievable through replica B', async () => {
    const text = 'Granite cairns mark the trail across the high moor.\n\nThe river crossing floods every spring, so hikers take the upper bridge.';
    const ds = await a.post('/datasets', { name: 'replicated moor' });
    assert.equal(ds.status, 200, JSON.stringify(ds.body));
    const datasetId = ds.body.data.id;
    const up = await upload(a, datasetId, [{ name: 'moor.txt', bytes: Buffer.from(text) }]);
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const documentId = up.body.data[0].id;
    assert.equal((await a.post(`/datasets/${datasetId}/chunks`, { document_ids: [documentId] })).status, 200);

    const done = await waitForRun(b, datasetId, documentId);
    assert.equal(done.run, 'DONE', done.progress_msg);
    const ran = await activityWorkers(workflowIds.ingestDocument({ id: documentId, dataset_id: datasetId, run_seq: 1, pipeline_id: null }));
    for (const step of ['ChunkMethod', 'Index']) assert.ok(ran.some((r) => r.activity === step), `${step} ran`);
    for (const r of ran) assert.ok(workerPids().includes(r.pid), `${r.activity} ran in a worker process (pid ${r.pid}), not in an API replica (pid ${process.pid})`);

    const chunks = await b.get(`/datasets/${datasetId}/documents/${documentId}/chunks`);
    assert.equal(chunks.status, 200, JSON.stringify(chunks.body));
    assert.equal(chunks.body.data.chunks.length, done.chunk_count);
    const found = await b.post('/retrieval', { dataset_ids: [datasetId], question: 'which bridge do hikers take in spring?', similarity_threshold: 0 });
    assert.equal(found.status, 200, JSON.stringify(found.body));
    assert.match(found.body.data.chunks[0].content, /upper bridge/);
    const file = await fetch(`${b.url}/api/v1/datasets/${datasetId}/documents/${documentId}`, { headers: { Authorization: `Bearer ${b.key}` } });
    assert.equal(file.status, 200);
    assert.equal(Buffer.from(await file.arrayBuffer()).toString(), text, 'replica B serves the file replica A stored');
  });

  it('an agent run started on A streams its tokens to the caller on A while its activities run on a worker', async () => {
    await addModelServer(a, fake.baseUrl);
    const agentId = await createAgent(a, llmCanvas());
    fake.behaviour.tokenDelayMs = 150;
    const question = 'which stones mark the trail over the moor';
    const frames = await timedSse(a, '/agents/chat/completions', { agent_id: agentId, query: question, stream: true });
    assert.equal(frames.at(-1)?.data, '[DONE]');

    const messages = frames.filter((f) => f.data.event === 'message');
    assert.equal(messages.map((f) => f.data.data.content).join(''), `Echo: ${question}`);
    assert.ok(messages.length >= 5, `the answer arrives as ${messages.length} deltas, not at once`);
    // The model takes 150 ms per token: a stream relayed as it is produced spreads over the whole answer.
    const spread = messages.at(-1)!.at - messages[0]!.at;
    assert.ok(spread >= 600, `the deltas reached the caller over ${spread} ms as the model produced them`);

    const sessionId = frames[0]!.data.session_id;
    const ran = await activityWorkers(workflowIds.agentRun(agentId, sessionId));
    assert.ok(ran.length > 0);
    for (const r of ran) assert.ok(workerPids().includes(r.pid), `${r.activity} ran in a worker process (pid ${r.pid})`);
    const session = (await b.get(`/agents/${agentId}/sessions/${sessionId}`)).body.data;
    assert.equal(session.message.at(-1).content, `Echo: ${question}`, 'replica B reads the session the run recorded');
  });

  it('a worker killed mid-parse loses nothing: the other worker finishes DONE with the chunks of an uninterrupted parse, none twice', async () => {
    const ds = (await a.post('/datasets', { name: 'kill a worker' })).body.data.id;
    const bytes = longText(400);
    const [reference, victim] = (await upload(a, ds, [{ name: 'reference.txt', bytes }, { name: 'interrupted.txt', bytes }])).body.data;

    await a.post(`/datasets/${ds}/chunks`, { document_ids: [reference.id] });
    const uninterrupted = await waitForRun(b, ds, reference.id, undefined, 150_000);
    assert.equal(uninterrupted.run, 'DONE', uninterrupted.progress_msg);

    await a.post(`/datasets/${ds}/chunks`, { document_ids: [victim.id] });
    const handle = client.workflow.getHandle(workflowIds.ingestDocument({ id: victim.id, dataset_id: ds, run_seq: 1, pipeline_id: null }));
    // Embedding, by progress, and the worker that runs it, by Temporal's record of the pending step.
    const running = await eventually(async () => {
      const doc = await getDoc(b, ds, victim.id);
      // Above 0.45 at least one batch of vectors is saved: the retry must resume after it, not add to it.
      if (doc.run !== 'RUNNING' || doc.progress <= 0.45) return undefined;
      const pending = (await handle.describe()).raw.pendingActivities ?? [];
      const embed = pending.find((p) => stepComponentOf(p.activityId) === 'Index' && p.lastWorkerIdentity);
      return embed ? { progress: doc.progress as number, pid: pidOf(embed.lastWorkerIdentity) } : undefined;
    }, 120_000, 100);
    const victimWorker = workers.find((w) => w.child.pid === running.pid);
    assert.ok(victimWorker, `the embedding runs on worker pid ${running.pid}`);
    const survivor = workers.find((w) => w !== victimWorker)!;
    await victimWorker.kill();
    assert.equal((await getDoc(b, ds, victim.id)).run, 'RUNNING', `killed at progress ${running.progress}`);

    const done = await waitForRun(a, ds, victim.id, undefined, 150_000);
    assert.equal(done.run, 'DONE', done.progress_msg);
    assert.equal(done.chunk_count, uninterrupted.chunk_count);
    const ran = await activityWorkers(handle.workflowId);
    // Embedding and indexing are one step ('parse-in-two-steps'): its retry resumes after the saved batches.
    const embed = ran.find((r) => r.activity === 'Index')!;
    assert.equal(embed.pid, survivor.child.pid, 'the survivor finished the embedding and the indexing');
    assert.ok(embed.attempt >= 2, 'as a retry of the killed attempt');

    const [got, expected] = [await allChunks(b, ds, victim.id), await allChunks(b, ds, reference.id)];
    assert.equal(got.length, done.chunk_count, 'the index holds exactly chunk_count chunks');
    assert.equal(new Set(got.map((c) => c.id)).size, got.length, 'no chunk id twice');
    assert.deepEqual(got.map((c) => c.content).sort(), expected.map((c) => c.content).sort(), 'the same chunks as the uninterrupted parse, none twice');
  });
});

/** `pid@host`, the identity a Temporal worker reports by default. */
function pidOf(identity: string | null | undefined): number {
  const pid = Number(/^(\d+)@/.exec(identity ?? '')?.[1]);
  assert.ok(pid > 0, `a worker identity of the form pid@host: ${identity}`);
  return pid;
}

/** Every chunk of a document, through the paged API. */
async function allChunks(api: Api, datasetId: string, documentId: string): Promise<{ id: string; content: string }[]> {
  const all: { id: string; content: string }[] = [];
  for (let page = 1; ; page++) {
    const res = await api.get(`/datasets/${datasetId}/documents/${documentId}/chunks`, { page, page_size: 100 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    all.push(...res.body.data.chunks);
    if (res.body.data.chunks.length < 100) return all;
  }
}

/** POSTs and reads the answer's server-sent events as they arrive, each with the time it arrived. */
async function timedSse(api: Api, urlPath: string, body: unknown): Promise<{ at: number; data: any }[]> {
  const res = await fetch(new URL('/api/v1' + urlPath, api.url), {
    method: 'POST',
    headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const frames: { at: number; data: any }[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 2);
      if (!block) continue;
      assert.ok(block.startsWith('data:'), `not an SSE data frame: ${block}`);
      const payload = block.slice('data:'.length).trim();
      frames.push({ at: Date.now(), data: payload === '[DONE]' ? payload : JSON.parse(payload) });
    }
  }
  return frames;
}
