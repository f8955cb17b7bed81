import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApproximateVectorIndex } from '../../../src/index/ann/approximate-vector-index.js';
import { seededRandom } from '../../../src/seeded-random.js';

const DIM = 24;
const COUNT = 2000;

function randomVectors(count: number, seed: number): Float32Array {
  const random = seededRandom(seed);
  return Float32Array.from({ length: count * DIM }, () => random() * 2 - 1);
}

/** Row ids that are not positions, to catch an index confusing the two. */
const rowIds = Array.from({ length: COUNT }, (_, i) => 1000 + 7 * i);
const vectors = randomVectors(COUNT, 1);
const vectorOf = (i: number) => vectors.subarray(i * DIM, (i + 1) * DIM);

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0, na = 0, nb = 0;
  for (let j = 0; j < a.length; j++) {
    dot += a[j]! * b[j]!;
    na += a[j]! * a[j]!;
    nb += b[j]! * b[j]!;
  }
  return dot / Math.sqrt(na * nb);
}

function exactNearest(query: Float32Array, k: number): number[] {
  return rowIds
    .map((row, i) => [row, cosine(query, vectorOf(i))] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([row]) => row);
}

function recall(index: ApproximateVectorIndex, k: number, fetched: number): number {
  const queries = randomVectors(20, 2);
  let found = 0;
  for (let q = 0; q < 20; q++) {
    const query = queries.subarray(q * DIM, (q + 1) * DIM);
    const candidates = new Set(index.search(query, fetched));
    found += exactNearest(query, k).filter((row) => candidates.has(row)).length;
  }
  return found / (20 * k);
}

describe('ApproximateVectorIndex', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-ann-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('finds nearly all of the exact nearest rows, and all of them when over-fetching', () => {
    for (const quantization of ['f32', 'i8'] as const) {
      // One build thread: the graph, and so the recall, are the same on every run (several threads insert in any order).
      const index = ApproximateVectorIndex.build(DIM, rowIds, vectors, { quantization, threads: 1 });
      assert.equal(index.size, COUNT);
      assert.ok(recall(index, 10, 10) >= 0.9, `${quantization}: recall@10 ${recall(index, 10, 10)}`);
      assert.ok(recall(index, 10, 100) >= 0.99, `${quantization}: recall@10 in 100 candidates ${recall(index, 10, 100)}`);
    }
  });

  it('answers with row ids, nearest first', () => {
    const index = ApproximateVectorIndex.build(DIM, rowIds, vectors, { quantization: 'f32' });
    const found = index.search(vectorOf(5), 5);
    assert.equal(found.length, 5);
    assert.equal(found[0], rowIds[5]);
    assert.ok(found.every((row) => rowIds.includes(row)));
    assert.deepEqual(index.search(Array.from(vectorOf(5)), 1), [rowIds[5]]);
  });

  it('never returns a removed row, and counts only rows that were there', () => {
    const index = ApproximateVectorIndex.build(DIM, rowIds, vectors);
    const removed = rowIds.slice(0, 500);
    assert.equal(index.remove([...removed, 999_999]), 500);
    assert.equal(index.size, COUNT - 500);
    const gone = new Set(removed);
    for (let i = 0; i < 20; i++) assert.ok(index.search(vectorOf(i), 200).every((row) => !gone.has(row)));
    assert.equal(index.remove(removed), 0);
  });

  it('adds new rows and replaces the vector of a row already there', () => {
    const index = ApproximateVectorIndex.build(DIM, rowIds.slice(0, 1000), vectors.subarray(0, 1000 * DIM));
    index.add(rowIds.slice(1000), vectors.subarray(1000 * DIM));
    assert.equal(index.size, COUNT);
    assert.equal(index.search(vectorOf(1500), 1)[0], rowIds[1500]);

    index.add([rowIds[0]!], vectorOf(1999).slice());
    assert.equal(index.size, COUNT);
    assert.deepEqual(new Set(index.search(vectorOf(1999), 2)), new Set([rowIds[0], rowIds[1999]]));
    assert.notEqual(index.search(vectorOf(0), 1)[0], rowIds[0]);
  });

  it('saves to a file and loads the same index back, quantisation included', () => {
    for (const quantization of ['f32', 'i8'] as const) {
      const index = ApproximateVectorIndex.build(DIM, rowIds, vectors, { quantization, threads: 1 });
      const path = join(dir, `${quantization}.usearch`);
      index.save(path);
      const loaded = ApproximateVectorIndex.load(path);
      assert.equal(loaded.dim, DIM);
      assert.equal(loaded.size, COUNT);
      assert.equal(loaded.bytes(), index.bytes());
      for (let i = 0; i < 10; i++) assert.deepEqual(loaded.search(vectorOf(i), 20), index.search(vectorOf(i), 20));
      loaded.remove([rowIds[3]!]);
      assert.notEqual(loaded.search(vectorOf(3), 1)[0], rowIds[3]);
    }
  });

  it('estimates its memory as a little more than its file (the same vectors and graph, plus the key table)', () => {
    const sizes = (['f32', 'i8'] as const).map((quantization) => {
      const index = ApproximateVectorIndex.build(DIM, rowIds, vectors, { quantization, threads: 1 });
      const path = join(dir, `${quantization}.usearch`);
      index.save(path);
      const file = statSync(path).size;
      assert.ok(index.bytes() >= file && index.bytes() <= 1.5 * file, `${quantization}: estimate ${index.bytes()}, file ${file} bytes`);
      return index.bytes();
    });
    assert.ok(sizes[0]! > sizes[1]!);
  });

  it('rejects vectors and questions of another dimension', () => {
    assert.throws(() => ApproximateVectorIndex.build(DIM, [1, 2], new Float32Array(DIM)), /2 rows of dimension 24 need 48 values, got 24/);
    const index = ApproximateVectorIndex.build(DIM, rowIds.slice(0, 10), vectors.subarray(0, 10 * DIM));
    assert.throws(() => index.search(new Float32Array(DIM + 1), 5), /query has dimension 25, the index 24/);
    assert.throws(() => index.add([5], new Float32Array(DIM * 2)), /1 rows of dimension 24 need 24 values, got 48/);
    assert.throws(() => index.add([5, 5], new Float32Array(DIM * 2)), /a row id appears twice/);
    assert.throws(() => index.add([-1], new Float32Array(DIM)), /non-negative integers/);
  });

  it('answers nothing when empty and refuses a file that is not an index', () => {
    const index = ApproximateVectorIndex.build(DIM, [], new Float32Array(0));
    assert.deepEqual(index.search(vectorOf(0), 10), []);
    const junk = join(dir, 'junk.usearch');
    writeFileSync(junk, 'not an index');
    assert.throws(() => ApproximateVectorIndex.load(junk));
  });
});
