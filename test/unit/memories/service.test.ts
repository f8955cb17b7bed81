import assert from 'node:assert/strict';
import { testProfiles } from '../../support/meta-store.js';
import type { SqliteMemoryIndex } from '../../../src/index/memories/sqlite-memory-index.js';
import { CHAT, EMBED, memoryRig } from './memory-rig.js';
import type { MemoryService } from '../../../src/services/memories.js';
import type { MemoryExtractor } from '../../../src/services/memory-extractor.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import type { MemoryExtractionInput } from '../../../src/memories/types.js';
import { fixedAnswer, startFakeOpenAI, type FakeOpenAI } from '../../fakes/index.js';

/**
 * The service API the agent engine calls (addTurn, searchForAgent) and the extraction steps, on an
 * in-memory database with a fake model server and a recording task starter instead of Temporal.
 */
for (const profile of testProfiles()) describe(`MemoryService: the API for agents, and the extraction steps [${profile}]`, () => {
  let fake: FakeOpenAI;
  let rig: Awaited<ReturnType<typeof memoryRig>>;
  let service: MemoryService;
  let extractor: MemoryExtractor;
  let index: SqliteMemoryIndex;
  const started: MemoryExtractionInput[] = [];
  const tenant = 'a'.repeat(32);
  const p = tenantPrincipal(tenant);

  before(async () => {
    fake = await startFakeOpenAI({ dims: 16 });
    rig = await memoryRig(profile, tenant, fake.baseUrl, async (input) => void started.push(input));
    ({ service, extractor, index } = rig);
  });
  after(async () => {
    await fake.close();
    await rig.close();
  });

  const memory = (fields: Record<string, unknown> = {}) =>
    service.create(p, { name: `m-${Math.random()}`, memory_type: ['raw', 'semantic'], embd_id: EMBED, llm_id: CHAT, ...fields });

  it('addTurn writes the turn to each memory independently, returns per-memory ids or errors and never throws', async () => {
    const a = await memory();
    const tiny = await memory({ memory_size: 100 });
    const results = await service.addTurn(tenant, {
      memory_ids: [a.id, 'f'.repeat(32), tiny.id], user_id: 'end-user-7', agent_id: 'agent-x', session_id: 'sess-x', user_input: 'I like kayaking', agent_response: 'Noted!',
    });
    assert.equal(results.length, 3);
    assert.ok(Number.isInteger(results[0]!.message_id) && !results[0]!.error);
    assert.match(results[1]!.error!, /Memory 'f{32}' not found/);
    assert.match(results[2]!.error!, /more than memory .* can hold \(memory_size 100 bytes\)/);
    assert.deepEqual(started.at(-1), { memoryId: a.id, messageId: results[0]!.message_id });
    const stored = (await index.get(a.id, results[0]!.message_id!))!;
    assert.equal(stored.user_id, 'end-user-7', 'agents pass the user id of the run');
    assert.equal(stored.content, 'User Input: I like kayaking\nAgent Response: Noted!');
  });

  it("addTurn reaches only the agent owner's memories: another tenant's memory is an error, not a write", async () => {
    const mine = await memory();
    const results = await service.addTurn('b'.repeat(32), { memory_ids: [mine.id], agent_id: 'x', session_id: 'x', user_input: 'x', agent_response: 'x' });
    assert.match(results[0]!.error!, /not found/);
    assert.equal((await index.usage(mine.id)).messages, 0);
  });

  it('a turn_key makes a retried write idempotent', async () => {
    const a = await memory();
    const turn = { memory_ids: [a.id], agent_id: 'g', session_id: 's', user_input: 'retry me', agent_response: 'ok', turn_key: 'run-42' };
    const [first] = await service.addTurn(tenant, turn);
    const [second] = await service.addTurn(tenant, turn);
    assert.equal(first!.message_id, second!.message_id);
    assert.equal((await index.usage(a.id)).messages, 1);
  });

  it('searchForAgent finds the turn (optionally filtered by user) with scores in 0..1', async () => {
    const a = await memory({ memory_type: ['raw'] });
    await service.addTurn(tenant, { memory_ids: [a.id], user_id: 'u1', agent_id: 'g', session_id: 's', user_input: 'My favourite colour is teal', agent_response: 'Teal it is.' });
    await service.addTurn(tenant, { memory_ids: [a.id], user_id: 'u2', agent_id: 'g', session_id: 's', user_input: 'Teal bores me', agent_response: 'Fine.' });
    const hits = await service.searchForAgent(tenant, { memory_ids: [a.id], query: 'favourite colour teal', similarity_threshold: 0.1, keywords_similarity_weight: 0.5, top_n: 5 });
    assert.equal(hits.length, 2);
    for (const h of hits) assert.ok(h.similarity > 0 && h.similarity <= 1);
    const u1 = await service.searchForAgent(tenant, { memory_ids: [a.id], query: 'teal', user_id: 'u1' });
    assert.deepEqual(u1.map((h) => h.user_id), ['u1']);
  });

  it('the extraction steps: begin → extract → store → finish; storing twice stores the items once', async () => {
    const a = await memory({ memory_type: ['raw', 'semantic', 'procedural'] });
    fake.behaviour.answer = fixedAnswer(JSON.stringify({ semantic: [{ content: 'The user paddles a kayak.' }], procedural: [{ content: 'Check the weather before paddling.' }] }));
    const [{ message_id }] = await service.addTurn(tenant, { memory_ids: [a.id], agent_id: 'g', session_id: 's', user_input: 'kayak', agent_response: 'ok' });
    assert.equal(await extractor.begin(a.id, message_id!), 'extract');
    const { items, note } = await extractor.extract(a.id, message_id!);
    assert.equal(note, '', 'nothing was dropped');
    assert.deepEqual(items.map((i) => [i.type, i.ordinal]), [['semantic', 0], ['procedural', 0]]);
    assert.deepEqual(await extractor.storeItems(a.id, message_id!, items), { stored: 2, evicted: 0, alreadyStored: false });
    assert.deepEqual(await extractor.storeItems(a.id, message_id!, items), { stored: 0, evicted: 0, alreadyStored: true });
    await extractor.finish(a.id, message_id!, 'Done');
    await extractor.fail(a.id, message_id!, 'too late');
    const listed = await service.listMessages(p, a.id, { page: 1, page_size: 10 });
    assert.deepEqual(listed.messages.message_list[0]!.task, { progress: 1, progress_msg: 'Done' }, 'a finished task is never reopened');
    assert.equal(listed.messages.message_list[0]!.extract.length, 2);
    assert.deepEqual(await index.usage(a.id), await index.recount(a.id));
  });

  it('a raw-only memory finishes at begin without asking a model', async () => {
    const a = await memory({ memory_type: ['raw'] });
    fake.clear();
    const [{ message_id }] = await service.addTurn(tenant, { memory_ids: [a.id], agent_id: 'g', session_id: 's', user_input: 'x', agent_response: 'y' });
    assert.equal(await extractor.begin(a.id, message_id!), 'done');
    assert.equal(fake.requests.filter((r) => r.path.includes('chat')).length, 0);
  });
});
