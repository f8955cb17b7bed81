/**
 * The 4-bit first pass of the coarse stage (int8-rows.ts, int8-candidates.ts): scores of a question with
 * 4-bit rows, and int8 scores of listed rows only (to rescore the 4-bit pass's best), in relaxed SIMD over
 * the int8 rows' shared `WebAssembly.Memory`. Only for the relaxed int8 kernel (int8-wasm.ts): where a
 * runtime has the plain kernel only, the coarse stage scans the int8 rows as before.
 *
 * A 4-bit row holds, per 32 dimensions, 16 bytes: the low nibbles are dimensions 0..15, the high nibbles
 * 16..31, each value v in -7..7 (the int8 row's value × 7 / 127, rounded) stored as v + 8 (1..15; the padding
 * 8, against a question padded with 0).
 * The question is int8 (the relaxed int8 query's ±63 values), the first, signed operand of
 * `i16x8.relaxed_dot_i8x16_i7x16_s`; the nibbles (0..15, inside the 0..127 where the instruction is exact on
 * x64 and ARM) the second: Σ q · (v + 8) − 8 · Σq = Σ q · v, with 8 · Σq passed per question (`offset`).
 * A pair of products is at most 2 · 63 · 15 = 1,890 in i16 (3,810 at ±127): four dot products (64
 * dimensions) are added in i16 before `i32x4.dot_i16x8_s` against ones widens them, far below 2^15.
 *
 * "scores" takes rows two a pass, i and i + ⌊n / 2⌋ (i < ⌊n / 2⌋), each 32 dimensions as below with the question's
 * two loads shared by both rows, then row n − 1 alone when n is odd (the loop below, run once). The two rows far
 * apart are two streams from memory, which a core reads faster than one: at 1M rows of 384 dimensions (192 MB, more
 * than any cache) the kernel went from ~21 to ~15 ns per row, near the ~14.5 ns a `memchr` over the same bytes takes;
 * two neighbouring rows a pass were no faster there than one (`npx tsx bench/retrieval/ann.ts --sizes 1000000
 * --configs none --baselines no --int4-factors 0,3`; docs/retrieval.md, "A cheaper 4-bit kernel").
 *
 *   (module
 *     (import "env" "memory" (memory 0 65536 shared))
 *     ;; out[i] = f32(Σ_j q[j] · nibble(i, j) − offset) · scales[i], i < n; rows of `stride` bytes (a multiple of 16).
 *     (func (export "scores") (param $q i32) (param $rows i32) (param $n i32) (param $stride i32)
 *                             (param $scales i32) (param $out i32) (param $offset i32)
 *       (local $end i32) (local $p i32) (local $qq i32) (local $acc v128) (local $v v128)
 *       (local.set $end (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2))))
 *       ... the pairs of rows, then $rows, $scales and $out at row 2 · ⌊n / 2⌋ ...
 *       (block (loop
 *         (br_if 1 (i32.ge_u (local.get $out) (local.get $end)))
 *         (local.set $acc (v128.const i32x4 0 0 0 0))
 *         (local.set $p (local.get $rows))
 *         (local.set $rows (i32.add (local.get $rows) (local.get $stride)))
 *         (local.set $qq (local.get $q))
 *         (if (i32.and (local.get $stride) (i32.const 16)) (then
 *           (local.set $acc (i32x4.dot_i16x8_s (HALF 0) (ONES)))
 *           (local.set $qq (i32.add (local.get $qq) (i32.const 32)))
 *           (local.set $p (i32.add (local.get $p) (i32.const 16)))))
 *         (block (br_if 0 (i32.ge_u (local.get $p) (local.get $rows)))
 *           (loop
 *             (local.set $acc (i32x4.add (local.get $acc) (i32x4.dot_i16x8_s (i16x8.add (HALF 0) (HALF 16)) (ONES))))
 *             (local.set $qq (i32.add (local.get $qq) (i32.const 64)))
 *             (local.set $p (i32.add (local.get $p) (i32.const 32)))
 *             (br_if 0 (i32.lt_u (local.get $p) (local.get $rows)))))
 *         (f32.store (local.get $out) (f32.mul (f32.load (local.get $scales)) (f32.convert_i32_s
 *           (i32.sub (Σ lanes of $acc) (local.get $offset)))))
 *         (local.set $scales (i32.add (local.get $scales) (i32.const 4)))
 *         (local.set $out (i32.add (local.get $out) (i32.const 4)))
 *         (br 0))))
 *
 *   where (HALF at), 32 dimensions from the row's bytes at $p + at and the question's at $qq + 2 · at, is
 *     (i16x8.add
 *       (i16x8.relaxed_dot_i8x16_i7x16_s (v128.load offset=2·at (local.get $qq))
 *         (v128.and (local.tee $v (v128.load offset=at (local.get $p))) (v128.const i8x16 15 ...)))
 *       (i16x8.relaxed_dot_i8x16_i7x16_s (v128.load offset=2·at+16 (local.get $qq)) (v128.and (i16x8.shr_u (local.get $v) (i32.const 4)) (v128.const i8x16 15 ...))))
 *   and (ONES) is (v128.const i16x8 1 1 1 1 1 1 1 1).
 *
 *     ;; The relaxed int8 kernel's scores (int8-wasm.ts) of the rows at positions[k], k < n, into
 *     ;; out[positions[k]] (the question as u8 plus 64, the rows' sums for the 64 · Σrow taken off).
 *     ;; First four listed rows a pass (ROWS_A_PASS), each of the question's 16-byte loads shared by the four: the
 *     ;; listed rows are scattered through memory, and one row at a time waits for each of its cache misses in
 *     ;; turn (rescoring 3,840 rows of 100k after the 4-bit scan: ~0.9 ms one a pass, ~0.55 four; eight were no
 *     ;; faster: bench/retrieval/ann.ts --int4-factors 0,3, coarse stage). Then the rows left over one a pass, as below.
 *     (func (export "scoresAt") (param $q i32) (param $rows i32) (param $positions i32) (param $n i32) (param $stride i32)
 *                               (param $scales i32) (param $out i32) (param $sums i32)
 *       (local $end i32) (local $p i32) (local $qq i32) (local $acc v128) (local $at i32) (local $rowEnd i32)
 *       (local.set $end (i32.add (local.get $positions) (i32.shl (local.get $n) (i32.const 2))))
 *       (block (loop
 *         (br_if 1 (i32.ge_u (local.get $positions) (local.get $end)))
 *         (local.set $at (i32.shl (i32.load (local.get $positions)) (i32.const 2)))
 *         (local.set $p (i32.add (local.get $rows) (i32.mul (i32.load (local.get $positions)) (local.get $stride))))
 *         (local.set $rowEnd (i32.add (local.get $p) (local.get $stride)))
 *         ... the relaxed int8 kernel's row, to $rowEnd ...
 *         (f32.store (i32.add (local.get $out) (local.get $at)) (f32.mul (f32.load (i32.add (local.get $scales) (local.get $at)))
 *           (f32.convert_i32_s (i32.sub (Σ lanes of $acc) (i32.shl (i32.load (i32.add (local.get $sums) (local.get $at))) (i32.const 6))))))
 *         (local.set $positions (i32.add (local.get $positions) (i32.const 4)))
 *         (br 0))))
 */
