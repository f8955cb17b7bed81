import assert from 'node:assert/strict';
import {
  blend, compareRanked, firstRanked, isUsableVector, normalisePagerank, TERM_EXPONENT, termScale, unitScore, vectorSimilarity,
} from '../../../src/retrieval/scoring.js';

describe('scoring', () => {
  it('unitScore clamps to 0..1 and turns NaN / ±Infinity into 0', () => {
    assert.deepEqual([0.25, -3, 7, NaN, Infinity, -Infinity].map(unitScore), [0.25, 0, 1, 0, 0, 0]);
  });

  it('vector similarity is the cosine clamped to 0..1, 0 without a vector', () => {
    assert.deepEqual([0.75, -0.5, 1.0000001, null, NaN].map(vectorSimilarity), [0.75, 0, 1, 0, 0]);
  });

  it('term similarity = (bm25 / best bm25 of the question) ^ 1/4, in 0..1, in BM25 order', () => {
    const term = termScale([8, 2, 0.5]);
    assert.equal(term(8), 1);
    assert.equal(term(2), (2 / 8) ** TERM_EXPONENT);
    assert.equal(term(0.5), (0.5 / 8) ** 0.25);
    assert.ok(term(8) > term(2) && term(2) > term(0.5), 'keeps the BM25 order');
    assert.equal(term(16), 1, 'clamped');
    assert.deepEqual([0, -1, NaN].map(term), [0, 0, 0]);
    assert.equal(termScale([])(3), 0, 'no full-text hits, no term similarity');
    assert.equal(termScale([NaN, -2, Infinity])(1), 0, 'unusable scores are ignored');
  });

  it('blend weights the vector part by w and the term part by 1 − w, sanitising inputs', () => {
    assert.equal(blend(0.75, 0.5, 0.3), 0.3 * 0.75 + 0.7 * 0.5);
    assert.equal(blend(0.75, 0.5, 0), 0.5);
    assert.equal(blend(0.75, 0.5, 1), 0.75);
    assert.equal(blend(NaN, 0.5, 0.5), 0.25);
    assert.equal(blend(Infinity, 1, 0.5), 0.5);
    assert.equal(blend(1, 1, NaN), 1);
  });

  it('orders by dataset pagerank first, then similarity, then id', () => {
    const items = [
      { id: 'b', similarity: 0.9, pagerank: 0 },
      { id: 'c', similarity: 0.21, pagerank: 1 },
      { id: 'a', similarity: 0.9, pagerank: 0 },
      { id: 'd', similarity: 0.5, pagerank: 1 },
    ];
    assert.deepEqual(items.sort(compareRanked).map((i) => i.id), ['d', 'c', 'a', 'b']);
  });

  it('firstRanked gives the first n in result order without reordering its input', () => {
    const random = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const next = random(7);
    // Few distinct similarities and pageranks, so that ties fall to the id.
    const items = Array.from({ length: 2000 }, (_, i) => ({
      id: `c${i}`, similarity: Math.floor(next() * 50) / 50, pagerank: Math.floor(next() * 3),
    }));
    const before = items.map((i) => i.id);
    const sorted = [...items].sort(compareRanked);
    for (const n of [0, 1, 30, 256, 257, 600, 2000, 5000]) {
      assert.deepEqual(firstRanked(items, n).map((i) => i.id), sorted.slice(0, n).map((i) => i.id), `n = ${n}`);
    }
    assert.deepEqual(items.map((i) => i.id), before, 'input order kept');
    assert.deepEqual(firstRanked([], 30), []);
  });

  it('normalises pagerank to an integer in 0..100', () => {
    assert.deepEqual([5.9, -3, 250, NaN, Infinity].map(normalisePagerank), [5, 0, 100, 0, 0]);
  });

  it('a query vector is usable when it has a finite non-zero component', () => {
    assert.deepEqual([[], [0, 0], [NaN, 0], [0, 0.1]].map(isUsableVector), [false, false, false, true]);
  });
});
