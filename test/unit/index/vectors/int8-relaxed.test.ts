import assert from 'node:assert/strict';
import { int8Candidates, type ScanGroup } from '../../../../src/index/vectors/int8-candidates.js';
import { Int8RowsBuilder, scanInt8, toInt8Query, type Int8Query, type Int8Rows } from '../../../../src/index/vectors/int8-rows.js';
import { int8KernelKind, relaxedKernelWorks, useInt8Kernel, type Int8KernelKind } from '../../../../src/index/vectors/int8-wasm.js';
import { seededRandom } from '../../../../src/seeded-random.js';

/** `count` vectors of `dim` components in -1..1 from `seed`, the first three all 1, all -1 and alternating (rows of ±127). */
function vectorsOf(count: number, dim: number, seed: number): Float32Array {
  const random = seededRandom(seed);
  return Float32Array.from({ length: count * dim }, (_, k) => {
    const [i, j] = [Math.floor(k / dim), k % dim];
    return i === 0 ? 1 : i === 1 ? -1 : i === 2 ? (j % 2 ? 1 : -1) : random() * 2 - 1;
  });
}

function rowsOf(vectors: Float32Array, dim: number): Int8Rows {
  const builder = new Int8RowsBuilder(vectors.length / dim, dim);
  for (let i = 0; i < vectors.length / dim; i++) builder.set(i, vectors, i * dim);
  return builder.done();
}

/** Per row: its integer dot product with the question's values times its scale, as the kernels compute it. */
function expectedScores(rows: Int8Rows, query: Int8Query): number[] {
  const heap = new Int8Array(rows.memory.buffer);
  const scales = new Float32Array(rows.memory.buffer, rows.scalesAt, rows.count);
  return Array.from({ length: rows.count }, (_, i) => {
    let dot = 0;
    for (let j = 0; j < rows.dim; j++) dot += heap[rows.rowsAt + i * rows.stride + j]! * query.values[j]!;
    return Math.fround(Math.fround(dot) * scales[i]!);
  });
}

function groupOf(vectors: Float32Array, dim: number, firstRow = 1): ScanGroup {
  const count = vectors.length / dim;
  return {
    dim,
    rows: Float64Array.from({ length: count }, (_, i) => firstRow + i),
    available: Uint8Array.from({ length: count }, (_, i) => (i % 5 === 0 ? 0 : 1)),
    int8: rowsOf(vectors, dim),
  };
}