import { functionBody, get, i32, loadV128, memarg, name, relaxedDot, section, set, simd, sumOfLanes, unsignedLeb } from './wasm-assembly.js';

const V128_CONST = 0x0c, V128_AND = 0x4e, I16X8_SHR_U = 0x8d;
const I16X8_ADD = 0x8e, I32X4_ADD = 0xae, I32X4_DOT_I16X8_S = 0xba, I16X8_RELAXED_DOT_I8X16_I7X16_S = 0x112;
const BLOCK = 0x02, LOOP = 0x03, IF = 0x04, END = 0x0b, BR = 0x0c, BR_IF = 0x0d, VOID = 0x40, TEE = 0x22;
const I32_LOAD = 0x28, F32_LOAD = 0x2a, F32_STORE = 0x38, I32_LT_U = 0x49, I32_GE_U = 0x4f;
const I32_ADD = 0x6a, I32_SUB = 0x6b, I32_MUL = 0x6c, I32_AND = 0x71, I32_SHL = 0x74, I32_SHR_U = 0x76, F32_MUL = 0x94, F32_CONVERT_I32_S = 0xb2;
const I32_TYPE = 0x7f, V128_TYPE = 0x7b;

const ZERO = simd(V128_CONST, ...new Array(16).fill(0));
const ONES = simd(V128_CONST, ...Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? 1 : 0)));
const LOW_NIBBLES = simd(V128_CONST, ...new Array(16).fill(15));
const advance = (locals: number[], bytes: number[]) => locals.flatMap((local, k) => [...get(local), ...i32(bytes[k]!), I32_ADD, ...set(local)]);

