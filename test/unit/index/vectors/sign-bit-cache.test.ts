import assert from 'node:assert/strict';
import { SignBitCache, type KeyGroup } from '../../../../src/index/vectors/sign-bit-cache.js';
import { toSignBits } from '../../../../src/index/vectors/vector-codec.js';

interface Row {
  row: number;
  available: number;
  dim: number;
  bits: Uint8Array;
}

/** Rows whose sign bits differ from the all-positive query in exactly `distance` of 40 dimensions. */
function row(rowid: number, distance: number, extra: Partial<Row> = {}): Row {
  const vector = Array.from({ length: 40 }, (_, i) => (i < distance ? -1 : 1));
  return { row: rowid, available: 1, dim: 40, bits: toSignBits(vector), ...extra };
}

function groups(rows: Row[]): KeyGroup[] {
  return [...new Set(rows.map((r) => r.dim))].map((dim) => {
    const group = rows.filter((r) => r.dim === dim);
    return {
      dim,
      rows: Float64Array.from(group.map((r) => r.row)),
      available: Uint8Array.from(group.map((r) => r.available)),
      bits: Buffer.concat(group.map((r) => r.bits)),
    };
  });
}

function cacheOf(data: Record<string, Row[]>, maxBytes?: number) {
  const state = { generation: 1, loads: 0, loaded: [] as string[] };
  const cache = new SignBitCache({
    generations: (ids) => new Map(ids.map((id) => [id, state.generation])),
    keys: (id) => {
      state.loads++;
      state.loaded.push(id);
      return groups(data[id] ?? []);
    },
  }, maxBytes);
  return { cache, state };
}

const QUERY = toSignBits(Array.from({ length: 40 }, () => 1));

