import assert from 'node:assert/strict';
import type { IndexedChunk } from '../../../src/index/chunks/chunk-index.js';
import { retrieve } from '../../../src/retrieval/retrieve.js';
import type { ReferenceChunk, RetrieveDeps, RetrieveParams } from '../../../src/retrieval/types.js';
import { chunk, memoryIndex } from '../index/helpers.js';

/**
 * Hand-built corpus. The query "solar efficiency?" matches a, b, c (and d, which is unavailable) in full
 * text; term similarity is (bm25 / best bm25) ^ 1/4 of the index's own BM25 scores (TERM below). Vectors
 * have integer components whose cosine with e1 is exact.
 */
const corpus: IndexedChunk[] = [
  chunk({ id: 'a', document_id: 'doc1', document_name: 'one.txt', content: 'Solar power basics', vector: [1, 0, 0, 0, 0] }),
  chunk({ id: 'b', document_id: 'doc1', document_name: 'one.txt', content: 'Solar efficiency gains', vector: [0, 1, 0, 0, 0] }),
  chunk({ id: 'c', document_id: 'doc2', document_name: 'two.txt', content: 'Efficiency of wind turbines', vector: [3, 2, 1, 1, 1] }),
  chunk({ id: 'd', document_id: 'doc2', document_name: 'two.txt', content: 'Solar cells', vector: [1, 1, 1, 1, 0], available: false }),
  chunk({ id: 'e', document_id: 'doc2', document_name: 'two.txt', content: 'Hydro dams', vector: [1, 3, 2, 1, 1] }),
  chunk({ id: 'f', document_id: 'doc2', document_name: 'two.txt', content: 'Geothermal heat', vector: [-1, 1, 1, 1, 0] }),
];
const QUESTION = 'solar efficiency?';
const E1 = [1, 0, 0, 0, 0];
/** Term similarity of each chunk for QUESTION, from the index's BM25 scores (filled before the tests). */
const TERM: Record<string, number> = {};

function near(actual: number, expected: number, what: string) {
  assert.ok(Math.abs(actual - expected) < 1e-12, `${what}: ${actual} ≠ ${expected}`);
}

function scores(chunks: ReferenceChunk[]) {
  return chunks.map((c) => [c.id, c.similarity, c.vector_similarity, c.term_similarity] as const);
}

function assertScores(chunks: ReferenceChunk[], expected: [string, number, number, number][]) {
  assert.deepEqual(chunks.map((c) => c.id), expected.map((e) => e[0]));
  scores(chunks).forEach(([id, sim, vec, term], i) => {
    near(sim, expected[i]![1], `${id} similarity`);
    near(vec, expected[i]![2], `${id} vector_similarity`);
    near(term, expected[i]![3], `${id} term_similarity`);
  });
}

async function setup(chunks: IndexedChunk[] = corpus, extra: Partial<RetrieveDeps> = {}) {
  const { index } = memoryIndex();
  await index.upsert(chunks);
  const embedded: string[] = [];
  const deps: RetrieveDeps = {
    index,
    embedQuery: async (text) => {
      embedded.push(text);
      return E1;
    },
    pagerankOf: () => 0,
    ...extra,
  };
  const run = (params: Partial<RetrieveParams> = {}) => retrieve({ question: QUESTION, dataset_ids: ['ds1'], ...params }, deps);
  return { index, deps, run, embedded };
}