// "scores" locals: 0 $q, 1 $rows, 2 $n, 3 $stride, 4 $scales, 5 $out, 6 $offset, 7 $end, 8 $p, 9 $qq, 10 $acc, 11 $v,
// 12 $mask, 13 $ones (the constants in locals: V8 would build them again at every use), then for the pairs of rows:
// 14 $p1, 15 $pairsEnd, 16 $acc1, 17 and 18 the question's 32 bytes at $qq + 2 · at, 19 and 20 the two rows' i16 sums,
// 21 $halfRows and 22 $halfOut (the second row's distance in rows and in scales or scores, bytes).
const P1 = 14, PAIRS_END = 15, ACC1 = 16, QS = [17, 18], SUMS = [19, 20], HALF_ROWS = 21, HALF_OUT = 22;
/** The question's 16 bytes at $qq + at, kept in a local of `QS` for the second row (`tee`) or taken from it (`get`). */
const question = (at: number, from?: 'tee' | 'get') => from === 'get'
  ? get(QS[(at / 16) % 2]!)
  : [...loadV128(9, at), ...(from === 'tee' ? [TEE, QS[(at / 16) % 2]!] : [])];
/** 32 dimensions as eight i16 sums of pairs: the row's 16 bytes at `row` + at, the question's 32 at $qq + 2 · at. */
const half = (at: number, row = 8, from?: 'tee' | 'get') => [
  ...question(2 * at, from),
  ...loadV128(row, at), TEE, 11, ...get(12), ...simd(V128_AND),
  ...simd(I16X8_RELAXED_DOT_I8X16_I7X16_S),
  ...question(2 * at + 16, from),
  ...get(11), ...i32(4), ...simd(I16X8_SHR_U), ...get(12), ...simd(V128_AND),
  ...simd(I16X8_RELAXED_DOT_I8X16_I7X16_S),
  ...simd(I16X8_ADD),
];
/** `halves` (1 or 2) × 32 dimensions of the rows at $p and $p1, added in i16 then widened into $acc and $acc1; moves $qq, $p and $p1 on. */
const twoRows = (halves: number) => [
  ...Array.from({ length: halves }, (_, h) => [0, 1].flatMap((r) => [
    ...(h > 0 ? get(SUMS[r]!) : []), ...half(16 * h, r === 0 ? 8 : P1, r === 0 ? 'tee' : 'get'), ...(h > 0 ? simd(I16X8_ADD) : []), ...set(SUMS[r]!),
  ])).flat(),
  ...[10, ACC1].flatMap((acc, r) => [...get(acc), ...get(SUMS[r]!), ...get(13), ...simd(I32X4_DOT_I16X8_S), ...simd(I32X4_ADD), ...set(acc)]),
  ...advance([9, 8, P1], [32 * halves, 16 * halves, 16 * halves]),
];
/** out[at] = (Σ lanes of `acc` − offset) · scales[at], `at` the byte offset in the local `at` (or 0). */
const store = (acc: number, at?: number) => [
  ...get(5), ...(at === undefined ? [] : [...get(at), I32_ADD]),
  ...get(4), ...(at === undefined ? [] : [...get(at), I32_ADD]), F32_LOAD, ...memarg(2),
  ...sumOfLanes(acc), ...get(6), I32_SUB, F32_CONVERT_I32_S,
  F32_MUL, F32_STORE, ...memarg(2),
];
const SCORES4 = [
  // locals: 3 × i32 ($end $p $qq), 4 × v128 ($acc $v $mask $ones), 2 × i32 ($p1 $pairsEnd),
  // 5 × v128 ($acc1, the question's two vectors, the sums), 2 × i32 ($halfRows $halfOut)
  0x05, 0x03, I32_TYPE, 0x04, V128_TYPE, 0x02, I32_TYPE, 0x05, V128_TYPE, 0x02, I32_TYPE,
  ...get(5), ...get(2), ...i32(2), I32_SHL, I32_ADD, ...set(7),
  ...get(2), ...i32(1), I32_SHR_U, ...i32(2), I32_SHL, ...set(HALF_OUT),
  ...get(2), ...i32(1), I32_SHR_U, ...get(3), I32_MUL, ...set(HALF_ROWS),
  ...get(5), ...get(HALF_OUT), I32_ADD, ...set(PAIRS_END),
  ...LOW_NIBBLES, ...set(12), ...ONES, ...set(13),
  // Rows i and i + ⌊n / 2⌋ a pass: the question's loads shared, and two streams from memory (faster than one at 1M rows).
  BLOCK, VOID, LOOP, VOID,
  ...get(5), ...get(PAIRS_END), I32_GE_U, BR_IF, 1,
  ...ZERO, ...set(10), ...ZERO, ...set(ACC1),
  ...get(1), ...set(8),
  ...get(1), ...get(HALF_ROWS), I32_ADD, ...set(P1),
  ...get(1), ...get(3), I32_ADD, ...set(1),
  ...get(0), ...set(9),
  ...get(3), ...i32(16), I32_AND, IF, VOID, ...twoRows(1), END,
  BLOCK, VOID,
  ...get(8), ...get(1), I32_GE_U, BR_IF, 0,
  LOOP, VOID,
  ...twoRows(2),
  ...get(8), ...get(1), I32_LT_U, BR_IF, 0,
  END, END,
  ...store(10), ...store(ACC1, HALF_OUT),
  ...advance([4, 5], [4, 4]),
  BR, 0, END, END,
  // The last row of an odd count (row n − 1), alone.
  ...get(1), ...get(HALF_ROWS), I32_ADD, ...set(1),
  ...get(5), ...get(HALF_OUT), I32_ADD, ...set(5),
  ...get(4), ...get(HALF_OUT), I32_ADD, ...set(4),
  ...get(5), ...get(7), I32_LT_U, IF, VOID,
  ...ZERO, ...set(10),
  ...get(1), ...set(8),
  ...get(1), ...get(3), I32_ADD, ...set(1),
  ...get(0), ...set(9),
  ...get(3), ...i32(16), I32_AND, IF, VOID,
  ...half(0), ...get(13), ...simd(I32X4_DOT_I16X8_S), ...set(10),
  ...advance([9, 8], [32, 16]),
  END,
  BLOCK, VOID,
  ...get(8), ...get(1), I32_GE_U, BR_IF, 0,
  LOOP, VOID,
  ...get(10), ...half(0), ...half(16), ...simd(I16X8_ADD), ...get(13), ...simd(I32X4_DOT_I16X8_S), ...simd(I32X4_ADD), ...set(10),
  ...advance([9, 8], [64, 32]),
  ...get(8), ...get(1), I32_LT_U, BR_IF, 0,
  END, END,
  ...store(10),
  END,
  END,
];

