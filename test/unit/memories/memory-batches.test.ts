import assert from 'node:assert/strict';
import type { SqliteMemoryIndex } from '../../../src/index/memories/sqlite-memory-index.js';
import { testProfiles } from '../../support/meta-store.js';
import { CHAT, EMBED, memoryRig } from './memory-rig.js';
import type { MemoryService } from '../../../src/services/memories.js';
import type { MemoryBatchExtractor, TurnItems } from '../../../src/services/memory-batches.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import { FACT_UPDATE_PROMPT_START } from '../../../src/memories/fact-updates.js';
import { lastUserMessage, startFakeOpenAI, type FakeOpenAI } from '../../fakes/index.js';

/**
 * The steps of the batch extraction (MemoryBatchExtractor) on a test database and an in-memory index, with the
 * fake model server: it answers a batch of numbered turns with one item per turn carrying its turn (or, when
 * `ignoreTurns`, without), and a single turn with one item; a turn saying "gibberish" gets an answer that is no JSON.
 */
for (const profile of testProfiles()) describe(`MemoryBatchExtractor: turns of one memory extracted together, each with its own items and task [${profile}]`, () => {
  let fake: FakeOpenAI;
  let rig: Awaited<ReturnType<typeof memoryRig>>;
  let service: MemoryService;
  let batches: MemoryBatchExtractor;
  let index: SqliteMemoryIndex;
  let ignoreTurns = false;
  const tenant = 'c'.repeat(32);
  const p = tenantPrincipal(tenant);

  before(async () => {
    fake = await startFakeOpenAI({
      dims: 16,
      answer: (messages) => {
        if ((messages[0]?.content ?? '').startsWith(FACT_UPDATE_PROMPT_START)) {
          // Facts stay current: an unreadable answer about Berlin, every candidate updated otherwise.
          const user = lastUserMessage(messages);
          if (/^New fact [^\n]*Berlin/.test(user)) return { answer: 'I cannot tell.' };
          const n = (user.match(/^\d+\. /gm) ?? []).length;
          return { answer: JSON.stringify({ decisions: Array.from({ length: n }, (_, i) => ({ id: i + 1, relation: 'updates' })) }) };
        }
        const said = [...lastUserMessage(messages).matchAll(/User Input: (.*)/g)].map((m) => m[1]!);
        if (said.length === 1 && said[0]!.includes('gibberish')) return { answer: 'Sure! {semantic: [' };
        const batch = said.length > 1 && !ignoreTurns;
        return { answer: JSON.stringify({ semantic: said.map((s, i) => ({ ...(batch ? { turn: i + 1 } : {}), content: `The user said ${s}.` })) }) };
      },
    });
    rig = await memoryRig(profile, tenant, fake.baseUrl, async () => undefined);
    ({ service, index } = rig);
    batches = rig.batches(3);
  });
  after(async () => {
    await fake.close();
    await rig.close();
  });

  const memory = (fields: Record<string, unknown> = {}) =>
    service.create(p, { name: `m-${Math.random()}`, memory_type: ['raw', 'semantic'], embd_id: EMBED, llm_id: CHAT, ...fields });

  async function turns(memoryId: string, said: string[]): Promise<number[]> {
    const ids: number[] = [];
    for (const s of said) ids.push((await service.addTurn(p, { memory_ids: [memoryId], agent_id: 'a', session_id: 's', user_input: s, agent_response: 'ok' }))[0]!.message_id!);
    return ids;
  }
  const task = async (memoryId: string, id: number) => (await rig.store.memories.task(memoryId, id))!;
  const chats = () => fake.requests.filter((r) => r.path === '/v1/chat/completions');
  const embeddings = () => fake.requests.filter((r) => r.path === '/v1/embeddings');

  it('begins at most maxTurns turns, in order; the rest stay waiting; a turn whose task ended is settled untouched', async () => {
    const mem = await memory();
    const ids = await turns(mem.id, ['one', 'two', 'three', 'four', 'five']);
    await batches.endTurns(mem.id, [{ messageId: ids[1]!, message: 'Done: earlier' }]);
    assert.deepEqual(await batches.beginBatch(mem.id, ids), { batch: [ids[0], ids[2], ids[3]], settled: [ids[1]] });
    assert.equal((await task(mem.id, ids[0]!)).progress, 0.15);
    assert.equal((await task(mem.id, ids[1]!)).progress_msg, 'Done: earlier');
    assert.equal((await task(mem.id, ids[4]!)).progress, 0, 'still queued');
  });

  it('a memory without extracted types settles every waiting turn done; a removed raw message fails its turn', async () => {
    const rawOnly = await memory({ memory_type: ['raw'] });
    const ids = await turns(rawOnly.id, ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(await batches.beginBatch(rawOnly.id, ids), { batch: [], settled: ids });
    for (const id of ids) assert.equal((await task(rawOnly.id, id)).progress, 1);
    const mem = await memory();
    const [gone, kept] = await turns(mem.id, ['gone', 'kept']);
    await index.remove(mem.id, [gone!]); // as FIFO removes it
    assert.deepEqual(await batches.beginBatch(mem.id, [gone!, kept!]), { batch: [kept], settled: [gone] });
    assert.deepEqual([(await task(mem.id, gone!)).progress, (await task(mem.id, gone!)).progress_msg], [-1, 'Failed: the memory or its raw message was removed before extraction']);
  });

  it('extracts three turns in one model call and embeds their items in one call; each turn stores its own items from its own source', async () => {
    const mem = await memory();
    const ids = await turns(mem.id, ['I live in Oslo', 'my dog is Rex', 'I like tea']);
    fake.clear();
    const extracted = (await batches.extractBatch(mem.id, ids)) as TurnItems[];
    assert.equal(chats().length, 1, 'one model call for three turns');
    assert.match(chats()[0]!.body.messages[1].content, /Turn 3\nConversation:\nUser Input: I like tea/);
    assert.deepEqual(extracted.map((t) => [t.messageId, t.items.map((i) => i.content)]), [
      [ids[0], ['The user said I live in Oslo.']], [ids[1], ['The user said my dog is Rex.']], [ids[2], ['The user said I like tea.']],
    ]);
    for (const id of ids) assert.match((await task(mem.id, id)).progress_msg, /^The model answered: 1 item\(s\)/);
    const raws = await Promise.all(ids.map((id) => index.get(mem.id, id)));
    assert.deepEqual(extracted.map((t) => t.items[0]!.valid_at), raws.map((r) => r!.valid_at), 'valid_at falls back to each turn\'s own time');

    const stored = await batches.storeBatch(mem.id, extracted);
    assert.equal(embeddings().length, 1, 'one embedding call for the items of three turns');
    assert.deepEqual(stored, ids.map((messageId) => ({ messageId, stored: 1, evicted: 0, alreadyStored: false })));
    for (const [i, id] of ids.entries()) {
      const items = await index.itemsOf(mem.id, [id]);
      assert.deepEqual(items.map((m) => [m.source_id, m.content]), [[id, extracted[i]!.items[0]!.content]]);
    }
    assert.deepEqual(await batches.storeBatch(mem.id, extracted), ids.map((messageId) => ({ messageId, stored: 0, evicted: 0, alreadyStored: true })), 'each turn\'s marker: a repeated step stores nothing');
    assert.equal((await index.usage(mem.id)).messages, 6);
  });

  it('an answer whose items name no turn is asked again turn by turn; a turn whose own answer is unusable fails alone', async () => {
    const mem = await memory();
    const ids = await turns(mem.id, ['I live in Oslo', 'gibberish please', 'I like tea']);
    ignoreTurns = true;
    fake.clear();
    try {
      const extracted = await batches.extractBatch(mem.id, ids);
      assert.equal(chats().length, 4, 'the batch call, then one per turn');
      assert.deepEqual(extracted[0], { messageId: ids[0], items: [{ type: 'semantic', ordinal: 0, content: 'The user said I live in Oslo.', valid_at: (await index.get(mem.id, ids[0]!))!.valid_at, invalid_at: null }], note: '' });
      assert.match((extracted[1] as { error: string }).error, /^the model's answer is not valid JSON/);
      assert.equal((extracted[2] as TurnItems).items.length, 1);
    } finally {
      ignoreTurns = false;
    }
  });

  it('a turn whose item cannot fit in the memory fails alone; the others are stored; each task ends as its own', async () => {
    const mem = await memory({ memory_size: 700 });
    const ids = await turns(mem.id, ['short', 'short too']);
    const long = { type: 'semantic' as const, ordinal: 0, content: 'x '.repeat(400), valid_at: Date.now(), invalid_at: null };
    const ok = { type: 'semantic' as const, ordinal: 0, content: 'The user is brief.', valid_at: Date.now(), invalid_at: null };
    const stored = await batches.storeBatch(mem.id, [{ messageId: ids[0]!, items: [long] }, { messageId: ids[1]!, items: [ok] }]);
    assert.match((stored[0] as { error: string }).error, /needs \d+ bytes, more than the memory holds/);
    assert.deepEqual(stored[1], { messageId: ids[1], stored: 1, evicted: 0, alreadyStored: false });
    const before = await rig.store.memories.countTasksByState();
    await batches.endTurns(mem.id, [{ messageId: ids[0]!, message: (stored[0] as { error: string }).error, failed: true }, { messageId: ids[1]!, message: 'Done: 1 item(s) stored' }]);
    assert.deepEqual([(await task(mem.id, ids[0]!)).progress, (await task(mem.id, ids[1]!)).progress], [-1, 1]);
    const after = await rig.store.memories.countTasksByState();
    assert.deepEqual(['Running', 'Completed', 'Failed'].map((k) => after.get(k)! - before.get(k)!), [-2, 1, 1], 'the metric\'s counts per turn (cairn_memory_extractions)');
    assert.match((await task(mem.id, ids[0]!)).progress_msg, /^Failed: the extracted semantic item/);
  });

  it('facts stay current turn after turn: an unreadable answer about one turn leaves its facts unchecked, the next turn goes on', async () => {
    const mem = await memory();
    const ids = await turns(mem.id, ['Paris', 'Berlin', 'Rome']);
    const fact = (content: string, i: number) => [{ type: 'semantic' as const, ordinal: 0, content, valid_at: 1_800_000_000_000 + i, invalid_at: null }];
    await batches.storeBatch(mem.id, [
      { messageId: ids[0]!, items: fact('The user lives in Paris.', 0) },
      { messageId: ids[1]!, items: fact('The user lives in Berlin.', 1) },
      { messageId: ids[2]!, items: fact('The user lives in Rome.', 2) },
    ]);
    const results = await batches.reconcileBatch(mem.id, ids.slice(1));
    assert.deepEqual(results[0], { messageId: ids[1], replaced: 0, error: results[0]!.error });
    assert.match(results[0]!.error!, /not a JSON object with a decisions list|not valid JSON/);
    assert.deepEqual(results[1], { messageId: ids[2], replaced: 2 }, 'Rome replaces Paris and Berlin');
    const [paris] = await index.itemsOf(mem.id, [ids[0]!]);
    assert.ok(paris!.invalid_at !== null);
  });
});