describe('SignBitCache', () => {
  it('returns the rows nearest by Hamming distance, across datasets', () => {
    const { cache } = cacheOf({ a: [row(1, 5), row(2, 1), row(3, 30)], b: [row(4, 0), row(5, 12)] });
    assert.deepEqual(cache.nearest(QUERY, 40, { datasetIds: ['a', 'b'] }, 3).sort(), [1, 2, 4]);
    assert.deepEqual(cache.nearest(QUERY, 40, { datasetIds: ['a'] }, 10).sort(), [1, 2, 3]);
    assert.deepEqual(cache.nearest(QUERY, 40, { datasetIds: ['a', 'b'] }, Infinity).length, 5);
  });

  it('fills the last places from rows tied at the cut-off', () => {
    const { cache } = cacheOf({ a: [row(1, 3), row(2, 3), row(3, 3), row(4, 1)] });
    const got = cache.nearest(QUERY, 40, { datasetIds: ['a'] }, 3);
    assert.equal(got.length, 3);
    assert.ok(got.includes(4));
  });

  it('applies availability and row filters, and the dimension', () => {
    const { cache } = cacheOf({
      a: [row(1, 0, { available: 0 }), row(2, 1), row(3, 2), row(4, 0, { dim: 8, bits: toSignBits([1, 1, 1, 1, 1, 1, 1, 1]) })],
    });
    assert.deepEqual(cache.nearest(QUERY, 40, { datasetIds: ['a'], availableOnly: true }, 10).sort(), [2, 3]);
    assert.deepEqual(cache.nearest(QUERY, 40, { datasetIds: ['a'], rows: new Set([1, 3]) }, 10).sort(), [1, 3]);
    assert.deepEqual(cache.nearest(QUERY, 40, { datasetIds: ['a'], rows: new Set() }, 10), []);
    assert.deepEqual(cache.nearest(toSignBits([1, 1, 1, 1, 1, 1, 1, 1]), 8, { datasetIds: ['a'] }, 10), [4]);
    assert.deepEqual(cache.nearest(QUERY, 40, { datasetIds: ['unknown'] }, 10), []);
  });

  it('reloads a dataset only when its generation changes', () => {
    const data = { a: [row(1, 0)] };
    const { cache, state } = cacheOf(data);
    cache.nearest(QUERY, 40, { datasetIds: ['a'] }, 5);
    cache.nearest(QUERY, 40, { datasetIds: ['a'] }, 5);
    assert.equal(state.loads, 1);
    data.a.push(row(2, 0));
    assert.deepEqual(cache.nearest(QUERY, 40, { datasetIds: ['a'] }, 5), [1], 'same generation: the copy is kept');
    state.generation++;
    assert.deepEqual(cache.nearest(QUERY, 40, { datasetIds: ['a'] }, 5).sort(), [1, 2]);
    assert.equal(state.loads, 2);
  });

  it('reports its size: datasets loaded, vectors and bytes held', () => {
    const { cache } = cacheOf({ a: [row(1, 0), row(2, 1), row(3, 0, { dim: 8, bits: toSignBits([1, 1, 1, 1, 1, 1, 1, 1]) })], b: [row(4, 0)] });
    assert.deepEqual(cache.size(), { datasets: 0, vectors: 0, bytes: 0 });
    cache.nearest(QUERY, 40, { datasetIds: ['a'] }, 5);
    // Dataset a: 2 rows of 40 dims and 1 row of 8 dims, one 64-bit word of sign bits each; 8-byte row ids, 1-byte flags.
    assert.deepEqual(cache.size(), { datasets: 1, vectors: 3, bytes: 3 * 8 + 3 + 3 * 8 });
    cache.nearest(QUERY, 40, { datasetIds: ['a', 'b'] }, 5);
    assert.deepEqual(cache.size(), { datasets: 2, vectors: 4, bytes: 4 * 8 + 4 + 4 * 8 });
  });

  describe('bounded by bytes', () => {
    // One dataset of 4 rows of 40 dims: 4 x (8-byte row id + 1-byte flag + one 64-bit word) = 68 bytes.
    const four = (base: number) => [row(base, 0), row(base + 1, 1), row(base + 2, 2), row(base + 3, 3)];
    const ONE = 68;

    it('drops the least recently searched datasets to stay within its bound', () => {
      const { cache, state } = cacheOf({ a: four(1), b: four(11), c: four(21) }, 2 * ONE);
      cache.nearest(QUERY, 40, { datasetIds: ['a'] }, 5);
      cache.nearest(QUERY, 40, { datasetIds: ['b'] }, 5);
      cache.nearest(QUERY, 40, { datasetIds: ['a'] }, 5); // a is now the most recent
      assert.deepEqual(cache.size(), { datasets: 2, vectors: 8, bytes: 2 * ONE });
      cache.nearest(QUERY, 40, { datasetIds: ['c'] }, 5);
      assert.deepEqual(cache.size(), { datasets: 2, vectors: 8, bytes: 2 * ONE });
      state.loaded = [];
      cache.nearest(QUERY, 40, { datasetIds: ['a'] }, 5);
      assert.deepEqual(state.loaded, [], 'a was kept');
      assert.deepEqual(cache.nearest(QUERY, 40, { datasetIds: ['b'] }, 2).sort((x, y) => x - y), [11, 12], 'b is searched right after being reloaded');
      assert.deepEqual(state.loaded, ['b'], 'b had been dropped');
      assert.ok(cache.size().bytes <= 2 * ONE);
    });

    it('keeps the datasets of the current search even when they alone exceed the bound', () => {
      const { cache } = cacheOf({ a: four(1), b: four(11), c: four(21) }, ONE);
      assert.deepEqual(cache.nearest(QUERY, 40, { datasetIds: ['a', 'b'] }, 3).sort((x, y) => x - y), [1, 2, 11]);
      assert.deepEqual(cache.size(), { datasets: 2, vectors: 8, bytes: 2 * ONE });
      cache.nearest(QUERY, 40, { datasetIds: ['c'] }, 3);
      assert.deepEqual(cache.size(), { datasets: 1, vectors: 4, bytes: ONE }, 'the next search brings it back under the bound');
    });

    it('is unbounded by default', () => {
      const { cache } = cacheOf({ a: four(1), b: four(11), c: four(21) });
      for (const id of ['a', 'b', 'c']) cache.nearest(QUERY, 40, { datasetIds: [id] }, 5);
      assert.equal(cache.size().datasets, 3);
    });
  });
});
