import assert from 'node:assert/strict';
import { openIndexDatabase } from '../../../src/index/sqlite-database.js';
import { SqliteMemoryIndex } from '../../../src/index/memories/sqlite-memory-index.js';
import type { MemoryType, NewMemoryMessage } from '../../../src/index/memories/memory-index.js';
import { searchMessages } from '../../../src/memories/search.js';
import { isStaleTurn, STALE_TURN_WEIGHT } from '../../../src/memories/stale-turns.js';

const NOW = 1_000_000;

/**
 * A memory where the question shares more words with the turn whose fact was replaced than with the turn
 * that replaced it (the knowledge-update case); vectors are equal, so words decide.
 */
async function updatedJob() {
  const index = new SqliteMemoryIndex(openIndexDatabase(':memory:'));
  const add = async (message_type: MemoryType, content: string, source_id = 0, valid_at = 1000) => {
    const m: NewMemoryMessage = { message_type, source_id, user_id: 'u', agent_id: 'a', session_id: 's', content, vector: [1, 0, 0, 0], valid_at };
    return (await index.add('m1', [m], { limit: 1e7, tenantId: 't' })).messageIds[0]!;
  };
  // Everyday turns, so that the question's words are rare (as in a real memory) and BM25 weighs them.
  for (const topic of ['weather', 'recipes', 'holidays', 'taxes', 'gardening', 'music', 'football', 'books']) {
    await add('raw', `User Input: tell me about ${topic}\nAgent Response: Sure.`);
  }
  const oldTurn = await add('raw', 'User Input: these days my job is barista at the café, my job starts early these days\nAgent Response: Early mornings.');
  const oldFact = await add('semantic', 'The user works as a barista.', oldTurn);
  const newTurn = await add('raw', 'User Input: I quit the café; my job is junior web developer now\nAgent Response: Good luck!', 0, 2000);
  const newFact = await add('semantic', 'The user is now a junior web developer.', newTurn, 2000);
  await index.invalidate('m1', oldFact, 2000, newFact);
  return { index, oldTurn, newTurn, oldFact, newFact };
}

const search = (index: SqliteMemoryIndex, params: { currentAt?: number; top_n?: number; raw?: boolean }) =>
  searchMessages(
    {
      query: 'what is my job these days',
      filter: { memoryIds: ['m1'], currentAt: params.currentAt },
      similarity_threshold: 0,
      top_n: params.top_n,
      scope: params.raw ? { messageTypes: ['raw'] } : undefined,
    },
    { index, embedQuery: async () => [1, 0, 0, 0] },
  );

const bySimilarity = (hits: Awaited<ReturnType<typeof search>>) => [...hits].sort((a, b) => b.similarity - a.similarity).map((h) => h.message.message_id);

describe('memories: turns whose facts were replaced rank lower', () => {
  it('a turn is stale when it has facts and none is current; other item types and future invalid_at do not count', () => {
    const fact = (invalid_at: number | null) => ({ message_type: 'semantic' as const, invalid_at });
    assert.equal(isStaleTurn([fact(10)], NOW), true);
    assert.equal(isStaleTurn([fact(10), fact(20)], NOW), true, 'every fact replaced');
    assert.equal(isStaleTurn([fact(10), fact(null)], NOW), false, 'one fact still current');
    assert.equal(isStaleTurn([fact(NOW + 1)], NOW), false, 'an invalid_at still in the future');
    assert.equal(isStaleTurn([], NOW), false, 'nothing extracted (yet)');
    assert.equal(isStaleTurn([{ message_type: 'episodic', invalid_at: 10 }], NOW), false, 'events are not facts');
    assert.equal(isStaleTurn([fact(10), { message_type: 'episodic', invalid_at: null }], NOW), true, 'only facts decide');
  });

  it('without the rule the replaced turn shares more words with the question and ranks first (include_invalid)', async () => {
    const { index, oldTurn, newTurn } = await updatedJob();
    const hits = await search(index, { raw: true });
    assert.deepEqual(bySimilarity(hits).slice(0, 2), [oldTurn, newTurn]);
  });

  it('a default (current-only) raw search ranks the replaced turn below the turn that replaced it, at half its similarity', async () => {
    const { index, oldTurn, newTurn } = await updatedJob();
    const history = await search(index, { raw: true });
    const current = await search(index, { raw: true, currentAt: NOW });
    assert.deepEqual(bySimilarity(current).slice(0, 2), [newTurn, oldTurn], 'still returned, ranked lower');
    const sim = (hits: typeof current, id: number) => hits.find((h) => h.message.message_id === id)!.similarity;
    assert.ok(Math.abs(sim(current, oldTurn) - STALE_TURN_WEIGHT * sim(history, oldTurn)) < 1e-9);
    assert.equal(sim(current, newTurn), sim(history, newTurn), 'the current turn keeps its score');
    const stale = current.find((h) => h.message.message_id === oldTurn)!;
    assert.equal(stale.term_similarity, history.find((h) => h.message.message_id === oldTurn)!.term_similarity, 'its parts are shown unchanged');
  });

  it('top_n 1 in a turns-and-items search keeps the current turn or fact, never the stale turn', async () => {
    const { index, oldTurn, oldFact } = await updatedJob();
    const [best] = await search(index, { currentAt: NOW, top_n: 1 });
    assert.ok(best && best.message.message_id !== oldTurn && best.message.message_id !== oldFact, JSON.stringify(best?.message));
    const all = await search(index, { currentAt: NOW });
    assert.ok(!all.some((h) => h.message.message_id === oldFact), 'the replaced fact itself stays hidden');
  });

  it('a turn with one fact still current, or a retracted fact corrected nowhere, is judged by its facts', async () => {
    const { index, oldTurn, newTurn } = await updatedJob();
    const [extra] = (await index.add('m1', [{ message_type: 'semantic', source_id: oldTurn, user_id: 'u', agent_id: 'a', session_id: 's', content: 'The user gets up early.', vector: [1, 0, 0, 0], valid_at: 1000 }], { limit: 1e7, tenantId: 't' })).messageIds;
    assert.deepEqual(bySimilarity(await search(index, { raw: true, currentAt: NOW })).slice(0, 2), [oldTurn, newTurn], 'one of its facts still holds');
    await index.invalidate('m1', extra!, 3000, null); // retracted
    assert.deepEqual(bySimilarity(await search(index, { raw: true, currentAt: NOW })).slice(0, 2), [newTurn, oldTurn]);
  });
});
