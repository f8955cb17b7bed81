import assert from 'node:assert/strict';
import { openIndexDatabase } from '../../../src/index/sqlite-database.js';
import { SqliteMemoryIndex } from '../../../src/index/memories/sqlite-memory-index.js';
import type { NewMemoryMessage } from '../../../src/index/memories/memory-index.js';
import type { MemoryIndex } from '../../../src/index/memories/memory-index.js';
import { hybridSimilarity, SEARCH_CANDIDATES, searchMessages, VECTOR_CANDIDATES, vectorCandidates } from '../../../src/memories/search.js';

/** Four-dimensional "meanings": the query vector is given per test. */
async function corpus() {
  const index = new SqliteMemoryIndex(openIndexDatabase(':memory:'));
  const add = async (content: string, vector: number[], valid_at: number) => {
    const m: NewMemoryMessage = { message_type: 'raw', source_id: 0, user_id: 'u', agent_id: 'a', session_id: 's', content, vector, valid_at };
    return (await index.add('m1', [m], { limit: 1e7, tenantId: 't' })).messageIds[0]!;
  };
  const ids = {
    // Shares the query's words, not its meaning.
    words: await add('alpine hiking boots', [0, 1, 0, 0], 1000),
    // Shares its meaning, not its words.
    meaning: await add('mountain trekking footwear', [1, 0, 0, 0], 2000),
    // Neither.
    neither: await add('quarterly tax forms', [0, 0, 1, 0], 3000),
  };
  return { index, ids };
}

const run = (index: SqliteMemoryIndex, params: Record<string, unknown>, vector = [1, 0, 0, 0]) =>
  searchMessages({ query: 'alpine hiking boots', filter: { memoryIds: ['m1'] }, ...params }, { index, embedQuery: async () => vector });

