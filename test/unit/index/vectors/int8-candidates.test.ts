import assert from 'node:assert/strict';
import { INT8_MIN_ROWS, int8Candidates, type ScanGroup } from '../../../../src/index/vectors/int8-candidates.js';
import { Int8RowsBuilder, scanInt8, strideOf, toInt8Query } from '../../../../src/index/vectors/int8-rows.js';
import { seededRandom } from '../../../../src/seeded-random.js';

/** `count` vectors of `dim` components in -1..1 from `seed`. */
function randomVectors(count: number, dim: number, seed: number): Float32Array {
  const random = seededRandom(seed);
  return Float32Array.from({ length: count * dim }, () => random() * 2 - 1);
}

function groupOf(vectors: Float32Array, dim: number, options: { firstRow?: number; available?: (i: number) => boolean } = {}): ScanGroup {
  const count = vectors.length / dim;
  const builder = new Int8RowsBuilder(count, dim);
  for (let i = 0; i < count; i++) builder.set(i, vectors, i * dim);
  return {
    dim,
    rows: Float64Array.from({ length: count }, (_, i) => (options.firstRow ?? 1) + i),
    available: Uint8Array.from({ length: count }, (_, i) => (options.available?.(i) ?? true ? 1 : 0)),
    int8: builder.done(),
  };
}

function cosine(vectors: Float32Array, i: number, query: Float32Array): number {
  const dim = query.length;
  let dot = 0, a = 0, b = 0;
  for (let j = 0; j < dim; j++) {
    dot += vectors[i * dim + j]! * query[j]!;
    a += vectors[i * dim + j]! ** 2;
    b += query[j]! ** 2;
  }
  return dot / Math.sqrt(a * b);
}

/** Row ids (firstRow 1) of the `k` best rows by exact cosine among those `keep` accepts. */
function exactTop(vectors: Float32Array, query: Float32Array, k: number, keep = (_i: number) => true): number[] {
  const count = vectors.length / query.length;
  const order = Array.from({ length: count }, (_, i) => i).filter(keep);
  const cosines = order.map((i) => cosine(vectors, i, query));
  return order.map((i, k2) => [i, cosines[k2]!] as const).sort((x, y) => y[1] - x[1]).slice(0, k).map(([i]) => i + 1);
}

describe('int8 coarse stage (int8-wasm.ts, int8-rows.ts, int8-candidates.ts)', () => {
  for (const dim of [1, 15, 16, 17, 100, 384]) {
    it(`scores rows by their integer dot product with the query over the row's integer norm, at ${dim} dimensions`, () => {
      const vectors = randomVectors(40, dim, dim);
      const group = groupOf(vectors, dim);
      const query = toInt8Query(randomVectors(1, dim, 1000 + dim), dim)!;
      const { scores } = scanInt8(group.int8!, query)!;
      const heap = new Int8Array(group.int8!.memory.buffer);
      for (let i = 0; i < 40; i++) {
        let dot = 0, squares = 0;
        for (let j = 0; j < dim; j++) {
          const v = heap[i * strideOf(dim) + j]!;
          assert.ok(Math.abs(v) <= 127);
          dot += v * query.values[j]!;
          squares += v * v;
        }
        assert.equal(scores[i], Math.fround(Math.fround(dot) * Math.fround(1 / Math.sqrt(squares))), `row ${i}`);
      }
    });
  }

  it('finds the exact top 30 among its 2,048 candidates of 20,000 (recall ≥ 0.98)', () => {
    const dim = 96;
    const vectors = randomVectors(20_000, dim, 42);
    const group = groupOf(vectors, dim);
    let found = 0;
    for (let q = 0; q < 10; q++) {
      const query = randomVectors(1, dim, 7 + q);
      const candidates = int8Candidates([group], query, {}, 2048)!.rows;
      assert.equal(candidates.length, 2048);
      assert.equal(new Set(candidates).size, 2048, 'no row twice');
      const set = new Set(candidates);
      found += exactTop(vectors, query, 30).filter((row) => set.has(row)).length;
    }
    assert.ok(found / 300 >= 0.98, `recall@30 ${found / 300}`);
  });

  it('takes exactly the rows of the best int8 scores within the filter, across groups', () => {
    const dim = 32;
    const a = randomVectors(3000, dim, 1);
    const b = randomVectors(2500, dim, 2);
    const groups = [
      groupOf(a, dim, { available: (i) => i % 5 !== 0 }),
      groupOf(b, dim, { firstRow: 10_001, available: (i) => i % 5 !== 0 }),
    ];
    const allowed = new Set(Array.from({ length: 20_000 }, (_, i) => i).filter((row) => row % 3 !== 0));
    const query = randomVectors(1, dim, 99);
    const q8 = toInt8Query(query, dim)!;
    for (const filter of [{}, { availableOnly: true }, { availableOnly: true, rows: allowed }]) {
      const expected = groups.flatMap((g) => {
        const { scores } = scanInt8(g.int8!, q8)!;
        return Array.from(g.rows, (row, i) => ({ row, score: scores[i]!, i, g }))
          .filter(({ row, i, g: group }) => !(filter.availableOnly && group.available[i] !== 1) && !('rows' in filter && !filter.rows!.has(row)));
      }).sort((x, y) => y.score - x.score).slice(0, 500);
      const candidates = int8Candidates(groups, query, filter, 500)!.rows;
      assert.equal(candidates.length, 500);
      const last = expected.at(-1)!.score;
      // Rows tied with the last place may differ; every other row is the same.
      assert.deepEqual(
        new Set(candidates.filter((row) => expected.find((e) => e.row === row)?.score !== last)),
        new Set(expected.filter((e) => e.score !== last).map((e) => e.row)),
      );
    }
    assert.equal(int8Candidates(groups, query, { rows: new Set([5, 10_005]) }, 500)!.rows.length, 2, 'a narrow filter: every row it allows');
  });

  it(`gives every row of a group without int8 rows (≤ ${INT8_MIN_ROWS} rows): small datasets stay exact`, () => {
    const dim = 8;
    const small: ScanGroup = { dim, rows: Float64Array.from([3, 4, 9]), available: Uint8Array.from([1, 0, 1]) };
    const big = groupOf(randomVectors(3000, dim, 5), dim, { firstRow: 100 });
    const query = randomVectors(1, dim, 6);
    assert.deepEqual(int8Candidates([small], query, {}, 2)?.rows, [3, 4, 9]);
    assert.deepEqual(int8Candidates([small], query, { availableOnly: true }, 2)?.rows, [3, 9]);
    const mixed = int8Candidates([small, big], query, { availableOnly: true }, 256)!.rows;
    assert.deepEqual(mixed.slice(0, 2), [3, 9]);
    assert.equal(mixed.length, 2 + 256);
    assert.deepEqual(int8Candidates([small, big], randomVectors(1, 4, 6), {}, 256)?.rows, [], 'no group of the query\'s dimension');
  });

  it('finds nothing for a zero question (it has no cosine)', () => {
    const group = groupOf(randomVectors(3000, 8, 5), 8);
    assert.deepEqual(int8Candidates([group], new Float32Array(8), {}, 10)?.rows, []);
  });
});
