import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Client, Connection } from '@temporalio/client';
import { callGate, lastUserMessage, startFakeOpenAI, type AnswerScript, type FakeMessage, type FakeOpenAI } from '../fakes/index.js';
import { harness } from './harness.js';
import { Api, eventually, newUser } from './client.js';
import { addModelServer } from './chat-helpers.js';
import { WORKFLOWS, roleTaskQueue, workflowIds, workflowTaskQueue } from '../../src/engine/task-queues.js';
import { startWorkflow } from '../../src/engine/workflow-starts.js';
import { MAX_MEMORY_SIZE } from '../../src/memories/types.js';
import type { Config } from '../../src/config.js';
import { openDatabase, type MetaDb } from '../../src/store/db.js';

const CHAT = 'fake-chat@fake@OpenAI-API-Compatible';
const EMBED = 'fake-embed@fake@OpenAI-API-Compatible';
const DIMS = 64;
const EMPTY = JSON.stringify({ semantic: [], episodic: [], procedural: [] });

/** Extraction answers by a marker word in the conversation; anything else gets empty lists. */
const scripted = new Map<string, string>();
const isExtraction = (messages: FakeMessage[]) => (messages.find((m) => m.role === 'system')?.content ?? '').includes('## OUTPUT FORMAT');
const answers: AnswerScript = (messages) => {
  if (!isExtraction(messages)) return { answer: 'ok' };
  const user = lastUserMessage(messages);
  // Turns of the burst test: one episodic item each, carrying its turn's number when several were asked about at once.
  const burst = [...user.matchAll(/User Input: (burst-\d+)/g)].map((m) => m[1]!);
  if (burst.length) return { answer: JSON.stringify({ episodic: burst.map((b, i) => ({ ...(burst.length > 1 ? { turn: i + 1 } : {}), content: `The user said ${b} aloud.` })) }) };
  for (const [marker, answer] of scripted) if (user.includes(marker)) return { answer };
  return { answer: EMPTY };
};

let seq = 0;
const unique = (name: string) => `${name}-${++seq}-${Date.now() % 100000}`;

function assertError(res: { status: number; body: any }, status: number, message?: RegExp, route?: string) {
  assert.equal(res.status, status, `${route ? `${route}: ` : ''}${JSON.stringify(res.body)}`);
  assert.equal(res.body.code, status);
  if (message) assert.match(res.body.message, message);
}

async function createMemory(api: Api, fields: Record<string, unknown> = {}) {
  const res = await api.post('/memories', { name: unique('mem'), memory_type: ['raw'], embd_id: EMBED, llm_id: CHAT, ...fields });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.message, true);
  return res.body.data;
}

async function addMessage(api: Api, memoryIds: string[], fields: Record<string, unknown> = {}) {
  const res = await api.post('/messages', { memory_id: memoryIds, agent_id: 'agent-1', session_id: 'session-1', user_input: 'hello', agent_response: 'hi there', ...fields });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data as { memory_id: string; message_id: number }[];
}

async function listMessages(api: Api, memoryId: string, query: Record<string, unknown> = {}) {
  const res = await api.get(`/memories/${memoryId}`, query);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data.messages as { message_list: any[]; total_count: number };
}

/** Waits until the raw message's extraction task ended (progress 1 or -1) and returns the listed message. */
async function waitTask(api: Api, memoryId: string, messageId: number, timeoutMs = 30_000) {
  return eventually(async () => {
    const found = (await listMessages(api, memoryId, { page_size: 100 })).message_list.find((m) => m.message_id === messageId);
    return found && (found.task.progress === 1 || found.task.progress === -1) ? found : undefined;
  }, timeoutMs, 100);
}

let ledger: MetaDb | undefined;

/**
 * The memory index's stored total and a recount of its messages, read straight from its tables: the
 * embedded index's in the data dir's database file, or, with the index on Milvus, the ledger in the
 * metadata database (src/store/milvus-memory-ledger.ts).
 */
async function sizeTotals(memoryId: string, config: Config) {
  if (config.index.kind === 'milvus') {
    ledger ??= await openDatabase(config.databaseUrl);
    const db = ledger.kysely as any;
    const stored = await db.selectFrom('memory_message_totals').select(['bytes', 'messages']).where('memory_id', '=', memoryId).executeTakeFirst();
    const recount = await db.selectFrom('memory_messages').select((eb: any) => [eb.fn.coalesce(eb.fn.sum('size'), eb.lit(0)).as('bytes'), eb.fn.countAll().as('messages')])
      .where('memory_id', '=', memoryId).executeTakeFirstOrThrow();
    const numbers = (r: { bytes: unknown; messages: unknown }) => ({ bytes: Number(r.bytes), messages: Number(r.messages) });
    return { stored: stored ? numbers(stored) : { bytes: 0, messages: 0 }, recount: numbers(recount) };
  }
  const db = new Database(path.join(config.dataDir, 'cairn.db'), { readonly: true });
  try {
    const stored = db.prepare('SELECT bytes, messages FROM memory_usage WHERE memory_id = ?').get(memoryId) as { bytes: number; messages: number } | undefined;
    const recount = db.prepare('SELECT coalesce(sum(size), 0) AS bytes, count(*) AS messages FROM memory_rows WHERE memory_id = ?').get(memoryId) as { bytes: number; messages: number };
    return { stored: stored ?? { bytes: 0, messages: 0 }, recount };
  } finally {
    db.close();
  }
}

const rawSize = (userInput: string, agentResponse: string) => Buffer.byteLength(`User Input: ${userInput}\nAgent Response: ${agentResponse}`) + DIMS * 8;

