import assert from 'node:assert/strict';
import { INT4_FACTOR, INT8_MIN_ROWS, int8Candidates, type CandidateFilter, type ScanGroup } from '../../../../src/index/vectors/int8-candidates.js';
import { int4StrideOf } from '../../../../src/index/vectors/int4-wasm.js';
import { Int8RowsBuilder, int8BytesOf, scanInt4, scanInt8, toInt8Query, type Int8Query, type Int8Rows } from '../../../../src/index/vectors/int8-rows.js';
import { relaxedKernelWorks, useInt8Kernel } from '../../../../src/index/vectors/int8-wasm.js';
import { copyBytesOf, copyKindOf, VectorCopies, type DatasetVectors, type VectorRow, type VectorSource } from '../../../../src/index/vectors/vector-copies.js';
import { seededRandom } from '../../../../src/seeded-random.js';

/** `count` vectors of `dim` components in -1..1 from `seed`, the first three all 1, all -1 and alternating (the extreme nibbles). */
function vectorsOf(count: number, dim: number, seed: number): Float32Array {
  const random = seededRandom(seed);
  return Float32Array.from({ length: count * dim }, (_, k) => {
    const [i, j] = [Math.floor(k / dim), k % dim];
    return i === 0 ? 1 : i === 1 ? -1 : i === 2 ? (j % 2 ? 1 : -1) : random() * 2 - 1;
  });
}

function rowsOf(vectors: Float32Array, dim: number, int4 = true): Int8Rows {
  const builder = new Int8RowsBuilder(vectors.length / dim, dim, { int4 });
  for (let i = 0; i < vectors.length / dim; i++) builder.set(i, vectors, i * dim);
  return builder.done();
}

/** The 4-bit scores in JS from the vectors themselves: values rounded to ±127 at the largest component, then × 7 / 127 rounded, then Σ q · v times 1 / |v|. */
function expectedInt4Scores(vectors: Float32Array, dim: number, query: Int8Query): number[] {
  return Array.from({ length: vectors.length / dim }, (_, i) => {
    let max = 0;
    for (let j = 0; j < dim; j++) max = Math.max(max, Math.abs(vectors[i * dim + j]!));
    let dot = 0, squares = 0;
    for (let j = 0; j < dim; j++) {
      const v = Math.round((Math.round(vectors[i * dim + j]! * (127 / max)) * 7) / 127);
      assert.ok(Math.abs(v) <= 7);
      dot += v * query.values[j]!;
      squares += v * v;
    }
    return Math.fround(Math.fround(dot) * Math.fround(1 / Math.sqrt(squares)));
  });
}

function groupOf(vectors: Float32Array, dim: number, firstRow = 1, int4 = true): ScanGroup {
  const count = vectors.length / dim;
  return {
    dim,
    rows: Float64Array.from({ length: count }, (_, i) => firstRow + i),
    available: Uint8Array.from({ length: count }, (_, i) => (i % 7 === 3 ? 0 : 1)),
    int8: rowsOf(vectors, dim, int4),
  };
}

const accepts = (group: ScanGroup, i: number, filter: CandidateFilter) =>
  !(filter.availableOnly && group.available[i] !== 1) && !(filter.rows && !filter.rows.has(group.rows[i]!));