// "scoresAt" locals: 0 $q, 1 $rows, 2 $positions, 3 $n, 4 $stride, 5 $scales, 6 $out, 7 $sums,
// 8 $end, 9 $p, 10 $qq, 11 $acc, 12 $at, 13 $rowEnd, then for the groups of rows: 14.. each further row's
// address and byte offset, $groupsEnd, then each further row's accumulator and the question's 16 bytes at $qq + offset.
/** Listed rows scored a pass: scattered rows, each waiting for its own cache misses, are read several at once. */
const ROWS_A_PASS = 4;
const FURTHER = ROWS_A_PASS - 1;
/** The locals of a listed row's address, byte offset and accumulator. */
interface GroupRow {
  row: number;
  at: number;
  acc: number;
}
/** Per row of a group. */
const GROUP_ROWS: GroupRow[] = [
  { row: 9, at: 12, acc: 11 },
  ...Array.from({ length: FURTHER }, (_, k) => ({ row: 14 + 2 * k, at: 15 + 2 * k, acc: 15 + 2 * FURTHER + k })),
];
const GROUPS_END = 14 + 2 * FURTHER, QUESTION = 15 + 3 * FURTHER;
/** 16 dimensions of each row of `rows` `offset` bytes on, added into its accumulator (`first`: set instead); the question's 16 bytes loaded once. */
const blocks = (rows: GroupRow[], offset: number, first = false) => [
  ...loadV128(10, offset), ...set(QUESTION),
  ...rows.flatMap(({ row, acc }) => [
    ...(first ? [] : get(acc)), ...relaxedDot(loadV128(row, offset), get(QUESTION)), ...(first ? [] : simd(I32X4_ADD)), ...set(acc),
  ]),
];
/** out[at] = int8 score of the row whose accumulator is `acc`, `at` the local holding its byte offset. */
const storeInt8 = (acc: number, at: number) => [
  ...get(6), ...get(at), I32_ADD,
  ...get(5), ...get(at), I32_ADD, F32_LOAD, ...memarg(2),
  ...sumOfLanes(acc),
  ...get(7), ...get(at), I32_ADD, I32_LOAD, ...memarg(2), ...i32(6), I32_SHL, I32_SUB, F32_CONVERT_I32_S,
  F32_MUL, F32_STORE, ...memarg(2),
];
/** The k-th listed row from $positions: its byte offset into `at`, its row's address into `row`. */
const locate = (k: number, at: number, row: number) => [
  ...get(2), I32_LOAD, ...memarg(2, 4 * k), ...i32(2), I32_SHL, ...set(at),
  ...get(1), ...get(2), I32_LOAD, ...memarg(2, 4 * k), ...get(4), I32_MUL, I32_ADD, ...set(row),
];
/**
 * Scores the listed rows from $positions to the local `end`, `rows.length` a pass (the first row's locals are
 * $p, $at, $acc: 9, 12, 11).
 */