describe('retrieve', () => {
  before(async () => {
    const { index } = memoryIndex();
    await index.upsert(corpus);
    const hits = await index.fullText(QUESTION, { datasetIds: ['ds1'], availableOnly: true }, 10);
    const best = Math.max(...hits.map((h) => h.score));
    for (const h of hits) TERM[h.id] = (h.score / best) ** 0.25;
    // b has both words, c the rarer one, a only 'solar', which half the chunks contain (BM25's IDF ~0).
    assert.deepEqual(hits.map((h) => h.id), ['b', 'c', 'a']);
    assert.ok(TERM.c! > 0.9 && TERM.a! < 0.1, JSON.stringify(TERM));
  });

  it('scores the hand-built corpus exactly with the default settings', async () => {
    const { run, embedded } = await setup();
    const result = await run();
    assert.deepEqual(embedded, [QUESTION]);
    assert.equal(result.total, 3);
    assertScores(result.chunks, [
      ['c', 0.3 * 0.75 + 0.7 * TERM.c!, 0.75, TERM.c!],
      ['b', 0.7 * 1, 0, 1],
      ['a', 0.3 * 1 + 0.7 * TERM.a!, 1, TERM.a!],
    ]);
    assert.deepEqual(result.doc_aggs, [{ doc_name: 'one.txt', doc_id: 'doc1', count: 2 }, { doc_name: 'two.txt', doc_id: 'doc2', count: 1 }]);
    const second = result.chunks[1]!;
    assert.deepEqual({ ...second, similarity: 0, vector_similarity: 0, term_similarity: 0 }, {
      id: 'b', content: 'Solar efficiency gains', document_id: 'doc1', document_name: 'one.txt',
      document_keyword: 'one.txt', dataset_id: 'ds1', image_id: '', positions: [], similarity: 0,
      vector_similarity: 0, term_similarity: 0, important_keywords: [], tag_kwd: [], questions: [],
    });
    for (const stage of ['embed', 'fulltext', 'vector', 'fuse', 'rerank', 'total'] as const) {
      assert.ok(Number.isFinite(result.timings[stage]) && result.timings[stage] >= 0, stage);
    }
  });

  it('blends with vector_similarity_weight: 1 = vector only, 0 = term only', async () => {
    const { run } = await setup();
    assertScores((await run({ vector_similarity_weight: 1 })).chunks, [
      ['a', 1, 1, TERM.a!], ['c', 0.75, 0.75, TERM.c!], ['e', 0.25, 0.25, 0],
    ]);
    // a's term similarity is below the 0.2 threshold.
    assertScores((await run({ vector_similarity_weight: 0 })).chunks, [
      ['b', 1, 0, 1], ['c', TERM.c!, 0.75, TERM.c!],
    ]);
    assertScores((await run({ vector_similarity_weight: 0.5 })).chunks, [
      ['c', 0.5 * 0.75 + 0.5 * TERM.c!, 0.75, TERM.c!],
      ['a', 0.5 * 1 + 0.5 * TERM.a!, 1, TERM.a!],
      ['b', 0.5, 0, 1],
    ]);
  });

  it('applies similarity_threshold (inclusive) and never returns unavailable chunks', async () => {
    const { run } = await setup();
    const all = await run({ similarity_threshold: 0 });
    assert.equal(all.total, 5);
    assert.deepEqual(all.chunks.map((c) => c.id), ['c', 'b', 'a', 'e', 'f']);
    near(all.chunks[3]!.similarity, 0.3 * 0.25, 'e');
    assert.equal(all.chunks[4]!.similarity, 0, 'negative cosine counts as 0');
    const strict = await run({ similarity_threshold: 0.7 });
    assert.deepEqual(strict.chunks.map((c) => c.id), ['c', 'b']);
    assert.deepEqual((await run({ similarity_threshold: 0.71 })).chunks.map((c) => c.id), ['c']);
    assert.equal((await run({ similarity_threshold: 0.3 * 0.75 + 0.7 * TERM.c! + 1e-9 })).total, 0);
  });

  it('pages through the thresholded, sorted results', async () => {
    const { run } = await setup();
    const page2 = await run({ page: 2, page_size: 2 });
    assert.deepEqual([page2.total, page2.chunks.map((c) => c.id)], [3, ['a']]);
    assert.equal(page2.doc_aggs.reduce((n, d) => n + d.count, 0), 3, 'doc_aggs cover all pages');
    const page3 = await run({ page: 3, page_size: 2 });
    assert.deepEqual([page3.total, page3.chunks], [3, []]);
  });

  it('orders doc_aggs by count, then name, then the best chunk of each document', async () => {
    // Documents x and y share a name and a count; y's chunk ranks higher (its term similarity) though x's is
    // the nearer vector (found first by the vector leg): y comes first.
    const { run } = await setup([
      chunk({ id: 'p', document_id: 'x', document_name: 'same.txt', content: 'solar', vector: [1, 0, 0, 0, 0] }),
      chunk({ id: 'q', document_id: 'y', document_name: 'same.txt', content: 'solar efficiency', vector: [1, 1, 0, 0, 0] }),
      chunk({ id: 'r', document_id: 'z', document_name: 'alpha.txt', content: 'solar', vector: [1, 2, 0, 0, 0] }),
      chunk({ id: 's', document_id: 'w', document_name: 'zeta.txt', content: 'solar', vector: [1, 3, 0, 0, 0] }),
      chunk({ id: 't', document_id: 'w', document_name: 'zeta.txt', content: 'solar efficiency', vector: [1, 3, 0, 0, 0] }),
    ]);
    const result = await run({ similarity_threshold: 0 });
    assert.deepEqual(result.doc_aggs.map((d) => [d.doc_id, d.count]), [['w', 2], ['z', 1], ['y', 1], ['x', 1]]);
  });

  it('pages through many candidates in result order', async () => {
    const many = Array.from({ length: 200 }, (_, i) => chunk({
      id: `m${String(i).padStart(3, '0')}`, document_id: `doc${i % 7}`, document_name: `d${i % 7}.txt`,
      content: i % 3 ? 'solar panels' : 'solar efficiency', vector: [1 + (i % 11), i % 5, 1, 0, 0],
    }));
    const { run } = await setup(many);
    const all = await run({ similarity_threshold: 0, page_size: 200 });
    assert.equal(all.total, 200);
    const pages = [];
    for (let page = 1; page <= 7; page++) pages.push(...(await run({ similarity_threshold: 0, page, page_size: 30 })).chunks);
    assert.deepEqual(pages.map((c) => c.id), all.chunks.map((c) => c.id));
    const ranked = all.chunks.map((c) => c.similarity);
    assert.deepEqual(ranked, [...ranked].sort((a, b) => b - a));
  });

  it('filters by document_ids and dataset_ids', async () => {
    const other = chunk({ id: 'x', dataset_id: 'ds2', document_id: 'doc9', content: 'solar efficiency report', vector: E1 });
    const { run } = await setup([...corpus, other]);
    assert.deepEqual((await run({ document_ids: ['doc2'] })).chunks.map((c) => c.id), ['c']);
    assert.ok(!(await run()).chunks.some((c) => c.id === 'x'));
    assert.equal((await run({ dataset_ids: ['ds2'] })).chunks[0]?.id, 'x');
    assert.equal((await run({ dataset_ids: ['ds1', 'ds2'] })).chunks[0]?.id, 'x');
  });

  it('restricts to documents matching metadata_condition', async () => {
    const documentMetadata = async (datasetIds: string[]) => {
      assert.deepEqual(datasetIds, ['ds1']);
      return [{ document_id: 'doc1', meta_fields: { lang: 'en' } }, { document_id: 'doc2', meta_fields: { lang: 'fr' } }];
    };
    const { run } = await setup(corpus, { documentMetadata });
    const fr = { conditions: [{ name: 'lang', comparison_operator: '=' as const, value: 'FR' }] };
    assert.deepEqual((await run({ metadata_condition: fr })).chunks.map((c) => c.id), ['c']);
    assert.equal((await run({ metadata_condition: fr, document_ids: ['doc1'] })).total, 0);
    const none = { conditions: [{ name: 'lang', comparison_operator: '=' as const, value: 'de' }] };
    assert.deepEqual(await run({ metadata_condition: none }).then((r) => [r.total, r.chunks]), [0, []]);
    assert.equal((await run({ metadata_condition: { conditions: [] } })).total, 3);
    const { run: withoutDeps } = await setup();
    await assert.rejects(withoutDeps({ metadata_condition: fr }), /documentMetadata/);
  });

  it('a rerank score replaces the vector part (and is reported as vector_similarity), sanitised', async () => {
    const calls: [string, string[]][] = [];
    const byContent: Record<string, number> = {
      'Solar power basics': 0.5, 'Solar efficiency gains': NaN, 'Efficiency of wind turbines': 1.5,
      'Hydro dams': Infinity, 'Geothermal heat': 0.25,
    };
    const rerank = async (query: string, docs: string[]) => {
      calls.push([query, docs]);
      return docs.map((d) => byContent[d]!);
    };
    const { run } = await setup(corpus, { rerank });
    const result = await run({ similarity_threshold: 0 });
    assert.equal(calls.length, 1);
    assert.equal(calls[0]![0], QUESTION);
    assert.deepEqual([...calls[0]![1]].sort(), Object.keys(byContent).sort());
    assertScores(result.chunks, [
      ['c', 0.3 * 1 + 0.7 * TERM.c!, 1, TERM.c!],
      ['b', 0.7, 0, 1],
      ['a', 0.3 * 0.5 + 0.7 * TERM.a!, 0.5, TERM.a!],
      ['f', 0.3 * 0.25, 0.25, 0],
      ['e', 0, 0, 0],
    ]);
  });

  it('ranks datasets with a higher pagerank first, keeping similarity unboosted', async () => {
    const boosted = chunk({ id: 'p', dataset_id: 'ds2', document_id: 'doc9', content: 'efficiency', vector: [0, 1, 0, 0, 0] });
    const { run: flat } = await setup([...corpus, boosted]);
    const unboosted = await flat({ dataset_ids: ['ds1', 'ds2'] });
    assert.equal(unboosted.chunks.at(-1)?.id, 'p');
    const { run } = await setup([...corpus, boosted], { pagerankOf: async (id) => (id === 'ds2' ? 10 : 0) });
    const result = await run({ dataset_ids: ['ds1', 'ds2'] });
    assert.deepEqual(result.chunks.map((c) => c.id), ['p', ...unboosted.chunks.slice(0, -1).map((c) => c.id)]);
    assert.deepEqual(scores(result.chunks).sort(), scores(unboosted.chunks).sort(), 'same similarities');
  });

  it('handles datasets whose embeddings have different dimensions', async () => {
    const small = chunk({ id: 's', dataset_id: 'mini', document_id: 'doc7', content: 'solar efficiency', vector: [1, 0, 0] });
    const { run } = await setup([...corpus, small]);
    const result = await run({ dataset_ids: ['ds1', 'mini'] });
    const s = result.chunks.find((c) => c.id === 's');
    assert.ok(s, 'found by full text');
    assert.deepEqual([s.vector_similarity, s.term_similarity], [0, 1]);
    near(s.similarity, 0.7, 's similarity');
  });

  it('keeps every score finite and in 0..1 when the model returns NaN or Infinity', async () => {
    const { run } = await setup(corpus, { embedQuery: async () => [NaN, Infinity, 1, 0, 0] });
    const result = await run({ similarity_threshold: 0 });
    assert.ok(result.chunks.length > 0);
    for (const c of result.chunks) {
      for (const v of [c.similarity, c.vector_similarity, c.term_similarity]) assert.ok(Number.isFinite(v) && v >= 0 && v <= 1);
    }
    assert.ok(!JSON.stringify(result).includes('null'));
  });

  it('ranks by term similarity alone when the query vector is all zeros', async () => {
    const { run } = await setup(corpus, { embedQuery: async () => [0, 0, 0, 0, 0] });
    assertScores((await run()).chunks, [['b', 1, 0, 1], ['c', TERM.c!, 0, TERM.c!]]);
  });

  it('fails with the model\'s error when embedding fails, even if full-text search fails first', async () => {
    const { run } = await setup(corpus, { embedQuery: async () => Promise.reject(new Error('model down')) });
    await assert.rejects(run(), /model down/);
    const { deps } = await setup(corpus, { embedQuery: () => new Promise((_, reject) => setTimeout(() => reject(new Error('late')), 5)) });
    const failing = { ...deps, index: Object.assign(Object.create(deps.index), { fullText: async () => { throw new Error('fts broken'); } }) };
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      await assert.rejects(retrieve({ question: QUESTION, dataset_ids: ['ds1'] }, failing), /fts broken/);
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      process.off('unhandledRejection', listener);
    }
    assert.deepEqual(unhandled, []);
  });

  it('runs the vector search while full-text search is still running (reader threads serve both at once)', async () => {
    const { deps, run } = await setup();
    let vectorStarted!: () => void;
    const vectorSearchStarted = new Promise<void>((resolve) => (vectorStarted = resolve));
    const real = deps.index;
    deps.index = Object.assign(Object.create(real), {
      fullText: async (...args: Parameters<typeof real.fullText>) => {
        await vectorSearchStarted; // before the overlap, retrieval waited for this before searching vectors
        return real.fullText(...args);
      },
      vectorSearch: (...args: Parameters<typeof real.vectorSearch>) => {
        vectorStarted();
        return real.vectorSearch(...args);
      },
    });
    assert.deepEqual((await run()).chunks.map((c) => c.id).sort(), (await retrieve({ question: QUESTION, dataset_ids: ['ds1'] }, { ...deps, index: real })).chunks.map((c) => c.id).sort());
  });

  it('returns an empty result for a blank question without embedding it', async () => {
    const { run, embedded } = await setup();
    for (const question of ['', '   ']) {
      const result = await run({ question });
      assert.deepEqual([result.total, result.chunks, result.doc_aggs], [0, [], []]);
    }
    assert.deepEqual(embedded, []);
  });

  it('highlights matched words and returns the parent text of parent-child chunks', async () => {
    const child = chunk({ id: 'k', document_id: 'doc3', content: 'Solar efficiency child', parent_content: 'The whole solar parent section', vector: E1 });
    const { run } = await setup([...corpus, child]);
    const result = await run({ highlight: true });
    const k = result.chunks.find((c) => c.id === 'k');
    assert.equal(k?.content, 'The whole solar parent section');
    assert.equal(k?.highlight, 'The whole <em>solar</em> parent section');
    assert.equal(result.chunks.find((c) => c.id === 'b')?.highlight, '<em>Solar</em> <em>efficiency</em> gains');
    assert.equal((await run()).chunks[0]?.highlight, undefined);
  });
});
