import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { Client, Connection } from '@temporalio/client';
import { Api, eventually } from './client.js';
import { startHarness, type Harness } from './harness.js';
import { upload, waitForRun } from './documents-helpers.js';
import { addModelServer } from './chat-helpers.js';
import { createAgent, messageCanvas, runStream, streamedText } from './agent-helpers.js';
import { runCairn } from './cairn-process.js';
import { lastUserMessage, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import { sharedPostgres } from '../support/postgres.js';
import { startS3Server, type S3TestServer } from '../support/s3-server.js';
import { loadConfig } from '../../src/config.js';
import { startCairn, type Cairn } from '../../src/server.js';
import { freePort } from '../../src/engine/dev-server.js';
import { workflowIds } from '../../src/engine/task-queues.js';

const EMBED = 'fake-embed@fake@OpenAI-API-Compatible';
const CHAT = 'fake-chat@fake@OpenAI-API-Compatible';
const BUCKET = 'cairn-migrated';
const PREFIX = 'moved';
const TEXT = 'Granite cairns mark the trail across the high moor.\n\nThe river crossing floods every spring, so hikers take the upper bridge.';

/** What the source installation answered, compared with what the migrated one answers. */
interface Before {
  email: string;
  apiKey: string;
  loginToken: string;
  datasetId: string;
  documentId: string;
  retrieval: { id: string; content: string; similarity: number }[];
  chatId: string;
  chatSessionId: string;
  chatMessages: unknown[];
  agentId: string;
  agentSessionId: string;
  agentMessages: unknown[];
  memoryId: string;
  memoryMessages: unknown[];
  memorySearch: { message_id: number; content: string }[];
}

const ok = <T extends { status: number; body: any }>(res: T, what: string): T => {
  assert.equal(res.status, 200, `${what}: ${JSON.stringify(res.body)}`);
  return res;
};

/** A user with an API key, a parsed document, a chat session with a turn, an agent run, a memory with an extracted item. */
async function buildInstallation(h: Harness, fake: FakeOpenAI): Promise<Before> {
  const email = `migrate-${process.pid}@example.com`;
  const anon = new Api(h.url);
  ok(await anon.post('/users', { email, nickname: 'mover', password: 'pw-123456' }), 'register');
  const loginToken = ok(await anon.post('/auth/login', { email, password: 'pw-123456' }), 'login').headers.get('authorization')!;
  const apiKey = ok(await new Api(h.url, loginToken).post('/system/tokens'), 'api key').body.data.token;
  const api = new Api(h.url, apiKey);
  await addModelServer(api, fake.baseUrl, { embedding: 'fake-embed' });

  const datasetId = ok(await api.post('/datasets', { name: 'Moor notes' }), 'dataset').body.data.id;
  const documentId = ok(await upload(api, datasetId, [{ name: 'moor.txt', bytes: Buffer.from(TEXT) }]), 'upload').body.data[0].id;
  ok(await api.post(`/datasets/${datasetId}/chunks`, { document_ids: [documentId] }), 'parse');
  assert.equal((await waitForRun(api, datasetId, documentId)).run, 'DONE');
  ok(await api.post(`/datasets/${datasetId}/documents/${documentId}/chunks`, { content: 'A hand-written chunk about the upper bridge.' }), 'add chunk');
  const retrieval = ok(await api.post('/retrieval', { dataset_ids: [datasetId], question: 'granite cairns upper bridge', similarity_threshold: 0 }), 'retrieval')
    .body.data.chunks.map((c: any) => ({ id: c.id, content: c.content, similarity: c.similarity }));
  assert.ok(retrieval.length >= 2, JSON.stringify(retrieval));

  const chatId = ok(await api.post('/chats', { name: 'Moor guide', dataset_ids: [datasetId] }), 'chat').body.data.id;
  const chatSessionId = ok(await api.post(`/chats/${chatId}/sessions`, { name: 'first' }), 'session').body.data.id;
  ok(await api.post(`/chats/${chatId}/completions`, { question: 'Which bridge do hikers take?', session_id: chatSessionId, stream: false }), 'completion');
  const chatMessages = ok(await api.get(`/chats/${chatId}/sessions`, { id: chatSessionId }), 'sessions').body.data[0].messages;
  assert.ok(chatMessages.length >= 3, JSON.stringify(chatMessages));

  const agentId = await createAgent(api, messageCanvas('The upper bridge is open.'), 'Trail agent');
  const { events } = await runStream(api, { agent_id: agentId, query: 'is the bridge open?' });
  assert.equal(streamedText(events), 'The upper bridge is open.');
  const agentSessionId = events[0].session_id;
  const agentMessages = ok(await api.get(`/agents/${agentId}/sessions/${agentSessionId}`), 'agent session').body.data.message;

  const memoryId = ok(await api.post('/memories', { name: 'Trail memory', memory_type: ['raw', 'semantic'], embd_id: EMBED, llm_id: CHAT }), 'memory').body.data.id;
  for (const [user_input, agent_response] of [['Where do hikers cross?', 'At the upper bridge over the river.'], ['What marks the trail?', 'Granite cairns.']]) {
    const [{ message_id }] = ok(await api.post('/messages', { memory_id: [memoryId], agent_id: agentId, session_id: 's1', user_input, agent_response }), 'add message').body.data;
    await eventually(async () => {
      const listed = (await api.get(`/memories/${memoryId}`, { page_size: 100 })).body.data.messages.message_list;
      return listed.find((m: any) => m.message_id === message_id)?.task?.progress === 1;
    });
  }
  const { memoryMessages, memorySearch } = await memorySnapshot(api, memoryId);
  assert.ok(memoryMessages.some((m: any) => m.extract?.length), `an extracted item: ${JSON.stringify(memoryMessages)}`);
  assert.ok(memorySearch.length >= 2, JSON.stringify(memorySearch));
  return { email, apiKey, loginToken, datasetId, documentId, retrieval, chatId, chatSessionId, chatMessages, agentId, agentSessionId, agentMessages, memoryId, memoryMessages, memorySearch };
}

/** A memory's listing (messages, tasks, extracted items) and a search over it. */
async function memorySnapshot(api: Api, memoryId: string): Promise<Pick<Before, 'memoryMessages' | 'memorySearch'>> {
  const memoryMessages = ok(await api.get(`/memories/${memoryId}`, { page_size: 100 }), 'memory messages').body.data.messages.message_list;
  const memorySearch = ok(await api.get('/messages/search', { query: 'granite cairns trail', memory_id: memoryId, similarity_threshold: 0 }), 'memory search')
    .body.data.map((m: any) => ({ message_id: m.message_id, content: m.content }));
  return { memoryMessages, memorySearch };
}

describe('cairn migrate-to: an embedded installation moves to PostgreSQL, S3 and a new data dir', function () {
  this.timeout(300_000);
  let source: Harness;
  let fake: FakeOpenAI;
  let s3: S3TestServer;
  let databaseUrl: string;
  let targetDir: string;
  let target: Cairn | undefined;
  let was: Before;
  let migrated: { code: number; stdout: string; stderr: string };
  let api: Api;

  /** The environment of the command: the source in CAIRN_DATA_DIR, the target's S3 settings. */
  const commandEnv = (extra: Record<string, string> = {}) => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...s3.env(BUCKET, PREFIX), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', CAIRN_DATA_DIR: source.config.dataDir, LOG_LEVEL: 'warn', ...extra };
    for (const name of ['CAIRN_BLOBS', 'CAIRN_DATABASE_URL', 'TEMPORAL_ADDRESS', 'CAIRN_TASK_QUEUE']) if (!(name in extra)) delete env[name];
    return env;
  };
  const flags = (blobs = `s3://${BUCKET}/${PREFIX}`) => ['migrate-to', '--database-url', databaseUrl, '--blobs', blobs, '--index', 'embedded', '--data-dir', targetDir];

  before(async () => {
    fake = await startFakeOpenAI({
      dims: 64,
      answer: (messages) => {
        const system = messages.find((m) => m.role === 'system')?.content ?? '';
        if (!system.includes('## OUTPUT FORMAT')) return { answer: 'Hikers take the upper bridge.' };
        const semantic = lastUserMessage(messages).includes('upper bridge') ? [{ content: 'The river is crossed at the upper bridge.' }] : [];
        return { answer: JSON.stringify({ semantic, episodic: [], procedural: [] }) };
      },
    });
    [s3, databaseUrl] = await Promise.all([startS3Server(), sharedPostgres().then((pg) => pg.createDatabase('cairn_migrated'))]);
    await s3.createBucket(BUCKET);
    targetDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-migrated-'));
    source = await startHarness();
    was = await buildInstallation(source, fake);
  });

  after(async () => {
    await target?.stop();
    await source?.cairn.stop().catch(() => undefined);
    await source?.worker.stop().catch(() => undefined);
    await source?.temporal.stop().catch(() => undefined);
    await s3?.stop();
    await fake?.close();
    for (const dir of [source?.config.dataDir, targetDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses while Cairn runs on the source data dir', async () => {
    const res = await runCairn(flags(), commandEnv());
    assert.equal(res.code, 1, res.stdout + res.stderr);
    assert.match(res.stderr, /Cairn is already running with data dir .* stop it before migrating/);
  });

  it('refuses while a workflow is open (history is not migrated), naming it', async () => {
    // A memory message added while no worker runs: its extraction workflow stays open.
    await source.worker.stop();
    const api = new Api(source.url, was.apiKey);
    ok(await api.post('/messages', { memory_id: [was.memoryId], agent_id: was.agentId, session_id: 's2', user_input: 'late', agent_response: 'turn' }), 'add message');
    Object.assign(was, await memorySnapshot(api, was.memoryId));
    await source.cairn.stop();
    const res = await runCairn(flags(), commandEnv({ TEMPORAL_ADDRESS: source.temporal.address, CAIRN_TASK_QUEUE: source.config.taskQueue }));
    assert.equal(res.code, 1, res.stdout + res.stderr);
    const workflowId = workflowIds.memoryExtractionBatches(was.memoryId);
    assert.match(res.stderr, new RegExp(`runs are in progress[\\s\\S]*workflow ${workflowId} \\(memoryExtractionBatches\\) is open[\\s\\S]*let them finish`));

    // Stopped by the operator; the message stays (its task never ends), and moves like any other.
    const connection = await Connection.connect({ address: source.temporal.address });
    await new Client({ connection }).workflow.getHandle(workflowId).terminate('the migration test stops it');
    await connection.close();
    await source.temporal.stop();
  });

  it('a run that fails half-way (missing bucket) exits 1 with the reason, and a rerun copies over it and verifies every count', async () => {
    const failed = await runCairn(flags('s3://no-such-bucket/x'), commandEnv());
    assert.equal(failed.code, 1, failed.stdout + failed.stderr);
    // Stopped at the files, after the metadata (the output of both streams says where it stopped if not).
    assert.match(failed.stdout + failed.stderr, /metadata: \d+ rows[\s\S]*copying the file datasets\/.* failed: .*NoSuchBucket/);

    migrated = await runCairn(flags(), commandEnv());
    assert.equal(migrated.code, 0, migrated.stdout + migrated.stderr);
    assert.match(migrated.stdout, /unfinished migration of this source/);
    assert.match(migrated.stdout, /checking .*temporal\.db for open workflows/);
    assert.match(migrated.stdout, /files: 1\/1 copied/);
    assert.match(migrated.stdout, /chunks: \d+ copied \(1 documents\)/);
    assert.match(migrated.stdout, /messages: \d+ copied \(1 memories/);
    assert.match(migrated.stdout, /migration complete in .* every count matches the source/);
  });

  it('refuses to copy over a finished migration', async () => {
    const res = await runCairn(flags(), commandEnv());
    assert.equal(res.code, 1, res.stdout + res.stderr);
    assert.match(res.stderr, /already holds a finished migration/);
  });

  describe('a Cairn started on the target configuration', () => {
    before(async () => {
      const env = { ...s3.env(BUCKET, PREFIX), CAIRN_DATA_DIR: targetDir, CAIRN_DATABASE_URL: databaseUrl, CAIRN_INDEX: 'embedded', CAIRN_ALLOW_PRIVATE_URLS: 'true' };
      const config = { ...loadConfig(env), port: 0, temporalPort: await freePort(), temporalUiPort: 0, embeddedWorker: false };
      target = await startCairn(config, { log: pino({ level: 'silent' }) });
      api = new Api(target.url, was.apiKey);
    });

    it('accepts the same API key, login token and admin key', async () => {
      assert.equal(ok(await api.get('/users/me'), 'me').body.data.email, was.email);
      assert.equal(ok(await new Api(target!.url, was.loginToken).get('/users/me'), 'me by token').body.data.email, was.email);
      const adminKey = fs.readFileSync(path.join(targetDir, 'admin-api-key'), 'utf8').trim();
      assert.equal(adminKey, source.adminKey);
      ok(await new Api(target!.url, adminKey).get('/users/me'), 'admin');
    });

    it('retrieval returns the same chunks with the same scores', async () => {
      const res = ok(await api.post('/retrieval', { dataset_ids: [was.datasetId], question: 'granite cairns upper bridge', similarity_threshold: 0 }), 'retrieval');
      assert.deepEqual(res.body.data.chunks.map((c: any) => ({ id: c.id, content: c.content, similarity: c.similarity })), was.retrieval);
    });

    it('serves the file from S3, byte for byte', async () => {
      const res = await api.get(`/datasets/${was.datasetId}/documents/${was.documentId}`);
      assert.equal(res.status, 200);
      assert.equal(res.body, TEXT);
    });

    it('keeps the chat session history and the agent with its session', async () => {
      assert.deepEqual(ok(await api.get(`/chats/${was.chatId}/sessions`, { id: was.chatSessionId }), 'sessions').body.data[0].messages, was.chatMessages);
      assert.equal(ok(await api.get(`/agents/${was.agentId}`), 'agent').body.data.title, 'Trail agent');
      assert.deepEqual(ok(await api.get(`/agents/${was.agentId}/sessions/${was.agentSessionId}`), 'agent session').body.data.message, was.agentMessages);
    });

    it('keeps the memory messages with their ids, tasks and extracted items; search finds the same messages', async () => {
      const listed = ok(await api.get(`/memories/${was.memoryId}`, { page_size: 100 }), 'memory').body.data.messages.message_list;
      assert.deepEqual(listed, was.memoryMessages);
      const found = ok(await api.get('/messages/search', { query: 'granite cairns trail', memory_id: was.memoryId, similarity_threshold: 0 }), 'search').body.data;
      assert.deepEqual(found.map((m: any) => ({ message_id: m.message_id, content: m.content })), was.memorySearch);
    });

    it('gives a new memory message an id above every migrated one', async () => {
      const [{ message_id }] = ok(await api.post('/messages', { memory_id: [was.memoryId], agent_id: was.agentId, session_id: 's3', user_input: 'new', agent_response: 'after the move' }), 'add').body.data;
      const highest = Math.max(...(was.memoryMessages as any[]).flatMap((m) => [m.message_id, ...(m.extract ?? []).map((e: any) => e.message_id)]));
      assert.ok(message_id > highest, `${message_id} > ${highest}`);
    });
  });
});