const listedRows = (rows: GroupRow[], end: number) => [
  BLOCK, VOID, LOOP, VOID,
  ...get(2), ...get(end), I32_GE_U, BR_IF, 1,
  ...rows.flatMap(({ row, at }, k) => locate(k, at, row)),
  ...get(9), ...get(4), I32_ADD, ...set(13),
  ...get(0), ...set(10),
  ...rows.flatMap(({ acc }) => [...ZERO, ...set(acc)]),
  ...get(4), ...i32(16), I32_AND, IF, VOID,
  ...blocks(rows, 0, true),
  ...advance([10, ...rows.map(({ row }) => row)], new Array(rows.length + 1).fill(16)),
  END,
  BLOCK, VOID,
  ...get(9), ...get(13), I32_GE_U, BR_IF, 0,
  LOOP, VOID,
  ...blocks(rows, 0), ...blocks(rows, 16),
  ...advance([10, ...rows.map(({ row }) => row)], new Array(rows.length + 1).fill(32)),
  ...get(9), ...get(13), I32_LT_U, BR_IF, 0,
  END, END,
  ...rows.flatMap(({ acc, at }) => storeInt8(acc, at)),
  ...advance([2], [4 * rows.length]),
  BR, 0, END, END,
];
const SCORES_AT = [
  // locals: 3 × i32 ($end $p $qq), v128 $acc, 2 × i32 ($at $rowEnd), the further rows' addresses and offsets and
  // $groupsEnd (i32), their accumulators and the question (v128)
  0x05, 0x03, I32_TYPE, 0x01, V128_TYPE, 0x02, I32_TYPE, 2 * FURTHER + 1, I32_TYPE, FURTHER + 1, V128_TYPE,
  ...get(2), ...get(3), ...i32(2), I32_SHL, I32_ADD, ...set(8),
  ...get(2), ...get(3), ...i32(-ROWS_A_PASS), I32_AND, ...i32(2), I32_SHL, I32_ADD, ...set(GROUPS_END),
  // ROWS_A_PASS listed rows a pass, the question's loads shared by them; then the rows left over one a pass.
  ...listedRows(GROUP_ROWS, GROUPS_END),
  ...listedRows(GROUP_ROWS.slice(0, 1), 8),
  END,
];