describe('the 4-bit first pass of the coarse stage (int4-wasm.ts, int8-rows.ts, int8-candidates.ts)', function () {
  before(function () {
    if (Number(process.versions.node.split('.')[0]) >= 20) assert.ok(relaxedKernelWorks(), 'relaxed SIMD available on Node ≥ 20');
    if (!relaxedKernelWorks()) this.skip();
  });
  afterEach(() => useInt8Kernel(undefined));

  for (const dim of [1, 16, 17, 31, 32, 33, 48, 64, 100, 384]) {
    it(`scores 4-bit rows by their exact integer dot product with the question, and rescores listed rows by int8, at ${dim} dimensions`, () => {
      const vectors = vectorsOf(60, dim, dim);
      const rows = rowsOf(vectors, dim);
      assert.equal(rows.int4!.stride, int4StrideOf(dim));
      const questions = [vectorsOf(4, dim, 300 + dim).subarray(3 * dim), new Float32Array(dim).fill(1), new Float32Array(dim).fill(-1), vectorsOf(3, dim, 1).subarray(2 * dim)];
      for (const [q, vector] of questions.entries()) {
        const query = toInt8Query(vector, dim, 'relaxed')!;
        const int8 = Float32Array.from(scanInt8(rows, query)!.scores);
        const scan = scanInt4(rows, query)!;
        assert.deepEqual(Array.from(scan.scores), expectedInt4Scores(vectors, dim, query), `question ${q}`);
        const before = Float32Array.from(scan.scores);
        const listed = [0, 1, 2, 17, 59];
        scan.rescore(listed);
        for (let i = 0; i < 60; i++) assert.equal(scan.scores[i], listed.includes(i) ? int8[i] : before[i], `question ${q}, row ${i}`);
      }
    });
  }

  it('scores every row whatever the count, odd or even (two rows a pass, the last one alone)', () => {
    for (const dim of [16, 48, 96, 128, 160, 384]) {
      const query = toInt8Query(vectorsOf(4, dim, 500 + dim).subarray(3 * dim), dim, 'relaxed')!;
      for (const count of [1, 2, 3, 4, 5, 8, 9]) {
        const vectors = vectorsOf(count, dim, 600 + dim + count);
        assert.deepEqual(Array.from(scanInt4(rowsOf(vectors, dim), query)!.scores), expectedInt4Scores(vectors, dim, query), `${count} rows of ${dim}`);
      }
    }
  });

  it('rescores any number of listed rows (four a pass, the ones left over one at a time), and no other', () => {
    for (const dim of [16, 48, 384]) {
      const vectors = vectorsOf(40, dim, 700 + dim);
      const rows = rowsOf(vectors, dim);
      const query = toInt8Query(vectorsOf(2, dim, 800 + dim).subarray(dim), dim, 'relaxed')!;
      const int8 = Float32Array.from(scanInt8(rows, query)!.scores);
      for (const listed of [[], [5], [0, 39], [3, 4, 30], [1, 7, 8, 22], [0, 2, 4, 6, 8], [10, 11, 12, 13, 14, 15], [2, 9, 16, 23, 30, 37, 39]]) {
        const scan = scanInt4(rows, query)!;
        const before = Float32Array.from(scan.scores);
        scan.rescore(listed);
        for (let i = 0; i < 40; i++) assert.equal(scan.scores[i], listed.includes(i) ? int8[i] : before[i], `${listed.length} listed of ${dim} dimensions, row ${i}`);
      }
    }
  });

  it('has no 4-bit pass for a question of the plain kernel, or rows without 4-bit rows', () => {
    const vectors = vectorsOf(10, 32, 3);
    assert.equal(scanInt4(rowsOf(vectors, 32), toInt8Query(vectors.subarray(0, 32), 32, 'plain')!), undefined);
    assert.equal(scanInt4(rowsOf(vectors, 32, false), toInt8Query(vectors.subarray(0, 32), 32, 'relaxed')!), undefined);
  });

  it('gives the candidates of the scan of every int8 row whenever those are among the 4-bit best, with and without filters, across groups', () => {
    const dim = 96;
    const a = vectorsOf(INT8_MIN_ROWS + 1500, dim, 11);
    const b = vectorsOf(INT8_MIN_ROWS + 700, dim, 12);
    const groups = [groupOf(a, dim), groupOf(b, dim, 100_000)];
    const allowed = new Set([...groups[0]!.rows, ...groups[1]!.rows].filter((row) => row % 3 !== 0));
    const count = 300;
    let contained = 0;
    let cases = 0;
    for (let q = 0; q < 6; q++) {
      const vector = vectorsOf(4, dim, 700 + q).subarray(3 * dim);
      const query = toInt8Query(vector, dim)!;
      for (const filter of [{}, { availableOnly: true }, { availableOnly: true, rows: allowed }] as CandidateFilter[]) {
        cases++;
        const today = int8Candidates(groups, vector, filter, count, { int4Factor: 0 })!.rows;
        const withPass = int8Candidates(groups, vector, filter, count)!.rows;
        assert.equal(withPass.length, count);
        for (const row of withPass) {
          const group = groups.find((g) => g.rows[0]! <= row && row <= g.rows.at(-1)!)!;
          assert.ok(accepts(group, row - group.rows[0]!, filter), `row ${row} passes the filter`);
        }
        // The 4-bit pass's best count × INT4_FACTOR within the filter, by the 4-bit scores.
        const scored = groups.flatMap((g) => {
          const scores = Float32Array.from(scanInt4(g.int8!, query)!.scores);
          return Array.from(g.rows, (row, i) => ({ row, score: scores[i]!, ok: accepts(g, i, filter) })).filter((r) => r.ok);
        }).sort((x, y) => y.score - x.score);
        const first = new Set(scored.slice(0, count * INT4_FACTOR).map((r) => r.row));
        // Ties at the cut could let a row in either way: only cases clear of them are compared.
        const clear = scored[count * INT4_FACTOR - 1]!.score !== scored[count * INT4_FACTOR]!.score;
        // With a factor of 1 the pass's own best `count` are the candidates: the 4-bit ranking is the one used.
        if (scored[count - 1]!.score !== scored[count]!.score) {
          assert.deepEqual(new Set(int8Candidates(groups, vector, filter, count, { int4Factor: 1 })?.rows), new Set(scored.slice(0, count).map((r) => r.row)));
        }
        if (clear && today.every((row) => first.has(row))) {
          contained++;
          assert.deepEqual(withPass, today, `question ${q}, filter ${JSON.stringify(Object.keys(filter))}`);
        }
      }
    }
    assert.ok(contained >= cases / 2, `the int8 best were among the 4-bit best in ${contained} of ${cases} cases`);
  });

  it('honours a filter that lets fewer rows than the count through, and keeps small groups whole', () => {
    const dim = 32;
    const big = groupOf(vectorsOf(INT8_MIN_ROWS + 100, dim, 5), dim, 10);
    const small: ScanGroup = { dim, rows: Float64Array.from([1, 2, 3]), available: Uint8Array.from([1, 0, 1]) };
    const vector = vectorsOf(1, dim, 6);
    // Row 13 is position 3 of the big group: not available.
    assert.deepEqual(int8Candidates([small, big], vector, { availableOnly: true, rows: new Set([1, 2, 13, 15, 16]) }, 256)?.rows, [1, 15, 16]);
    assert.deepEqual(int8Candidates([small, big], vector, { availableOnly: true }, 256)!.rows.slice(0, 2), [1, 3]);
    assert.equal(int8Candidates([small, big], vector, {}, 256)!.rows.length, 3 + 256);
  });

  it('scans the int8 rows as before with the plain kernel, or where a group has no 4-bit rows', () => {
    const dim = 48;
    const withInt4 = groupOf(vectorsOf(INT8_MIN_ROWS + 200, dim, 8), dim);
    const without = groupOf(vectorsOf(INT8_MIN_ROWS + 200, dim, 9), dim, 50_000, false);
    const vector = vectorsOf(1, dim, 10);
    useInt8Kernel('plain');
    const plain = int8Candidates([withInt4], vector, {}, 256)!.rows;
    const query = toInt8Query(vector, dim, 'plain')!;
    const scores = scanInt8(withInt4.int8!, query)!.scores;
    const last = [...scores].sort((x, y) => y - x)[255]!;
    assert.deepEqual(plain, Array.from(withInt4.rows).filter((_, i) => scores[i]! >= last).slice(0, 256), 'the plain kernel\'s best 256');
    useInt8Kernel(undefined);
    assert.deepEqual(int8Candidates([withInt4, without], vector, {}, 256)?.rows, int8Candidates([withInt4, without], vector, {}, 256, { int4Factor: 0 })?.rows);
  });
});