describe('memories over HTTP', function () {
  this.timeout(120_000);
  let fake: FakeOpenAI;
  let api: Api;
  let userId: string;
  let cairnConfig: Config;

  before(async () => {
    cairnConfig = (await harness()).config;
    fake = await startFakeOpenAI({ answer: answers, dims: DIMS });
    const user = await newUser('memories');
    ({ api, userId } = user);
    await addModelServer(api, fake.baseUrl, { embedding: 'fake-embed' });
  });
  after(async () => {
    await fake.close();
    await ledger?.close();
    ledger = undefined;
  });

  describe('memories CRUD', () => {
    it('create: defaults (FIFO, 5 MiB, me, table), canonical type order, a system prompt assembled from the types, and "message": true', async () => {
      const mem = await createMemory(api, { memory_type: ['episodic', 'raw', 'semantic'] });
      assert.match(mem.id, /^[0-9a-f]{32}$/);
      assert.deepEqual(mem.memory_type, ['raw', 'semantic', 'episodic']);
      assert.equal(mem.memory_size, 5 * 1024 * 1024);
      assert.equal(mem.forgetting_policy, 'FIFO');
      assert.equal(mem.permission, 'me');
      assert.equal(mem.permissions, 'me');
      assert.equal(mem.storage_type, 'table');
      assert.equal(mem.embd_id, EMBED);
      assert.equal(mem.llm_id, CHAT);
      assert.equal(mem.tenant_id, userId);
      assert.equal(mem.owner_name, 'memories');
      assert.equal(mem.user_prompt, '');
      assert.ok(mem.temperature >= 0 && mem.temperature <= 1);
      assert.match(mem.system_prompt, /### SEMANTIC MEMORY[\s\S]*### EPISODIC MEMORY[\s\S]*## OUTPUT REQUIREMENTS[\s\S]*## OUTPUT FORMAT/);
      assert.doesNotMatch(mem.system_prompt, /PROCEDURAL MEMORY/);
      assert.ok(Number.isInteger(mem.create_time) && Math.abs(mem.create_time - Date.now() / 1000) < 60, 'Unix seconds');
    });

    it('create: a taken name (case-insensitive) gets a (1), (2) suffix, per tenant', async () => {
      const name = unique('Notes');
      assert.equal((await createMemory(api, { name })).name, name);
      assert.equal((await createMemory(api, { name: name.toLowerCase() })).name, `${name.toLowerCase()}(1)`);
      assert.equal((await createMemory(api, { name })).name, `${name}(2)`);
    });

    it('create: name required, not blank, at most 128 characters, BMP only; memory_type a non-empty list of raw/semantic/episodic/procedural', async () => {
      const base = { memory_type: ['raw'], embd_id: EMBED, llm_id: CHAT };
      assertError(await api.post('/memories', base), 400, /name/);
      assertError(await api.post('/memories', { ...base, name: '   ' }), 400, /name cannot be empty/);
      assertError(await api.post('/memories', { ...base, name: 'x'.repeat(129) }), 400, /exceeds limit of 128/);
      assert.equal((await api.post('/memories', { ...base, name: `${unique('y')}${'y'.repeat(100)}`.slice(0, 128) })).status, 200, '128 is fine');
      assertError(await api.post('/memories', { ...base, name: 'stones 🪨' }), 400, /BMP/);
      assertError(await api.post('/memories', { ...base, name: unique('t'), memory_type: 'raw' }), 400, /must be a list/);
      assertError(await api.post('/memories', { ...base, name: unique('t'), memory_type: [] }), 400, /must not be empty/);
      assertError(await api.post('/memories', { ...base, name: unique('t'), memory_type: ['raw', 'dreams'] }), 400, /'dreams' is not supported/);
      assertError(await api.post('/memories', { name: unique('t'), memory_type: ['raw'], llm_id: CHAT }), 400, /embd_id/);
    });

    it('create: embd_id and llm_id are model@factory ids (at most 255 characters) of configured models of the right type', async () => {
      const post = (fields: Record<string, unknown>) => api.post('/memories', { name: unique('m'), memory_type: ['raw'], embd_id: EMBED, llm_id: CHAT, ...fields });
      assertError(await post({ embd_id: 'no-factory' }), 400, /`embd_id` no-factory: .*<model_name>@<provider>/);
      assertError(await post({ embd_id: `${'e'.repeat(250)}@OpenAI-API-Compatible` }), 400, /`embd_id` must be at most 255 characters/);
      assertError(await post({ embd_id: 'missing@OpenAI-API-Compatible' }), 400, /`embd_id` .*not found/);
      assertError(await post({ embd_id: CHAT }), 400, /`embd_id` .*not found for model type embedding/);
      assertError(await post({ llm_id: EMBED }), 400, /`llm_id` .*not found for model type chat/);
      assertError(await post({ llm_id: 'gpt@NoSuchFactory' }), 400, /`llm_id`/);
      const twoPart = await post({ embd_id: 'fake-embed@OpenAI-API-Compatible', llm_id: 'fake-chat@OpenAI-API-Compatible' });
      assert.equal(twoPart.status, 200, JSON.stringify(twoPart.body));
      assert.equal(twoPart.body.data.embd_id, 'fake-embed@OpenAI-API-Compatible', 'the caller\'s spelling is kept');
    });

    it('update: every field, with the limits: memory_size in (0, 10 MiB], temperature 0..1, FIFO only, permission me/team, avatar ≤ 65535', async () => {
      const mem = await createMemory(api);
      const put = (body: Record<string, unknown>) => api.put(`/memories/${mem.id}`, body);
      const ok = await put({ name: unique('renamed'), description: 'd', memory_size: MAX_MEMORY_SIZE, temperature: 0, forgetting_policy: 'FIFO', permission: 'team', user_prompt: 'Focus on food.', avatar: 'aGVsbG8=', llm_id: 'fake-chat@OpenAI-API-Compatible' });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.message, true);
      assert.equal(ok.body.data.memory_size, MAX_MEMORY_SIZE);
      assert.equal(ok.body.data.permission, 'team');
      assert.equal(ok.body.data.user_prompt, 'Focus on food.');
      assert.equal(ok.body.data.llm_id, 'fake-chat@OpenAI-API-Compatible');
      assertError(await put({ memory_size: 0 }), 400, /Memory size should be in range \(0, 10485760\]/);
      assertError(await put({ memory_size: MAX_MEMORY_SIZE + 1 }), 400, /Memory size should be in range/);
      assertError(await put({ temperature: 1.5 }), 400, /Temperature should be in range \[0, 1\]/);
      assertError(await put({ forgetting_policy: 'LRU' }), 400, /Forgetting policy 'LRU' is not supported/);
      assertError(await put({ permission: 'everyone' }), 400, /Unknown permission 'everyone'/);
      assertError(await put({ avatar: 'a'.repeat(65536) }), 400, /avatar/);
      assertError(await put({ name: '' }), 400, /name cannot be empty/);
      assertError(await put({}), 400, /No properties/);
      assertError(await put({ llm_id: EMBED }), 400, /llm_id/);
      assertError(await put({ tenant_id: 'x' }), 400, /tenant_id/);
      const after = (await api.get(`/memories/${mem.id}/config`)).body.data;
      assert.equal(after.temperature, 0, 'refused updates changed nothing');
    });

    it('update: the system prompt may be edited, except its OUTPUT REQUIREMENTS and OUTPUT FORMAT parts (400 naming the part)', async () => {
      const mem = await createMemory(api, { memory_type: ['raw', 'semantic'] });
      const edited = mem.system_prompt.replace(/^You are the memory[^\n]*/, 'You remember facts about gardening.');
      const ok = await api.put(`/memories/${mem.id}`, { system_prompt: edited });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.ok(ok.body.data.system_prompt.startsWith('You remember facts about gardening.'));
      assertError(await api.put(`/memories/${mem.id}`, { system_prompt: edited.replace('at most 5 items', 'at most 9 items') }), 400, /OUTPUT REQUIREMENTS/);
      assertError(await api.put(`/memories/${mem.id}`, { system_prompt: edited.replace('"episodic": [', '"events": [') }), 400, /OUTPUT FORMAT/);
      assertError(await api.put(`/memories/${mem.id}`, { system_prompt: 'Just remember things.' }), 400, /OUTPUT REQUIREMENTS part is missing/);
      assert.equal((await api.get(`/memories/${mem.id}/config`)).body.data.system_prompt, ok.body.data.system_prompt);
    });

    it('update: embd_id may change only while the memory is empty', async () => {
      const mem = await createMemory(api);
      const changed = await api.put(`/memories/${mem.id}`, { embd_id: 'fake-embed@OpenAI-API-Compatible' });
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      await addMessage(api, [mem.id]);
      assertError(await api.put(`/memories/${mem.id}`, { embd_id: EMBED }), 400, /Can't update \['embd_id'\] when memory isn't empty/);
    });

    it('list: {memory_list, total_count}, page_size 50 by default, filters memory_type / tenant_id / storage_type / keywords', async () => {
      const { api: other, userId: otherId } = await newUser('memories-list');
      await addModelServer(other, fake.baseUrl, { embedding: 'fake-embed' });
      const tag = unique('zz');
      for (let i = 0; i < 50; i++) await createMemory(other, { name: `${tag}-raw-${i}` });
      const semantic = await createMemory(other, { name: `${tag}-sem`, memory_type: ['semantic', 'episodic'] });
      const first = await other.get('/memories');
      assert.equal(first.status, 200);
      assert.equal(first.body.message, true);
      assert.equal(first.body.data.total_count, 51);
      assert.equal(first.body.data.memory_list.length, 50);
      assert.equal(first.body.data.memory_list[0].id, semantic.id, 'newest first');
      assert.equal((await other.get('/memories', { page: 2 })).body.data.memory_list.length, 1);
      const byType = await other.get('/memories', { memory_type: 'episodic,procedural' });
      assert.deepEqual(byType.body.data.memory_list.map((m: any) => m.id), [semantic.id]);
      assert.equal((await other.get('/memories', { memory_type: ['raw', 'semantic'] })).body.data.total_count, 51, 'any of the given types');
      assert.equal((await other.get('/memories', { tenant_id: otherId })).body.data.total_count, 51);
      assert.equal((await other.get('/memories', { tenant_id: userId })).body.data.total_count, 0, "another tenant's memories are never listed");
      assert.equal((await other.get('/memories', { owner_ids: otherId, storage_type: 'table' })).body.data.total_count, 51);
      assert.equal((await other.get('/memories', { keywords: `${tag.toUpperCase()}-SEM` })).body.data.memory_list[0].id, semantic.id);
      assert.equal((await other.get('/memories', { keywords: '-raw-4' })).body.data.total_count, 11, 'fuzzy: -raw-4 and -raw-40..49');
      assertError(await other.get('/memories', { memory_type: 'dreams' }), 400, /dreams/);
      // issue 15 item 4: page_size above the cap is clamped to 100, not refused
      const clamped = await other.get('/memories', { page_size: 101 });
      assert.equal(clamped.status, 200);
      assert.equal(clamped.body.data.memory_list.length, 51, 'all 51 on one page of 100');
    });

    it('get_config and delete: delete removes the memory and its messages (404 afterwards)', async () => {
      const mem = await createMemory(api);
      const [{ message_id }] = await addMessage(api, [mem.id]);
      const config = await api.get(`/memories/${mem.id}/config`);
      assert.equal(config.status, 200);
      assert.equal(config.body.data.name, mem.name);
      const del = await api.delete(`/memories/${mem.id}`);
      assert.equal(del.status, 200);
      assert.deepEqual(del.body, { code: 0, data: null, message: true });
      assertError(await api.get(`/memories/${mem.id}/config`), 404, /not found/);
      assertError(await api.get(`/messages/${mem.id}:${message_id}/content`), 404);
      assertError(await api.delete(`/memories/${mem.id}`), 404);
      assert.deepEqual(await sizeTotals(mem.id, cairnConfig), { stored: { bytes: 0, messages: 0 }, recount: { bytes: 0, messages: 0 } });
    });
  });

  describe('messages', () => {
    it('add_message stores the raw message at once ("User Input: …\\nAgent Response: …", embedded, integer id), searchable before extraction ends', async () => {
      const mem = await createMemory(api, { memory_type: ['raw', 'semantic'] });
      const res = await api.post('/messages', { memory_id: [mem.id], agent_id: 'agent-1', session_id: 'sess-1', user_input: 'Where is the lighthouse?', agent_response: 'The lighthouse stands on Pelican Point.' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.message, 'All add to task.');
      const [{ memory_id, message_id }] = res.body.data;
      assert.equal(memory_id, mem.id);
      assert.ok(Number.isInteger(message_id));
      const found = await api.get('/messages/search', { query: 'lighthouse pelican', memory_id: mem.id });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.equal(found.body.data[0].message_id, message_id);
      const content = (await api.get(`/messages/${mem.id}:${message_id}/content`)).body.data;
      assert.equal(content.content, 'User Input: Where is the lighthouse?\nAgent Response: The lighthouse stands on Pelican Point.');
      assert.equal(content.message_type, 'raw');
      assert.equal(content.source_id, 0);
      assert.equal(content.status, true);
      assert.equal(content.forget_at, null);
      assert.equal(content.content_embed.length, DIMS);
      assert.ok(Math.abs(Math.hypot(...content.content_embed) - 1) < 1e-3, 'the embedding vector, unit length');
      await waitTask(api, mem.id, message_id);
    });

    it('user_id is the authenticated caller whatever the body says', async () => {
      const mem = await createMemory(api);
      const [{ message_id }] = await addMessage(api, [mem.id], { user_id: 'somebody-else', user_input: 'binding check' });
      const content = (await api.get(`/messages/${mem.id}:${message_id}/content`)).body.data;
      assert.equal(content.user_id, userId);
      const mine = await api.get('/messages/search', { query: 'binding check', memory_id: mem.id, user_id: userId });
      assert.deepEqual(mine.body.data.map((m: any) => m.message_id), [message_id]);
      const theirs = await api.get('/messages/search', { query: 'binding check', memory_id: mem.id, user_id: 'somebody-else' });
      assert.deepEqual(theirs.body.data, []);
    });

    it('one workflow per memory extracts items with the memory\'s model, prompts and temperature; items are stored under their raw message with normalised valid_at', async () => {
      const mem = await createMemory(api, { memory_type: ['raw', 'semantic', 'episodic'], temperature: 0.25, user_prompt: 'Mind the dogs.' });
      const rawOnly = await createMemory(api);
      scripted.set('dog-walk', '```json\n' + JSON.stringify({
        semantic: [{ content: 'The user owns two beagles named Rex and Max.', valid_at: '2024-02-03T10:00:00+01:00', invalid_at: null }],
        episodic: [{ content: 'The user walked the dogs in the park.', valid_at: 'not a time' }, { content: 'The dogs met a cat.' }],
        procedural: [{ content: 'ignored: the memory does not extract procedural items' }],
      }) + '\n```');
      fake.clear();
      const results = await addMessage(api, [mem.id, rawOnly.id], { user_input: 'dog-walk: I took Rex and Max out', agent_response: 'Sounds fun!' });
      assert.deepEqual(results.map((r) => r.memory_id), [mem.id, rawOnly.id]);
      const rawId = results[0]!.message_id;
      const listed = await waitTask(api, mem.id, rawId);
      assert.equal(listed.task.progress, 1, listed.task.progress_msg);
      assert.match(listed.task.progress_msg, /Done: 3 item\(s\) stored/);
      assert.equal(listed.agent_id, 'agent-1');
      const extract = listed.extract.map((e: any) => [e.message_type, e.source_id]);
      assert.deepEqual(extract, [['semantic', rawId], ['episodic', rawId], ['episodic', rawId]]);
      const semantic = (await api.get(`/messages/${mem.id}:${listed.extract[0].message_id}/content`)).body.data;
      assert.equal(semantic.content, 'The user owns two beagles named Rex and Max.');
      assert.equal(semantic.valid_at, Date.UTC(2024, 1, 3, 9) / 1000, 'ISO time with zone, normalised');
      assert.equal(semantic.content_embed.length, DIMS);
      assert.equal(listed.extract[1].valid_at, listed.valid_at, 'an unreadable valid_at falls back to the conversation time');

      const chats = fake.requests.filter((r) => r.path === '/v1/chat/completions');
      assert.equal(chats.length, 1, 'the raw-only memory asks no model');
      const body = chats[0]!.body;
      assert.equal(body.temperature, 0.25);
      assert.equal(body.messages[0].role, 'system');
      assert.equal(body.messages[0].content, mem.system_prompt);
      assert.match(body.messages[1].content, /^Mind the dogs\.\n\nConversation:\nUser Input: dog-walk: I took Rex and Max out\nAgent Response: Sounds fun!\n\nConversation Time: \d{4}-\d\d-\d\dT[\d:]+Z\nCurrent Time: /);

      const rawOnlyListed = await waitTask(api, rawOnly.id, results[1]!.message_id);
      assert.equal(rawOnlyListed.task.progress, 1);
      assert.deepEqual(rawOnlyListed.extract, []);

      const h = await harness();
      const connection = await Connection.connect({ address: h.temporal.address });
      try {
        const described = await new Client({ connection }).workflow.getHandle(workflowIds.memoryExtractionBatches(mem.id)).describe();
        assert.equal(described.type, 'memoryExtractionBatches', 'the memory\'s batch workflow extracted the turn');
        assert.equal(described.taskQueue, roleTaskQueue('memory', h.config.taskQueue), 'on the memory role\'s task queue');
      } finally {
        await connection.close();
      }
    });

    it('invalid JSON from the model: the task fails with a clear progress_msg and nothing is stored', async () => {
      const mem = await createMemory(api, { memory_type: ['raw', 'procedural'] });
      scripted.set('gibberish-json', 'Sure! The user likes {procedures: [unquoted');
      const [{ message_id }] = await addMessage(api, [mem.id], { user_input: 'gibberish-json please' });
      const listed = await waitTask(api, mem.id, message_id);
      assert.equal(listed.task.progress, -1);
      assert.match(listed.task.progress_msg, /^Failed: the model's answer is not valid JSON: "Sure! The user likes/);
      assert.deepEqual(listed.extract, []);
      const connection = await Connection.connect({ address: (await harness()).temporal.address });
      try {
        // One turn's failure is its task's, not the memory's workflow's: the next turns go on.
        const described = await new Client({ connection }).workflow.getHandle(workflowIds.memoryExtractionBatches(mem.id)).describe();
        assert.notEqual(described.status.name, 'FAILED');
      } finally {
        await connection.close();
      }
      assert.equal((await listMessages(api, mem.id)).total_count, 1);
      const { stored, recount } = await sizeTotals(mem.id, cairnConfig);
      assert.deepEqual(stored, recount);
      assert.equal(stored.messages, 1);
    });

    it('a failing model call is retried: the first attempt gets HTTP 500, the second succeeds', async () => {
      const mem = await createMemory(api, { memory_type: ['raw', 'semantic'] });
      scripted.set('flaky-model', JSON.stringify({ semantic: [{ content: 'The user survived a flaky model.' }] }));
      fake.clear();
      fake.behaviour.failure = { status: 500, message: 'overloaded', path: '/v1/chat/completions', times: 1 };
      try {
        const [{ message_id }] = await addMessage(api, [mem.id], { user_input: 'flaky-model test' });
        const listed = await waitTask(api, mem.id, message_id);
        assert.equal(listed.task.progress, 1, listed.task.progress_msg);
        assert.equal(listed.extract.length, 1);
        assert.equal(fake.requests.filter((r) => r.path === '/v1/chat/completions').length, 2);
      } finally {
        fake.behaviour.failure = undefined;
      }
    });

    it('30 turns sent at once to one memory are all extracted in fewer model calls than turns, each task done with its own items', async () => {
      const mem = await createMemory(api, { memory_type: ['raw', 'episodic'], memory_size: 10 * 1024 * 1024 });
      fake.clear();
      // The first call is held until every turn is in, so the others wait and go in batches.
      const gate = callGate((messages) => isExtraction(messages) && lastUserMessage(messages).includes('burst-'));
      fake.behaviour.gate = gate;
      let ids: number[];
      try {
        ids = (await Promise.all(Array.from({ length: 30 }, (_, i) => addMessage(api, [mem.id], { user_input: `burst-${i}`, agent_response: 'ok' })))).map((r) => r[0]!.message_id);
        await eventually(async () => gate.held === 1, 20_000, 50);
      } finally {
        gate.release();
        fake.behaviour.gate = undefined;
      }
      const listed = await eventually(async () => {
        const all = (await listMessages(api, mem.id, { page_size: 100 })).message_list;
        return all.length === 30 && all.every((m) => m.task.progress === 1 || m.task.progress === -1) ? all : undefined;
      }, 60_000, 200);
      const calls = fake.requests.filter((r) => r.path === '/v1/chat/completions' && JSON.stringify(r.body).includes('burst-')).length;
      // The held call has one turn; the 29 waiting go CAIRN_MEMORY_EXTRACTION_BATCH at a time.
      assert.ok(calls >= 2 && calls <= 1 + Math.ceil(29 / cairnConfig.memoryExtractionBatch), `${calls} model calls for 30 turns`);
      for (const [i, id] of ids.entries()) {
        const m = listed.find((x) => x.message_id === id)!;
        assert.equal(m.task.progress, 1, m.task.progress_msg);
        assert.equal(m.task.progress_msg, 'Done: 1 item(s) stored');
        assert.deepEqual(m.extract.map((e: any) => [e.message_type, e.source_id, e.valid_at]), [['episodic', id, m.valid_at]], 'its own item, from its own time');
        const content = (await api.get(`/messages/${mem.id}:${m.extract[0].message_id}/content`)).body.data.content;
        assert.equal(content, `The user said burst-${i} aloud.`);
      }
      const { stored, recount } = await sizeTotals(mem.id, cairnConfig);
      assert.deepEqual(stored, recount);
      assert.equal(stored.messages, 60, 'every turn and its one item, once');
    });

    it('a memoryExtraction run (one workflow per message, from before batches) still completes with the activities of today', async () => {
      const h = await harness();
      const mem = await createMemory(api, { memory_type: ['raw', 'semantic'] });
      scripted.set('old-style-run', JSON.stringify({ semantic: [{ content: 'The user upgraded Cairn during an extraction.' }] }));
      // The batch workflow's call is held and the workflow stopped, as if the turn had been handed to an old run instead.
      const gate = callGate((messages) => isExtraction(messages) && lastUserMessage(messages).includes('old-style-run'));
      fake.behaviour.gate = gate;
      const connection = await Connection.connect({ address: h.temporal.address });
      try {
        const client = new Client({ connection });
        const [{ message_id }] = await addMessage(api, [mem.id], { user_input: 'old-style-run please' });
        await eventually(async () => gate.held === 1, 20_000, 50);
        await client.workflow.getHandle(workflowIds.memoryExtractionBatches(mem.id)).terminate('the test hands the turn to an old-style run');
        gate.release();
        const handle = await startWorkflow(client, WORKFLOWS.memoryExtraction, {
          taskQueue: workflowTaskQueue(WORKFLOWS.memoryExtraction, h.config.taskQueue),
          workflowId: workflowIds.memoryExtraction(mem.id, message_id),
          args: [{ memoryId: mem.id, messageId: message_id }],
        });
        assert.deepEqual(await handle.result(), { status: 'done', stored: 1, evicted: 0 });
        const listed = await waitTask(api, mem.id, message_id);
        assert.equal(listed.task.progress_msg, 'Done: 1 item(s) stored');
        assert.deepEqual(listed.extract.map((e: any) => e.source_id), [message_id]);
      } finally {
        gate.release();
        fake.behaviour.gate = undefined;
        await connection.close();
      }
    });

    it('progress and failure reason are visible on the raw message while the task runs (task.progress between 0 and 1)', async () => {
      const mem = await createMemory(api, { memory_type: ['raw', 'semantic'] });
      // The model holds the extraction until the test has seen the task running.
      const gate = callGate((messages) => isExtraction(messages) && lastUserMessage(messages).includes('slow progress'));
      fake.behaviour.gate = gate;
      try {
        const [{ message_id }] = await addMessage(api, [mem.id], { user_input: 'slow progress' });
        await eventually(async () => gate.held === 1, 20_000, 50);
        const running = (await listMessages(api, mem.id)).message_list[0];
        assert.ok(running.task.progress >= 0.35 && running.task.progress < 1, JSON.stringify(running.task));
        assert.match(running.task.progress_msg, /Asking .* to extract semantic items/);
        gate.release();
        assert.equal((await waitTask(api, mem.id, message_id)).task.progress, 1);
      } finally {
        gate.release();
        fake.behaviour.gate = undefined;
      }
    });

    it('list_memory_messages: newest first, agent_id filter, keywords on session id, paging 50, extract nested', async () => {
      const mem = await createMemory(api);
      const bySession = new Map<string, number>();
      for (let batch = 0; batch < 4; batch++) {
        await Promise.all(Array.from({ length: 13 }, async (_, j) => {
          const i = batch * 13 + j;
          const [{ message_id }] = await addMessage(api, [mem.id], { agent_id: i % 2 ? 'agent-odd' : 'agent-even', session_id: `sess-${i}` });
          bySession.set(`sess-${i}`, message_id);
        }));
      }
      const all = (await listMessages(api, mem.id, { page_size: 100 })).message_list;
      assert.equal(all.length, 52);
      const order = all.map((m) => m.message_id);
      const validAts = all.map((m) => m.valid_at);
      assert.deepEqual(validAts, [...validAts].sort((x, y) => y - x), 'newest first');
      const page1 = await listMessages(api, mem.id);
      assert.equal(page1.total_count, 52);
      assert.deepEqual(page1.message_list.map((m) => m.message_id), order.slice(0, 50), 'page_size 50 by default');
      const res = await api.get(`/memories/${mem.id}`, { page: 2 });
      assert.equal(res.body.data.storage_type, 'table');
      assert.equal(res.body.message, true);
      assert.deepEqual(res.body.data.messages.message_list.map((m: any) => m.message_id), order.slice(50));
      const m = page1.message_list[0];
      assert.deepEqual(Object.keys(m).sort(), ['agent_id', 'agent_name', 'extract', 'forget_at', 'invalid_at', 'memory_id', 'message_id', 'message_type', 'replaced_by', 'session_id', 'source_id', 'status', 'task', 'user_id', 'valid_at']);
      assert.equal((await listMessages(api, mem.id, { agent_id: 'agent-odd' })).total_count, 26);
      assert.equal((await listMessages(api, mem.id, { agent_id: 'agent-odd,agent-even' })).total_count, 52);
      const keyed = (await listMessages(api, mem.id, { keywords: 'SESS-5' })).message_list.map((x) => x.message_id);
      assert.deepEqual(new Set(keyed), new Set(['sess-5', 'sess-50', 'sess-51'].map((k) => bySession.get(k))));
    });

    it('forget_message: the message stays readable and listed with forget_at, but is never retrieved by search or recent', async () => {
      const mem = await createMemory(api);
      const [{ message_id }] = await addMessage(api, [mem.id], { user_input: 'forgettable walrus fact' });
      const res = await api.delete(`/messages/${mem.id}:${message_id}`);
      assert.deepEqual(res.body, { code: 0, data: null, message: true });
      const content = (await api.get(`/messages/${mem.id}:${message_id}/content`)).body.data;
      assert.ok(Number.isInteger(content.forget_at) && Math.abs(content.forget_at - Date.now() / 1000) < 60);
      assert.equal(content.content.includes('walrus'), true);
      assert.equal((await listMessages(api, mem.id)).message_list[0].forget_at, content.forget_at);
      assert.deepEqual((await api.get('/messages/search', { query: 'walrus', memory_id: mem.id, similarity_threshold: 0 })).body.data, []);
      assert.deepEqual((await api.get('/messages', { memory_id: mem.id })).body.data, []);
      assertError(await api.delete(`/messages/${mem.id}:999999999`), 404, /Message '999999999' in memory/);
    });

    it('update_message_status: a disabled message is not retrieved by search; enabling it again brings it back', async () => {
      const mem = await createMemory(api);
      const [{ message_id }] = await addMessage(api, [mem.id], { user_input: 'toggle the narwhal' });
      const search = async () => (await api.get('/messages/search', { query: 'narwhal', memory_id: mem.id })).body.data.map((m: any) => m.message_id);
      assert.deepEqual(await search(), [message_id]);
      const off = await api.put(`/messages/${mem.id}:${message_id}`, { status: false });
      assert.deepEqual(off.body, { code: 0, data: null, message: true });
      assert.deepEqual(await search(), []);
      assert.equal((await api.get(`/messages/${mem.id}:${message_id}/content`)).body.data.status, false);
      await api.put(`/messages/${mem.id}:${message_id}`, { status: true });
      assert.deepEqual(await search(), [message_id]);
      assertError(await api.put(`/messages/${mem.id}:${message_id}`, { status: 'off' }), 400, /Status must be a boolean/);
      assertError(await api.put(`/messages/${mem.id}:${message_id}`, {}), 400, /status/);
    });

    it('search_message: query, memory_id (repeated or comma list), filters, top_n 10, scores in 0..1, 0.5 weighs keywords and meaning equally', async () => {
      const a = await createMemory(api);
      const b = await createMemory(api);
      for (let i = 0; i < 12; i++) await addMessage(api, [i % 2 ? a.id : b.id], { user_input: `penguin colony report ${i}`, agent_id: `agent-${i % 3}`, session_id: `s-${i % 4}` });
      const both = await api.get('/messages/search', { query: 'penguin colony', memory_id: [a.id, b.id], similarity_threshold: 0 });
      assert.equal(both.status, 200, JSON.stringify(both.body));
      assert.equal(both.body.message, true);
      assert.equal(both.body.data.length, 10, 'top_n defaults to 10');
      for (const m of both.body.data) {
        for (const s of [m.similarity, m.term_similarity, m.vector_similarity]) assert.ok(typeof s === 'number' && s >= 0 && s <= 1, JSON.stringify(m));
        assert.ok(m.content.includes('penguin'));
      }
      const validAts = both.body.data.map((m: any) => m.valid_at);
      assert.deepEqual(validAts, [...validAts].sort((x: number, y: number) => y - x), 'most recent first');
      const comma = await api.get('/messages/search', { query: 'penguin colony', memory_id: `${a.id},${b.id}`, top_n: 12, similarity_threshold: 0 });
      assert.equal(comma.body.data.length, 12);
      const filtered = await api.get('/messages/search', { query: 'penguin', memory_id: `${a.id},${b.id}`, agent_id: 'agent-1', session_id: 's-1', similarity_threshold: 0 });
      assert.deepEqual(filtered.body.data.map((m: any) => [m.agent_id, m.session_id]), [['agent-1', 's-1']]);
      const equal = await api.get('/messages/search', { query: 'penguin colony report 3', memory_id: a.id, keywords_similarity_weight: 0.5, similarity_threshold: 0 });
      const top = equal.body.data.find((m: any) => m.content.includes('report 3\n'));
      assert.ok(Math.abs(top.similarity - (0.5 * top.term_similarity + 0.5 * top.vector_similarity)) < 1e-9);
      assertError(await api.get('/messages/search', { query: 'x', memory_id: a.id, keywords_similarity_weight: 1.5 }), 400, /keywords_similarity_weight/);
      assertError(await api.get('/messages/search', { query: 'x', memory_id: a.id, top_n: 101 }), 400, /top_n/);
      assertError(await api.get('/messages/search', { memory_id: a.id }), 400, /query/);
      assertError(await api.get('/messages/search', { query: 'x' }), 400, /memory_id/);
    });

    it('search_message refuses memories with different embedding models', async () => {
      const a = await createMemory(api);
      const b = await createMemory(api, { embd_id: 'fake-embed@OpenAI-API-Compatible' });
      assertError(await api.get('/messages/search', { query: 'x', memory_id: [a.id, b.id] }), 400, /different embedding models/);
    });

    it('get_recent_messages: most recent first, limit 10 by default, agent/session filters, memory_id required', async () => {
      const mem = await createMemory(api);
      const ids: number[] = [];
      for (let i = 0; i < 12; i++) ids.push((await addMessage(api, [mem.id], { user_input: `recent ${i}`, session_id: i === 4 ? 'special' : 'normal' }))[0]!.message_id);
      const res = await api.get('/messages', { memory_id: mem.id });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data.map((m: any) => m.message_id), ids.slice(2).reverse());
      assert.match(res.body.data[0].content, /recent 11/);
      assert.deepEqual((await api.get('/messages', { memory_id: mem.id, limit: 3 })).body.data.map((m: any) => m.message_id), ids.slice(9).reverse());
      assert.deepEqual((await api.get('/messages', { memory_id: mem.id, session_id: 'special' })).body.data.map((m: any) => m.message_id), [ids[4]]);
      assert.deepEqual((await api.get('/messages', { memory_id: mem.id, agent_id: 'nobody' })).body.data, []);
      assertError(await api.get('/messages'), 400, /memory_id/);
    });

    it('message references: ids are integers, a message is found only through its own memory', async () => {
      const a = await createMemory(api);
      const b = await createMemory(api);
      const [{ message_id }] = await addMessage(api, [a.id]);
      assertError(await api.get(`/messages/${a.id}:abc/content`), 400, /integer message id/);
      assertError(await api.get(`/messages/${a.id}/content`), 400, /<memory_id>:<message_id>/);
      assertError(await api.get(`/messages/${b.id}:${message_id}/content`), 404, /not found/);
      assertError(await api.get(`/messages/${'0'.repeat(32)}:${message_id}/content`), 404, /Memory/);
    });
  });

  describe('size and FIFO', () => {
    it('when a message would pass memory_size the oldest messages go first, until it fits; the stored total equals a recount', async () => {
      const size = rawSize('fifo 0', 'ok');
      const mem = await createMemory(api, { memory_size: size * 3 });
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push((await addMessage(api, [mem.id], { user_input: `fifo ${i}`, agent_response: 'ok' }))[0]!.message_id);
      const left = (await listMessages(api, mem.id)).message_list.map((m) => m.message_id);
      assert.deepEqual(left, [ids[4], ids[3], ids[2]]);
      assert.deepEqual(await sizeTotals(mem.id, cairnConfig), { stored: { bytes: size * 3, messages: 3 }, recount: { bytes: size * 3, messages: 3 } });
    });

    it('forgotten messages go first (earliest forget_at), before older ones', async () => {
      const size = rawSize('fifo 0', 'ok');
      const mem = await createMemory(api, { memory_size: size * 3 });
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push((await addMessage(api, [mem.id], { user_input: `fifo ${i}`, agent_response: 'ok' }))[0]!.message_id);
      await api.delete(`/messages/${mem.id}:${ids[2]}`);
      await new Promise((r) => setTimeout(r, 5));
      await api.delete(`/messages/${mem.id}:${ids[1]}`);
      ids.push((await addMessage(api, [mem.id], { user_input: 'fifo 3', agent_response: 'ok' }))[0]!.message_id);
      assert.deepEqual((await listMessages(api, mem.id)).message_list.map((m) => m.message_id), [ids[3], ids[1], ids[0]], 'the earliest forgotten one went first');
      ids.push((await addMessage(api, [mem.id], { user_input: 'fifo 4', agent_response: 'ok' }))[0]!.message_id);
      assert.deepEqual((await listMessages(api, mem.id)).message_list.map((m) => m.message_id), [ids[4], ids[3], ids[0]], 'then the other forgotten one, though it is newer');
      const { stored, recount } = await sizeTotals(mem.id, cairnConfig);
      assert.deepEqual(stored, recount);
    });

    it('a message larger than the memory is a clear 400 and nothing is stored in any of the memories', async () => {
      const small = await createMemory(api, { memory_size: 600 });
      const big = await createMemory(api);
      const res = await api.post('/messages', { memory_id: [big.id, small.id], agent_id: 'a', session_id: 's', user_input: 'x'.repeat(200), agent_response: 'y' });
      assertError(res, 400, /needs \d+ bytes \(content bytes \+ embedding dimensions × 8\), more than memory '.*' can hold \(memory_size 600 bytes\)/);
      assert.equal((await listMessages(api, big.id)).total_count, 0);
      assert.equal((await listMessages(api, small.id)).total_count, 0);
    });

    it('an extracted item larger than the memory: the task records the failure and stores no item', async () => {
      const mem = await createMemory(api, { memory_type: ['raw', 'semantic'], memory_size: 800 });
      scripted.set('huge-item', JSON.stringify({ semantic: [{ content: 'word '.repeat(80).trim() + 's' }] }));
      const [{ message_id }] = await addMessage(api, [mem.id], { user_input: 'huge-item' });
      const listed = await waitTask(api, mem.id, message_id);
      assert.equal(listed.task.progress, -1);
      assert.match(listed.task.progress_msg, /Failed: the extracted semantic item .* needs 912 bytes, more than the memory holds \(memory_size 800 bytes\)/);
      assert.deepEqual(listed.extract, []);
    });

    it('the stored total stays exact through adds, extractions, forgets, FIFO removals and a smaller memory_size (which applies FIFO at once)', async () => {
      const mem = await createMemory(api, { memory_type: ['raw', 'episodic'], memory_size: 5000 });
      scripted.set('total-check', JSON.stringify({ episodic: [{ content: 'event one happened' }, { content: 'event two happened' }] }));
      const ids: number[] = [];
      for (let i = 0; i < 6; i++) {
        const [{ message_id }] = await addMessage(api, [mem.id], { user_input: `total-check ${i}` });
        ids.push(message_id);
        assert.equal((await waitTask(api, mem.id, message_id)).task.progress, 1);
        if (i === 2) await api.delete(`/messages/${mem.id}:${ids[0]}`);
        if (i === 3) await api.put(`/memories/${mem.id}`, { memory_size: 3500 });
        const { stored, recount } = await sizeTotals(mem.id, cairnConfig);
        assert.deepEqual(stored, recount, `after message ${i}`);
        assert.ok(stored.bytes <= (i >= 3 ? 3500 : 5000), `within memory_size: ${stored.bytes}`);
      }
      const left = (await listMessages(api, mem.id)).message_list;
      assert.deepEqual(left.map((m) => [m.message_id, m.extract.length]), [[ids[5], 2], [ids[4], 2]], 'the two newest turns with their items');
    });
  });

  describe('permission me / team and tenant isolation', () => {
    let owner: Api;
    let member: Api;
    let memberId: string;
    let stranger: Api;
    let privateMem: any;
    let teamMem: any;
    let privateMsg: number;
    let teamMsg: number;

    before(async () => {
      const o = await newUser('mem-owner');
      const m = await newUser('mem-member');
      owner = o.api;
      member = m.api;
      memberId = m.userId;
      stranger = (await newUser('mem-stranger')).api;
      await addModelServer(owner, fake.baseUrl, { embedding: 'fake-embed' });
      assert.equal((await owner.post(`/tenants/${o.userId}/users`, { email: m.email })).status, 200);
      privateMem = await createMemory(owner);
      teamMem = await createMemory(owner, { permission: 'team' });
      privateMsg = (await addMessage(owner, [privateMem.id], { user_input: 'secret otter' }))[0]!.message_id;
      teamMsg = (await addMessage(owner, [teamMem.id], { user_input: 'shared otter' }))[0]!.message_id;
    });

    /** Every memory route for the memory `id` and its message `mid`. */
    const everyRoute = (id: string, mid: number): [string, (a: Api) => Promise<{ status: number; body: any }>][] => [
      ['GET /memories/{id}/config', (a) => a.get(`/memories/${id}/config`)],
      ['PUT /memories/{id}', (a) => a.put(`/memories/${id}`, { description: 'hijacked' })],
      ['GET /memories/{id}', (a) => a.get(`/memories/${id}`)],
      ['POST /messages', (a) => a.post('/messages', { memory_id: [id], agent_id: 'x', session_id: 'x', user_input: 'x', agent_response: 'x' })],
      ['GET /messages/{id}:{mid}/content', (a) => a.get(`/messages/${id}:${mid}/content`)],
      ['PUT /messages/{id}:{mid}', (a) => a.put(`/messages/${id}:${mid}`, { status: false })],
      ['DELETE /messages/{id}:{mid}', (a) => a.delete(`/messages/${id}:${mid}`)],
      ['GET /messages/search', (a) => a.get('/messages/search', { query: 'otter', memory_id: id })],
      ['GET /messages', (a) => a.get('/messages', { memory_id: id })],
      ['DELETE /memories/{id}', (a) => a.delete(`/memories/${id}`)],
    ];

    it("a stranger (another tenant) gets 404 on every route of another tenant's memories, and nothing changes", async () => {
      for (const [mem, mid] of [[privateMem, privateMsg], [teamMem, teamMsg]] as const) {
        for (const [name, call] of everyRoute(mem.id, mid)) assertError(await call(stranger), 404, /not found/, name);
      }
      assert.deepEqual((await stranger.get('/memories')).body.data, { memory_list: [], total_count: 0 });
      const content = (await owner.get(`/messages/${privateMem.id}:${privateMsg}/content`)).body.data;
      assert.equal(content.status, true);
      assert.equal(content.forget_at, null);
      assert.equal((await owner.get(`/memories/${privateMem.id}/config`)).body.data.description, null);
    });

    it("a team member gets 403 on every route of the owner's private (me) memory", async () => {
      for (const [name, call] of everyRoute(privateMem.id, privateMsg)) {
        const res = await call(member);
        assert.equal(res.status, 403, `${name}: ${res.status} ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, 403);
      }
    });

    it('a team member lists, reads, writes and searches a team memory; its messages carry the member\'s user_id', async () => {
      const listed = await member.get('/memories');
      assert.deepEqual(listed.body.data.memory_list.map((m: any) => m.id), [teamMem.id]);
      assert.equal((await member.get(`/memories/${teamMem.id}`)).body.data.messages.total_count, 1);
      const [{ message_id }] = await addMessage(member, [teamMem.id], { user_input: 'member otter note' });
      assert.equal((await member.get(`/messages/${teamMem.id}:${message_id}/content`)).body.data.user_id, memberId);
      const search = await member.get('/messages/search', { query: 'otter', memory_id: teamMem.id });
      assert.equal(search.status, 200);
      assert.ok(search.body.data.some((m: any) => m.message_id === message_id));
      const upd = await member.put(`/memories/${teamMem.id}`, { description: 'edited by a member' });
      assert.equal(upd.status, 200, JSON.stringify(upd.body));
      assertError(await member.put(`/memories/${teamMem.id}`, { permission: 'me' }), 403, /owner/);
    });
  });

  describe('an embedding provider that cannot be reached', () => {
    it('add_message answers as the chat routes do (500 naming the provider, the cause and the URL) and stores nothing in any memory; search answers the same', async () => {
      const { api: user } = await newUser('memories-down');
      const down = await startFakeOpenAI({ answer: answers, dims: DIMS });
      await addModelServer(user, fake.baseUrl, { embedding: 'fake-embed' });
      await addModelServer(user, down.baseUrl, { instance: 'down', embedding: 'down-embed', setDefault: false });
      const reachable = await createMemory(user);
      const unreachable = await createMemory(user, { embd_id: 'down-embed@down@OpenAI-API-Compatible' });
      await down.close();
      const refused = new RegExp(`^OpenAI-API-Compatible: connection refused at ${down.baseUrl.replace(/\./g, '\\.')}`);

      // All or nothing: the reachable memory named first gets nothing either.
      const add = await user.post('/messages', { memory_id: [reachable.id, unreachable.id], agent_id: 'a', session_id: 's', user_input: 'provider down', agent_response: 'noted' });
      assertError(add, 500, refused, 'POST /messages');
      for (const mem of [reachable, unreachable]) {
        assert.equal((await listMessages(user, mem.id)).total_count, 0, 'nothing stored');
        const { stored, recount } = await sizeTotals(mem.id, cairnConfig);
        assert.deepEqual([stored.messages, recount.messages], [0, 0]);
      }
      assertError(await user.get('/messages/search', { query: 'provider down', memory_id: unreachable.id }), 500, refused, 'GET /messages/search');

      // The same request once the memory's provider answers again: stored once.
      const back = await startFakeOpenAI({ answer: answers, dims: DIMS });
      try {
        assert.equal((await user.put('/providers/OpenAI-API-Compatible/instances/down', { base_url: back.baseUrl })).status, 200);
      } catch (err) {
        await back.close();
        throw err;
      }
      try {
        const ok = await user.post('/messages', { memory_id: [reachable.id, unreachable.id], agent_id: 'a', session_id: 's', user_input: 'provider down', agent_response: 'noted' });
        assert.equal(ok.status, 200, JSON.stringify(ok.body));
        for (const mem of [reachable, unreachable]) assert.equal((await listMessages(user, mem.id)).total_count, 1);
      } finally {
        await back.close();
      }
    });
  });

  describe('durability', () => {
    it('a worker killed mid-extraction: the step runs again on a new worker and each item is stored exactly once', async () => {
      const h = await harness();
      const mem = await createMemory(api, { memory_type: ['raw', 'semantic', 'procedural'] });
      scripted.set('kill-worker', JSON.stringify({
        semantic: [{ content: 'The user keeps bees.' }, { content: 'The user lives in Bergen.' }],
        procedural: [{ content: 'To harvest honey, smoke the hive first.' }],
      }));
      fake.clear();
      // The model holds the extraction: the worker dies with the call open.
      const gate = callGate((messages) => isExtraction(messages) && lastUserMessage(messages).includes('kill-worker'));
      fake.behaviour.gate = gate;
      try {
        const [{ message_id }] = await addMessage(api, [mem.id], { user_input: 'kill-worker: bees' });
        const extractionRequests = () => fake.requests.filter((r) => r.path === '/v1/chat/completions' && JSON.stringify(r.body).includes('kill-worker')).length;
        await eventually(async () => gate.held === 1, 20_000, 50);
        assert.equal(extractionRequests(), 1);
        await h.killWorker();
        // The new worker's call is answered at once.
        gate.release();
        const listed = await waitTask(api, mem.id, message_id, 60_000);
        assert.equal(listed.task.progress, 1, listed.task.progress_msg);
        assert.ok(extractionRequests() >= 2, 'the model was asked again by the new worker');
        assert.deepEqual(listed.extract.map((e: any) => e.message_type), ['semantic', 'semantic', 'procedural']);
        assert.equal((await listMessages(api, mem.id)).total_count, 1);
        const { stored, recount } = await sizeTotals(mem.id, cairnConfig);
        assert.deepEqual(stored, recount);
        assert.equal(stored.messages, 4, 'one raw message and three items, each once');
      } finally {
        gate.release();
        fake.behaviour.gate = undefined;
      }
    });
  });
});
