import assert from 'node:assert/strict';
import {
  blend, compareRanked, idf, isUsableVector, normalisePagerank, termSimilarity, termWeights, unitScore, vectorSimilarity,
} from '../../../src/retrieval/scoring.js';

describe('scoring', () => {
  it('unitScore clamps to 0..1 and turns NaN / ±Infinity into 0', () => {
    assert.deepEqual([0.25, -3, 7, NaN, Infinity, -Infinity].map(unitScore), [0.25, 0, 1, 0, 0, 0]);
  });

  it('vector similarity is the cosine clamped to 0..1, 0 without a vector', () => {
    assert.deepEqual([0.75, -0.5, 1.0000001, null, NaN].map(vectorSimilarity), [0.75, 0, 1, 0, 0]);
  });

  it('idf is BM25\'s, positive, highest for absent terms', () => {
    assert.equal(idf(10, 5), Math.log(1 + 5.5 / 5.5));
    assert.equal(idf(10, 0), Math.log(1 + 10.5 / 0.5));
    assert.ok(idf(10, 10) > 0);
    assert.equal(idf(10, 99), idf(10, 10), 'frequency is capped by the chunk count');
    assert.equal(idf(0, 0), Math.log(2));
  });

  it('term similarity = weight of query terms present / weight of all query terms', () => {
    const stats = { chunkCount: 6, chunkFrequency: new Map([['solar', 3], ['effici', 2]]) };
    const weights = termWeights(['solar', 'effici', 'absent'], stats);
    const [ws, we, wa] = [Math.log(2), Math.log(1 + 4.5 / 2.5), Math.log(1 + 6.5 / 0.5)];
    assert.deepEqual([...weights.values()], [ws, we, wa]);
    const has = (...stems: string[]) => (stem: string) => stems.includes(stem);
    assert.equal(termSimilarity(weights, has('solar')), ws / (ws + we + wa));
    assert.equal(termSimilarity(weights, has('solar', 'effici', 'absent')), 1);
    assert.equal(termSimilarity(weights, has()), 0);
    assert.equal(termSimilarity(new Map(), has('x')), 0);
    assert.equal(termSimilarity(new Map([['x', NaN]]), has('x')), 0);
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

  it('normalises pagerank to an integer in 0..100', () => {
    assert.deepEqual([5.9, -3, 250, NaN, Infinity].map(normalisePagerank), [5, 0, 100, 0, 0]);
  });

  it('a query vector is usable when it has a finite non-zero component', () => {
    assert.deepEqual([[], [0, 0], [NaN, 0], [0, 0.1]].map(isUsableVector), [false, false, false, true]);
  });
});