describe('the relaxed int8 kernel (int8-wasm.ts)', function () {
  before(function () {
    // Node 20 has relaxed SIMD behind a V8 flag the kernel sets, Node 22 ships it: only other runtimes lack it.
    if (Number(process.versions.node.split('.')[0]) >= 20) assert.ok(relaxedKernelWorks(), 'relaxed SIMD available on Node ≥ 20');
    if (!relaxedKernelWorks()) this.skip();
  });
  afterEach(() => useInt8Kernel(undefined));

  it('is the kernel this runtime chooses', () => {
    assert.equal(int8KernelKind(), 'relaxed');
  });

  for (const dim of [1, 16, 17, 32, 48, 100, 384]) {
    it(`scores rows by their exact integer dot product with the question, as the plain kernel does, at ${dim} dimensions`, () => {
      const rows = rowsOf(vectorsOf(50, dim, dim), dim);
      const questions = [vectorsOf(4, dim, 500 + dim).subarray(3 * dim), new Float32Array(dim).fill(1), new Float32Array(dim).fill(-1), vectorsOf(3, dim, 1).subarray(2 * dim)];
      for (const [q, vector] of questions.entries()) {
        const query = toInt8Query(vector, dim, 'relaxed')!;
        assert.equal(query.kernel, 'relaxed');
        assert.ok(query.values.every((v) => Math.abs(v) <= 63), 'the question at ±63');
        if (q === 1 || q === 2) assert.ok(query.values.subarray(0, dim).every((v) => Math.abs(v) === 63), 'all ±63');
        const relaxed = [...scanInt8(rows, query)!.scores];
        // The plain kernel given the same (±63) values.
        const plain = [...scanInt8(rows, { ...query, kernel: 'plain' })!.scores];
        assert.deepEqual(relaxed, expectedScores(rows, query), `question ${q}`);
        assert.deepEqual(relaxed, plain, `question ${q}`);
      }
    });
  }

  it('subtracts 64 · Σrow exactly for rows whose sum is large (±127 in every one of 4,096 dimensions)', () => {
    const dim = 4096;
    const vectors = new Float32Array(4 * dim);
    vectors.fill(1, 0, dim);
    vectors.fill(-1, dim, 2 * dim);
    for (let j = 0; j < dim; j++) vectors[2 * dim + j] = j < dim - 1 ? 1 : -1;
    for (let j = 0; j < dim; j++) vectors[3 * dim + j] = j % 4 === 0 ? -1 : 1;
    const rows = rowsOf(vectors, dim);
    const sums = new Int32Array(rows.memory.buffer, rows.sumsAt, rows.count);
    assert.deepEqual([...sums], [127 * dim, -127 * dim, 127 * (dim - 2), 127 * (dim / 2)]);
    for (const sign of [1, -1]) {
      const query = toInt8Query(new Float32Array(dim).fill(sign), dim, 'relaxed')!;
      const dots = [127 * dim, -127 * dim, 127 * (dim - 2), 127 * (dim / 2)].map((d) => sign * 63 * d);
      assert.deepEqual([...scanInt8(rows, query)!.scores], expectedScores(rows, query));
      assert.deepEqual(expectedScores(rows, query), dots.map((d, i) => Math.fround(Math.fround(d) * new Float32Array(rows.memory.buffer, rows.scalesAt, 4)[i]!)));
    }
  });

  for (const kernel of ['plain', 'relaxed'] as Int8KernelKind[]) {
    it(`gives the rows of the best scores within the filter and the exact top 30, with the ${kernel} kernel forced`, () => {
      useInt8Kernel(kernel);
      const dim = 96;
      const vectors = vectorsOf(20_000, dim, 42);
      const groups = [groupOf(vectors.subarray(0, 12_000 * dim), dim), groupOf(vectors.subarray(12_000 * dim), dim, 100_001)];
      let found = 0;
      for (let q = 0; q < 5; q++) {
        const vector = vectorsOf(4, dim, 7 + q).subarray(3 * dim);
        const query = toInt8Query(vector, dim)!;
        assert.equal(query.kernel, kernel);
        const expected = groups.flatMap((g) => {
          const { scores } = scanInt8(g.int8!, query)!;
          return Array.from(g.rows, (row, i) => ({ row, score: scores[i]!, available: g.available[i] === 1 })).filter((e) => e.available);
        }).sort((x, y) => y.score - x.score);
        const candidates = int8Candidates(groups, vector, { availableOnly: true }, 1000)!.rows;
        const last = expected[999]!.score;
        assert.deepEqual(
          new Set(candidates.filter((row) => expected.find((e) => e.row === row)!.score !== last)),
          new Set(expected.slice(0, 1000).filter((e) => e.score !== last).map((e) => e.row)),
        );
        // The exact top 30 of the available rows by float cosine (every vector's norm differs: cosines, not dots).
        const cosine = (row: number) => {
          const i = row > 100_000 ? row - 100_001 + 12_000 : row - 1;
          let dot = 0, norm = 0;
          for (let j = 0; j < dim; j++) {
            dot += vectors[i * dim + j]! * vector[j]!;
            norm += vectors[i * dim + j]! ** 2;
          }
          return dot / Math.sqrt(norm);
        };
        const top = expected.map((e) => [e.row, cosine(e.row)] as const).sort((a, b) => b[1] - a[1]).slice(0, 30).map(([row]) => row);
        const set = new Set(candidates);
        found += top.filter((row) => set.has(row)).length;
      }
      assert.ok(found / 150 >= 0.98, `recall@30 ${found / 150}`);
    });
  }
});