describe('4-bit rows in the bound of the vector copies (vector-copies.ts)', () => {
  const dim = 64, count = INT8_MIN_ROWS + 1000;
  // More than the exact copy takes (its ids, documents, hash table): the copy built fits where its estimate does.
  const size = { exactBytes: count * (dim * 4 + 200), groups: [{ dim, count }] };
  const vectors = vectorsOf(count, dim, 4);
  const source: VectorSource = {
    sizeOf: () => size,
    read: (_id, use) => use(1, [{
      dim, count,
      rows: function* (): Iterable<VectorRow> {
        for (let i = 0; i < count; i++) yield [i + 1, new Uint8Array(vectors.buffer, i * dim * 4, dim * 4), `c${i}`, 'd', 'doc', 1];
      },
    }]),
  };
  const copyOf = (maxBytes: number): DatasetVectors | undefined =>
    new VectorCopies(source, { maxBytes, quietMs: 0, schedule: (build) => build() }).current(['set'], new Map([['set', 1]]))?.[0];

  it('counts the 4-bit rows in a copy\'s bytes, and builds a copy without them where it would not fit with them', () => {
    const bytes = copyBytesOf(size);
    const int4 = int8BytesOf(count, dim, true) - int8BytesOf(count, dim);
    assert.ok(int4 >= count * (int4StrideOf(dim) + 4));
    assert.deepEqual(bytes.int4, { exact: int4, int8: int4 });
    assert.deepEqual(copyKindOf(bytes, bytes.exact + int4 + 65536), { kind: 'exact', int4: true, bytes: bytes.exact + int4 });
    assert.deepEqual(copyKindOf(bytes, bytes.exact + int4 - 1), { kind: 'exact', int4: false, bytes: bytes.exact });
    assert.deepEqual(copyKindOf(bytes, bytes.int8 + int4 + 65536), { kind: 'int8', int4: true, bytes: bytes.int8 + int4 });
    assert.deepEqual(copyKindOf(bytes, bytes.int8), { kind: 'int8', int4: false, bytes: bytes.int8 });

    for (const [maxBytes, kind, withInt4] of [
      [bytes.exact + int4 + 65536, 'exact', true], [bytes.exact, 'exact', false], [bytes.int8 + int4 + 65536, 'int8', true], [bytes.int8, 'int8', false],
    ] as const) {
      const copy = copyOf(maxBytes)!;
      assert.equal(copy.kind, kind, `bound ${maxBytes}`);
      assert.equal(copy.groups[0]!.int8!.int4 !== undefined, withInt4, `bound ${maxBytes}: 4-bit rows`);
      assert.ok(copy.bytes <= maxBytes, `bound ${maxBytes}: ${copy.bytes} bytes`);
      if (kind === 'int8') assert.equal(copy.bytes, bytes.int8 + (withInt4 ? int4 : 0), 'the int8 copy\'s bytes as estimated');
    }
  });
});
