import assert from 'node:assert/strict';
import type { SqliteMemoryIndex } from '../../../src/index/memories/sqlite-memory-index.js';
import { CHAT, EMBED, memoryRig } from './memory-rig.js';
import type { MemoryService } from '../../../src/services/memories.js';
import { BUILTIN_FACTS_UNCHECKED, type MemoryExtractor } from '../../../src/services/memory-extractor.js';
import { BUILTIN_CHAT_MODEL_ID } from '../../../src/models/builtin/spec.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import { FACT_UPDATE_PROMPT_START, parseFactDecisions } from '../../../src/memories/fact-updates.js';
import { lastUserMessage, startFakeOpenAI, type FakeOpenAI } from '../../fakes/index.js';

describe('facts stay current: the update question and its answer', () => {
  const candidates = [{ message_id: 7, content: 'a', valid_at: 0 }, { message_id: 9, content: 'b', valid_at: 0 }];

  it('reads decisions by candidate number; unknown numbers, relations and repeats are skipped', () => {
    const answer = '```json\n{"decisions":[{"id":2,"relation":"Updates"},{"id":2,"relation":"adds"},{"id":5,"relation":"updates"},{"id":1,"relation":"maybe"}]}\n```';
    assert.deepEqual(parseFactDecisions(answer, candidates), [{ message_id: 9, relation: 'updates' }]);
  });

  it('an answer that is not a JSON object is an InvalidExtractionError', () => {
    assert.throws(() => parseFactDecisions('I think so', candidates), { name: 'InvalidExtractionError' });
  });
});

describe('MemoryExtractor.reconcileFacts', () => {
  let fake: FakeOpenAI;
  let rig: Awaited<ReturnType<typeof memoryRig>>;
  let service: MemoryService;
  let extractor: MemoryExtractor;
  let index: SqliteMemoryIndex;
  const tenant = 'b'.repeat(32);
  const p = tenantPrincipal(tenant);
  let relation = 'updates';
  /** The existing facts of every update question the model was asked, in order. */
  const asked: string[][] = [];

  before(async () => {
    fake = await startFakeOpenAI({
      dims: 16,
      answer: (messages) => {
        if (!(messages[0]?.content ?? '').startsWith(FACT_UPDATE_PROMPT_START)) return { answer: '{}' };
        const listed = [...lastUserMessage(messages).matchAll(/^\d+\. (.*) \(since [^)]*\)$/gm)].map((m) => m[1]!);
        asked.push(listed);
        const n = listed.length;
        return { answer: JSON.stringify({ decisions: Array.from({ length: n }, (_, i) => ({ id: i + 1, relation })) }) };
      },
    });
    rig = await memoryRig('embedded', tenant, fake.baseUrl, async () => undefined);
    ({ service, extractor, index } = rig);
  });
  after(async () => {
    await fake.close();
    await rig.close();
  });

  async function turnWithFact(memoryId: string, fact: string) {
    const [turn] = await service.addTurn(p, { memory_ids: [memoryId], agent_id: 'a', session_id: 's', user_input: fact, agent_response: 'ok' });
    await extractor.storeItems(memoryId, turn!.message_id!, [{ type: 'semantic', ordinal: 0, content: fact, valid_at: Date.now(), invalid_at: null }]);
    return { raw: turn!.message_id!, item: (await index.itemsOf(memoryId, [turn!.message_id!]))[0]! };
  }

  it('an updated fact gets invalid_at and replaced_by; running again changes nothing; a fact that only adds stays current', async () => {
    const mem = await service.create(p, { name: 'facts', memory_type: ['raw', 'semantic'], embd_id: EMBED, llm_id: CHAT });
    const paris = await turnWithFact(mem.id, 'The user lives in Paris.');
    assert.deepEqual(await extractor.reconcileFacts(mem.id, paris.raw), { replaced: 0 }, 'nothing earlier to compare with');
    const berlin = await turnWithFact(mem.id, 'The user lives in Berlin.');
    assert.deepEqual(await extractor.reconcileFacts(mem.id, berlin.raw), { replaced: 1 });
    const old = (await index.get(mem.id, paris.item.message_id))!;
    assert.equal(old.replaced_by, berlin.item.message_id);
    assert.equal(old.invalid_at, berlin.item.valid_at);
    assert.deepEqual(await extractor.reconcileFacts(mem.id, berlin.raw), { replaced: 0 }, 'idempotent');
    relation = 'adds';
    const rome = await turnWithFact(mem.id, 'The user lives in Berlin and works in Rome.');
    assert.deepEqual(await extractor.reconcileFacts(mem.id, rome.raw), { replaced: 0 });
    assert.equal((await index.get(mem.id, berlin.item.message_id))!.invalid_at, null);
  });

  it('only earlier semantic facts are put to the model, five at most: raw turns and episodic items take no place', async () => {
    relation = 'adds';
    const mem = await service.create(p, { name: 'scope', memory_type: ['raw', 'semantic', 'episodic'], embd_id: EMBED, llm_id: CHAT });
    const facts = ['The user likes tea.', 'The user likes green tea.', 'The user likes black tea.', 'The user likes iced tea.', 'The user likes mint tea.', 'The user likes herbal tea.'];
    for (const fact of facts) await turnWithFact(mem.id, fact);
    // Turns and an episodic item saying nearly the same as the new fact, which a search of every type ranks first.
    for (const said of ['The user likes lemon tea.', 'The user likes lemon tea!']) {
      await service.addTurn(p, { memory_ids: [mem.id], agent_id: 'a', session_id: 's', user_input: said, agent_response: said });
    }
    const [episode] = await service.addTurn(p, { memory_ids: [mem.id], agent_id: 'a', session_id: 's', user_input: 'hi', agent_response: 'hello' });
    await extractor.storeItems(mem.id, episode!.message_id!, [{ type: 'episodic', ordinal: 0, content: 'The user said they like lemon tea.', valid_at: Date.now(), invalid_at: null }]);
    const lemon = await turnWithFact(mem.id, 'The user likes lemon tea.');
    asked.length = 0;
    await extractor.reconcileFacts(mem.id, lemon.raw);
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.length, 5, `five candidates, got ${JSON.stringify(asked[0])}`);
    for (const candidate of asked[0]!) assert.ok(facts.includes(candidate), `"${candidate}" is an earlier semantic fact`);
  });

  it('the built-in chat model does not judge fact updates: every earlier fact stays current and the outcome says why', async () => {
    const mem = await service.create(p, { name: 'builtin', memory_type: ['raw', 'semantic'], embd_id: EMBED, llm_id: BUILTIN_CHAT_MODEL_ID });
    const paris = await turnWithFact(mem.id, 'The user lives in Paris.');
    const berlin = await turnWithFact(mem.id, 'The user lives in Berlin.');
    asked.length = 0;
    assert.deepEqual(await extractor.reconcileFacts(mem.id, berlin.raw), { replaced: 0, unchecked: BUILTIN_FACTS_UNCHECKED });
    assert.equal(asked.length, 0, 'no question asked');
    assert.equal((await index.get(mem.id, paris.item.message_id))!.invalid_at, null);
  });
});