describe('memories: search_message scoring', () => {
  it('similarity = kw · term + (1 − kw) · vector, so 0.5 weighs keywords and meaning equally', () => {
    assert.equal(hybridSimilarity(1, 0, 0.5), 0.5);
    assert.equal(hybridSimilarity(0, 1, 0.5), 0.5);
    assert.ok(Math.abs(hybridSimilarity(1, 0, 0.7) - 0.7) < 1e-12, 'the default 0.7 leans on keywords');
    assert.equal(hybridSimilarity(NaN, Infinity, 0.5), 0, 'never NaN');
  });

  it('with weight 0.5 a pure keyword match and a pure meaning match score the same', async () => {
    const { index, ids } = await corpus();
    const hits = await run(index, { keywords_similarity_weight: 0.5, similarity_threshold: 0 });
    const score = (id: number) => hits.find((h) => h.message.message_id === id)!.similarity;
    assert.ok(Math.abs(score(ids.words) - 0.5) < 1e-6, String(score(ids.words)));
    assert.ok(Math.abs(score(ids.meaning) - 0.5) < 1e-6, String(score(ids.meaning)));
  });

  it('weight 1 is keyword search only, weight 0 is vector search only', async () => {
    const { index, ids } = await corpus();
    const keywordOnly = await run(index, { keywords_similarity_weight: 1, similarity_threshold: 0.5 });
    assert.deepEqual(keywordOnly.map((h) => h.message.message_id), [ids.words]);
    const vectorOnly = await run(index, { keywords_similarity_weight: 0, similarity_threshold: 0.5 });
    assert.deepEqual(vectorOnly.map((h) => h.message.message_id), [ids.meaning]);
  });

  it('the threshold drops weak matches; the best top_n are kept and returned most recent first; scores stay in 0..1', async () => {
    const { index, ids } = await corpus();
    const all = await run(index, { keywords_similarity_weight: 0.3, similarity_threshold: 0 });
    assert.deepEqual(all.map((h) => h.message.message_id), [ids.neither, ids.meaning, ids.words], 'valid_at descending');
    for (const h of all) for (const s of [h.similarity, h.term_similarity, h.vector_similarity]) assert.ok(Number.isFinite(s) && s >= 0 && s <= 1);
    const best = await run(index, { keywords_similarity_weight: 0.3, similarity_threshold: 0, top_n: 1 });
    assert.deepEqual(best.map((h) => h.message.message_id), [ids.meaning], 'top_n picks by similarity (0.7 vector > 0.3 keywords)');
    const strict = await run(index, { keywords_similarity_weight: 0.3, similarity_threshold: 0.6 });
    assert.deepEqual(strict.map((h) => h.message.message_id), [ids.meaning]);
  });

  it('a zero query vector means term similarity alone, never NaN', async () => {
    const { index, ids } = await corpus();
    const hits = await run(index, { similarity_threshold: 0.1 }, [0, 0, 0, 0]);
    assert.deepEqual(hits.map((h) => [h.message.message_id, h.similarity, h.vector_similarity]), [[ids.words, 1, 0]]);
  });

  it('an empty query or no memories finds nothing', async () => {
    const { index } = await corpus();
    assert.deepEqual(await searchMessages({ query: '  ', filter: { memoryIds: ['m1'] } }, { index, embedQuery: async () => [1, 0, 0, 0] }), []);
    assert.deepEqual(await searchMessages({ query: 'boots', filter: { memoryIds: [] } }, { index, embedQuery: async () => [1, 0, 0, 0] }), []);
  });

  describe('vector candidates', () => {
    /** A seeded generator, so a failure can be replayed. */
    function prng(seed: number) {
      let x = seed;
      return () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    }
    const WORDS = ['river', 'stone', 'cabin', 'lantern', 'orchard', 'harbor', 'meadow', 'violin', 'ember', 'glacier', 'copper', 'willow'];

    /** One message in four has this vector, and some queries too: ties among the nearest. */
    const CLUSTER = [1, 0, 0, 0, 0, 0];

    /** 600 messages of a few words from a small vocabulary and 6-dimensional vectors: many full-text ties, and vector ties. */
    async function bigMemory(random: () => number) {
      const index = new SqliteMemoryIndex(openIndexDatabase(':memory:'));
      const word = () => WORDS[Math.floor(random() * WORDS.length)]!;
      const vector = () => Array.from({ length: 6 }, () => random() * 2 - 1);
      const messages: NewMemoryMessage[] = Array.from({ length: 600 }, (_, i) => ({
        message_type: 'raw', source_id: 0, user_id: 'u', agent_id: 'a', session_id: 's',
        content: Array.from({ length: 2 + Math.floor(random() * 6) }, word).join(' '), vector: i % 4 === 0 ? CLUSTER : vector(), valid_at: i,
      }));
      await index.add('m1', messages, { limit: 1e9, tenantId: 't' });
      return { index, word, vector };
    }

    /** The index with every leg asked for the whole pool at once, and the limits the vector searches asked for. */
    function wrap(index: SqliteMemoryIndex) {
      const limits: number[] = [];
      const counted = Object.assign(Object.create(index) as MemoryIndex, {
        vectorSearch: (v: number[], f: never, limit: number) => (limits.push(limit), index.vectorSearch(v, f, limit)),
      });
      const wholePool = Object.assign(Object.create(index) as MemoryIndex, {
        fullText: (q: string, f: never) => index.fullText(q, f, SEARCH_CANDIDATES),
        vectorSearch: (v: number[], f: never) => index.vectorSearch(v, f, SEARCH_CANDIDATES),
      });
      return { counted, wholePool, limits };
    }

    it('the vector leg takes 100 candidates, or 10 · top_n, and a scoped search the whole pool', () => {
      assert.equal(vectorCandidates(10, false), VECTOR_CANDIDATES);
      assert.equal(vectorCandidates(30, false), 300);
      assert.equal(vectorCandidates(200, false), SEARCH_CANDIDATES);
      assert.equal(vectorCandidates(10, true), SEARCH_CANDIDATES);
    });

    it('return what the whole pool of vector candidates returns: the same messages and scores, whatever the weight, threshold and top_n', async () => {
      const random = prng(7);
      const { index, word, vector } = await bigMemory(random);
      const { counted, wholePool, limits } = wrap(index);
      for (let q = 0; q < 60; q++) {
        const params = {
          query: Array.from({ length: 1 + Math.floor(random() * 3) }, word).join(' '),
          filter: { memoryIds: ['m1'] },
          top_n: [1, 5, 10, 30][q % 4]!,
          similarity_threshold: [0, 0.2, 0.5][q % 3]!,
          keywords_similarity_weight: [0, 0.3, 0.7, 1][Math.floor(q / 4) % 4]!,
        };
        const v = q % 5 === 0 ? CLUSTER : vector();
        limits.length = 0;
        const got = await searchMessages(params, { index: counted, embedQuery: async () => v });
        const want = await searchMessages(params, { index: wholePool, embedQuery: async () => v });
        assert.deepEqual(got.map((h) => [h.message.message_id, h.similarity]), want.map((h) => [h.message.message_id, h.similarity]), JSON.stringify(params));
        assert.deepEqual(limits, [vectorCandidates(params.top_n, false)], 'one vector search, of the small pool');
        assert.ok(want.length > 0);
      }
    });
  });
});