const MODULE = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [0x02, 0x60, 7, ...new Array(7).fill(I32_TYPE), 0x00, 0x60, 8, ...new Array(8).fill(I32_TYPE), 0x00]),
  // memory import: shared (flags 3), minimum 0, maximum 65536 pages.
  ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x03, 0x00, ...unsignedLeb(65536)]),
  ...section(3, [0x02, 0x00, 0x01]),
  ...section(7, [0x02, ...name('scores'), 0x00, 0x00, ...name('scoresAt'), 0x00, 0x01]),
  ...section(10, [0x02, ...functionBody(SCORES4), ...functionBody(SCORES_AT)]),
]);

/** The module's functions; all addresses are byte offsets into the memory. */
export interface Int4Kernels {
  /** out[i] = (Σ_j q[j] · nibble(i, j) − offset) · scales[i], i < n; the question i8, `stride` / 16 × 32 bytes. */
  scores(q: number, rows: number, n: number, stride: number, scales: number, out: number, offset: number): void;
  /** The relaxed int8 kernel's scores of the rows at positions[k] (i32), k < n, into out[positions[k]]. */
  scoresAt(q: number, rows: number, positions: number, n: number, stride: number, scales: number, out: number, sums: number): void;
}

let compiled: WebAssembly.Module | undefined;

/** The module instantiated on `memory`; only where the relaxed int8 kernel is this thread's (it enables relaxed SIMD). */
export function int4Kernels(memory: WebAssembly.Memory): Int4Kernels {
  compiled ??= new WebAssembly.Module(MODULE);
  return new WebAssembly.Instance(compiled, { env: { memory } }).exports as unknown as Int4Kernels;
}

/** Bytes of a 4-bit row of `dim` components: 16 per 32 dimensions. */
export const int4StrideOf = (dim: number) => Math.ceil(dim / 32) * 16;

/** The 4-bit value of each int8 value v (at v + 127): ±7 at ±127, rounded. */
const INT4_OF_INT8 = Int8Array.from({ length: 255 }, (_, k) => Math.round(((k - 127) * 7) / 127));

/**
 * Writes the 4-bit row of the int8 row of `dim` values at `from` (values -7..7, from the int8 ones) at `at`
 * in the layout the kernel reads, padding with 8 (zero); returns the sum of the squares of its values.
 */
export function writeInt4Row(int8: Int8Array, from: number, out: Uint8Array, at: number, dim: number): number {
  const stride = int4StrideOf(dim);
  let squares = 0;
  for (let b = 0; b < stride; b += 16) {
    for (let k = 0; k < 16; k++) {
      const low = 2 * b + k, high = low + 16;
      const lowValue = low < dim ? INT4_OF_INT8[int8[from + low]! + 127]! : 0;
      const highValue = high < dim ? INT4_OF_INT8[int8[from + high]! + 127]! : 0;
      squares += lowValue * lowValue + highValue * highValue;
      out[at + b + k] = (lowValue + 8) | ((highValue + 8) << 4);
    }
  }
  return squares;
}

/** Writes the question (int8 values) at `at` as the 4-bit kernel reads it, zero-padded to `int4StrideOf(dim) × 2` bytes; returns its `offset`. */
export function writeInt4Question(memory: WebAssembly.Memory, at: number, values: ArrayLike<number>, dim: number): number {
  const question = new Int8Array(memory.buffer, at, int4StrideOf(dim) * 2).fill(0);
  let sum = 0;
  for (let j = 0; j < dim; j++) {
    question[j] = values[j]!;
    sum += values[j]!;
  }
  return 8 * sum;
}
