import assert from 'node:assert/strict';
import { float32DotsAt } from '../../../../src/index/vectors/cosine-wasm.js';
import { Int8RowsBuilder, scanInt8, toInt8Query } from '../../../../src/index/vectors/int8-rows.js';
import { cosinesAt, float32Norm, type Query, type VectorGroup } from '../../../../src/index/vectors/vector-copies.js';
import { seededRandom } from '../../../../src/seeded-random.js';

/** A group of `count` rows of `dim` components from `component(i, j)`, its vectors in its int8 rows' memory. */
function groupOf(count: number, dim: number, component: (i: number, j: number) => number): VectorGroup {
  const builder = new Int8RowsBuilder(count, dim, { floats: true });
  const vectors = builder.floats!;
  const norms = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    for (let j = 0; j < dim; j++) vectors[i * dim + j] = component(i, j);
    norms[i] = float32Norm(vectors, i * dim, dim);
    builder.set(i, vectors, i * dim);
  }
  const none = new Uint32Array(count);
  return {
    dim, rows: Float64Array.from(none.keys()), available: new Uint8Array(count).fill(1), vectors, norms,
    documentOf: none, idBytes: new Uint8Array(0), idOffsets: new Uint32Array(count + 1), idTable: new Int32Array(16), int8: builder.done(),
  };
}

const queryOf = (values: Float32Array): Query => ({ values, norm: float32Norm(values, 0, values.length) });

/** The cosines by both paths: WebAssembly (the group's memory) and JS (the same vectors without it). */
function bothPaths(group: VectorGroup, positions: number[], query: Query): { wasm: Float64Array; js: Float64Array } {
  const wasm = new Float64Array(positions.length);
  const js = new Float64Array(positions.length);
  cosinesAt(group, positions, query, wasm);
  cosinesAt({ ...group, int8: undefined }, positions, query, js);
  return { wasm, js };
}

/** Same bits (NaN equals NaN; 0 and -0 differ). */
function assertSameBits(actual: Float64Array, expected: Float64Array, what: string): void {
  assert.equal(actual.length, expected.length);
  const differing = [...actual.keys()].filter((k) => !Object.is(actual[k], expected[k]));
  assert.deepEqual(differing, [], `${what}: first differing ${differing[0]}: ${actual[differing[0]!]} against ${expected[differing[0]!]}`);
}

describe('exact cosines in WebAssembly SIMD (cosine-wasm.ts)', () => {
  for (const dim of [1, 3, 4, 7, 8, 384, 385, 1024]) {
    it(`equal the JS cosines bit for bit at ${dim} dimensions, whatever the count of rows`, () => {
      const random = seededRandom(dim);
      const count = 50;
      // Row 3 is zero: no cosine (NaN), as SQLite gives NULL.
      const group = groupOf(count, dim, (i) => (i === 3 ? 0 : random() * 2 - 1));
      const query = queryOf(Float32Array.from({ length: dim }, () => random() * 2 - 1));
      for (const n of [0, 1, 4, 5, 8, 12, 13, 25, 37, 203]) {
        const positions = Array.from({ length: n }, (_, k) => (k === 2 ? 3 : Math.floor(random() * count)));
        const { wasm, js } = bothPaths(group, positions, query);
        assertSameBits(wasm, js, `${n} rows`);
        if (n > 2) assert.ok(Number.isNaN(wasm[2]), 'the zero row has no cosine');
        assert.equal(wasm.filter(Number.isNaN).length, positions.filter((p) => p === 3).length);
      }
    });
  }

  it('compute each dot product as one float32 chain in order j = 0..dim-1, across batches of rows', () => {
    const dim = 9;
    const count = 300;
    const random = seededRandom(9);
    const group = groupOf(count, dim, () => random() - 0.5);
    const query = Float32Array.from({ length: dim }, () => random() - 0.5);
    // More than one kernel call's batch (4,092 rows).
    const positions = Array.from({ length: 9000 }, () => Math.floor(random() * count));
    const dots = new Float64Array(positions.length);
    assert.equal(float32DotsAt(group.int8!, positions, query, dots), true);
    positions.forEach((p, k) => {
      let dot = 0;
      for (let j = 0; j < dim; j++) dot = Math.fround(dot + Math.fround(group.vectors[p * dim + j]! * query[j]!));
      assert.ok(Object.is(dots[k], dot), `row ${p}: ${dots[k]} against ${dot}`);
    });
  });

  it('round like JS at the edges of float32: subnormal products, huge sums, infinities', () => {
    const dim = 21;
    const random = seededRandom(21);
    const magnitudes = [1e-25, 1e-20, 1e-3, 1, 1e15, 1e19, 1e25];
    const group = groupOf(70, dim, (i, j) => (random() - 0.5) * magnitudes[(i + j) % magnitudes.length]!);
    for (const scale of [1e-22, 1, 1e20]) {
      const query = queryOf(Float32Array.from({ length: dim }, () => (random() - 0.5) * scale));
      const { wasm, js } = bothPaths(group, Array.from({ length: 70 }, (_, i) => i), query);
      assertSameBits(wasm, js, `query scale ${scale}`);
    }
  });

  it('give no cosine with a zero query', () => {
    const group = groupOf(20, 16, (i, j) => i - j);
    const { wasm, js } = bothPaths(group, [0, 5, 19, 7, 1], queryOf(new Float32Array(16)));
    assertSameBits(wasm, js, 'zero query');
    assert.ok(wasm.every(Number.isNaN));
  });

  it('leave the int8 scan as it was with the float32 vectors in front of the int8 rows', () => {
    const dim = 33;
    const random = seededRandom(33);
    const vectors = Float32Array.from({ length: 40 * dim }, () => random() * 2 - 1);
    const [alone, behindFloats] = [{}, { floats: true }].map((options) => {
      const builder = new Int8RowsBuilder(40, dim, options);
      for (let i = 0; i < 40; i++) builder.set(i, vectors, i * dim);
      return builder.done();
    });
    assert.equal(alone!.floatsAt, undefined);
    assert.ok(behindFloats!.rowsAt >= 40 * dim * 4);
    const query = toInt8Query(vectors.subarray(0, dim), dim)!;
    assert.deepEqual([...scanInt8(behindFloats!, query)!.scores], [...scanInt8(alone!, query)!.scores]);
    assert.equal(float32DotsAt(alone!, [0], vectors.subarray(0, dim), new Float64Array(1)), false, 'no float32 vectors there: the caller computes in JS');
  });
});
