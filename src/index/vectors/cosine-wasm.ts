/**
 * Float32 dot products of one query with rows at given positions, in WebAssembly SIMD, bit for bit the
 * sums sqlite-vec's vec_distance_cosine computes (vector-copies.ts, cosinesAt): each row's products are
 * rounded to float32 and added in order j = 0..dim-1 to a float32 sum. SIMD cannot split one row's sum
 * (that would change the order of the additions), so it runs rows side by side instead: one row per f32x4
 * lane, ROWS_PER_STEP rows per step, each lane adding its own row's products in order. `f32x4.mul` and
 * `f32x4.add` round each lane to float32 as `Math.fround` does in JS (IEEE 754, no fused multiply-add).
 *
 * The rows live in a shared `WebAssembly.Memory` (int8-rows.ts: a group's float32 vectors in front of its
 * int8 rows); each thread that computes dots in a memory grows it once by a scratch region of its own for
 * the query, the rows' addresses and the dots.
 *
 * The module is written out instruction by instruction below (no toolchain at build time), for any
 * multiple of four rows per step; it is this .wat for 8 rows (two groups of four, g = 0, 1), and the same
 * with a third group ($p8–$p11, $acc2) for the ROWS_PER_STEP = 12 it is built with:
 *
 *   (module
 *     (import "env" "memory" (memory 0 65536 shared))
 *     ;; out[i] = Σ_j f32(row_i[j] · q[j]) in order j, i < n (a multiple of 8); `rows` holds each row's
 *     ;; byte address (i32), `bytes` = 4 × dim.
 *     (func (export "dots") (param $q i32) (param $rows i32) (param $n i32) (param $bytes i32) (param $out i32)
 *       (local $end i32) (local $o i32) (local $full i32) (local $p0 i32) … (local $p7 i32)
 *       (local $acc0 v128) (local $acc1 v128) (local $qv v128) (local $a v128) (local $b v128) (local $c v128)
 *       (local $d v128) (local $t0 v128) (local $t1 v128) (local $t2 v128) (local $t3 v128)
 *       (local.set $end (i32.add (local.get $rows) (i32.shl (local.get $n) (i32.const 2))))
 *       (local.set $full (i32.and (local.get $bytes) (i32.const -16)))
 *       (block (loop
 *         (br_if 1 (i32.ge_u (local.get $rows) (local.get $end)))
 *         (local.set $p0 (i32.load offset=0 (local.get $rows))) … (local.set $p7 (i32.load offset=28 (local.get $rows)))
 *         (local.set $acc0 (v128.const i32x4 0 0 0 0)) (local.set $acc1 (v128.const i32x4 0 0 0 0))
 *         (local.set $o (i32.const 0))
 *         ;; Four dimensions at a time: four rows' products, transposed so that the vector added first
 *         ;; holds each row's product at j, the next at j + 1, and so on.
 *         (block (loop
 *           (br_if 1 (i32.ge_u (local.get $o) (local.get $full)))
 *           (local.set $qv (v128.load (i32.add (local.get $q) (local.get $o))))
 *           ;; for g = 0, 1 (rows 4g … 4g + 3):
 *           (local.set $a (f32x4.mul (v128.load (i32.add (local.get $p4g) (local.get $o))) (local.get $qv)))
 *           … $b, $c, $d from $p4g+1, $p4g+2, $p4g+3
 *           (local.set $t0 (i8x16.shuffle <a0 b0 a1 b1> (local.get $a) (local.get $b)))
 *           (local.set $t1 (i8x16.shuffle <c0 d0 c1 d1> (local.get $c) (local.get $d)))
 *           (local.set $t2 (i8x16.shuffle <a2 b2 a3 b3> (local.get $a) (local.get $b)))
 *           (local.set $t3 (i8x16.shuffle <c2 d2 c3 d3> (local.get $c) (local.get $d)))
 *           (local.set $accg (f32x4.add (local.get $accg) (i8x16.shuffle <a0 b0 c0 d0> (local.get $t0) (local.get $t1))))
 *           (local.set $accg (f32x4.add (local.get $accg) (i8x16.shuffle <a1 b1 c1 d1> (local.get $t0) (local.get $t1))))
 *           (local.set $accg (f32x4.add (local.get $accg) (i8x16.shuffle <a2 b2 c2 d2> (local.get $t2) (local.get $t3))))
 *           (local.set $accg (f32x4.add (local.get $accg) (i8x16.shuffle <a3 b3 c3 d3> (local.get $t2) (local.get $t3))))
 *           (local.set $o (i32.add (local.get $o) (i32.const 16)))
 *           (br 0)))
 *         ;; The last dim mod 4 dimensions one at a time: each row's component gathered into its lane.
 *         (block (loop
 *           (br_if 1 (i32.ge_u (local.get $o) (local.get $bytes)))
 *           (local.set $qv (v128.load32_splat (i32.add (local.get $q) (local.get $o))))
 *           ;; for g = 0, 1:
 *           (local.set $a (v128.load32_zero (i32.add (local.get $p4g) (local.get $o))))
 *           (local.set $a (v128.load32_lane 1 (i32.add (local.get $p4g+1) (local.get $o)) (local.get $a)))
 *           … lanes 2 and 3 from $p4g+2, $p4g+3
 *           (local.set $accg (f32x4.add (local.get $accg) (f32x4.mul (local.get $a) (local.get $qv))))
 *           (local.set $o (i32.add (local.get $o) (i32.const 4)))
 *           (br 0)))
 *         (v128.store offset=0 (local.get $out) (local.get $acc0))
 *         (v128.store offset=16 (local.get $out) (local.get $acc1))
 *         (local.set $out (i32.add (local.get $out) (i32.const 32)))
 *         (local.set $rows (i32.add (local.get $rows) (i32.const 32)))
 *         (br 0))))
 */
import { functionBody, get, i32, memarg, name, section, set, simd, unsignedLeb } from './wasm-assembly.js';
import { PAGE, scratchRegionOf } from './wasm-scratch.js';

/**
 * Rows side by side per step (a multiple of 4). The sum of a lane waits on its previous addition
 * (latency ~4 cycles), so one group of four rows would wait on it; with two or more groups the shuffles
 * (8 per 16 products, one port on most x86 cores) bound the arithmetic, and more rows read at once keep
 * more of them coming from main memory at a time. bench/retrieval/cosines.ts, CPU per 1,000 cosines of
 * 384 dims, rows from main memory / from the caches: 4 rows 0.34 / 0.13 ms, 8 rows 0.30 / 0.10, 12 rows
 * 0.28 / 0.10, 16 rows 0.28 / 0.11.
 */
export const ROWS_PER_STEP = 12;

const V128_LOAD = 0x00, V128_LOAD32_SPLAT = 0x09, V128_STORE = 0x0b, V128_CONST = 0x0c, I8X16_SHUFFLE = 0x0d;
const V128_LOAD32_LANE = 0x56, V128_LOAD32_ZERO = 0x5c, F32X4_ADD = 0xe4, F32X4_MUL = 0xe6;
const BLOCK = 0x02, LOOP = 0x03, END = 0x0b, BR = 0x0c, BR_IF = 0x0d, VOID = 0x40;
const I32_LOAD = 0x28, I32_ADD = 0x6a, I32_AND = 0x71, I32_SHL = 0x74, I32_GE_U = 0x4f;
const I32_TYPE = 0x7f, V128_TYPE = 0x7b;

/** i8x16.shuffle byte lanes taking 32-bit lanes `x` of the first operand (0–3) and the second (4–7). */
const lanes32 = (...x: number[]) => x.flatMap((lane) => [0, 1, 2, 3].map((byte) => lane * 4 + byte));
const UNPACK_LOW_32 = lanes32(0, 4, 1, 5);
const UNPACK_HIGH_32 = lanes32(2, 6, 3, 7);
const UNPACK_LOW_64 = lanes32(0, 1, 4, 5);
const UNPACK_HIGH_64 = lanes32(2, 3, 6, 7);

function dotsBody(rowsPerStep: number): number[] {
  const groups = rowsPerStep / 4;
  // Locals: params 0 $q, 1 $rows, 2 $n, 3 $bytes, 4 $out; then $end $o $full, a $p per row, an $acc per group, $qv, $a–$d, $t0–$t3.
  const [Q, ROWS, N, BYTES, OUT, END_AT, O, FULL] = [0, 1, 2, 3, 4, 5, 6, 7];
  const p = (row: number) => 8 + row;
  const acc = (group: number) => 8 + rowsPerStep + group;
  const QV = 8 + rowsPerStep + groups;
  const [A, B, C, D, T0, T1, T2, T3] = Array.from({ length: 8 }, (_, k) => QV + 1 + k);
  const at = (pointer: number) => [...get(pointer), ...get(O), I32_ADD];
  const shuffle = (x: number, y: number, lanes: number[]) => [...get(x), ...get(y), ...simd(I8X16_SHUFFLE, ...lanes)];
  const addTo = (accumulator: number, value: number[]) => [...get(accumulator), ...value, ...simd(F32X4_ADD), ...set(accumulator)];

  const fourDimensions = (group: number) => [
    ...[A, B, C, D].flatMap((product, k) => [...at(p(group * 4 + k)), ...simd(V128_LOAD, ...memarg(0)), ...get(QV), ...simd(F32X4_MUL), ...set(product)]),
    ...shuffle(A, B, UNPACK_LOW_32), ...set(T0),
    ...shuffle(C, D, UNPACK_LOW_32), ...set(T1),
    ...shuffle(A, B, UNPACK_HIGH_32), ...set(T2),
    ...shuffle(C, D, UNPACK_HIGH_32), ...set(T3),
    ...addTo(acc(group), shuffle(T0, T1, UNPACK_LOW_64)),
    ...addTo(acc(group), shuffle(T0, T1, UNPACK_HIGH_64)),
    ...addTo(acc(group), shuffle(T2, T3, UNPACK_LOW_64)),
    ...addTo(acc(group), shuffle(T2, T3, UNPACK_HIGH_64)),
  ];
  // The four rows' components gathered in $a (v128.load32_lane takes the address, then the vector).
  const oneDimension = (group: number) => [
    ...at(p(group * 4)), ...simd(V128_LOAD32_ZERO, ...memarg(2)), ...set(A),
    ...[1, 2, 3].flatMap((lane) => [...at(p(group * 4 + lane)), ...get(A), ...simd(V128_LOAD32_LANE, ...memarg(2), lane), ...set(A)]),
    ...addTo(acc(group), [...get(A), ...get(QV), ...simd(F32X4_MUL)]),
  ];
  const range = (count: number) => Array.from({ length: count }, (_, k) => k);

  return [
    0x02, ...unsignedLeb(3 + rowsPerStep), I32_TYPE, ...unsignedLeb(groups + 9), V128_TYPE,
    ...get(ROWS), ...get(N), ...i32(2), I32_SHL, I32_ADD, ...set(END_AT),
    ...get(BYTES), ...i32(-16), I32_AND, ...set(FULL),
    BLOCK, VOID, LOOP, VOID,
    ...get(ROWS), ...get(END_AT), I32_GE_U, BR_IF, 1,
    ...range(rowsPerStep).flatMap((row) => [...get(ROWS), I32_LOAD, ...memarg(2, row * 4), ...set(p(row))]),
    ...range(groups).flatMap((group) => [...simd(V128_CONST, ...new Array(16).fill(0)), ...set(acc(group))]),
    ...i32(0), ...set(O),
    BLOCK, VOID, LOOP, VOID,
    ...get(O), ...get(FULL), I32_GE_U, BR_IF, 1,
    ...get(Q), ...get(O), I32_ADD, ...simd(V128_LOAD, ...memarg(0)), ...set(QV),
    ...range(groups).flatMap(fourDimensions),
    ...get(O), ...i32(16), I32_ADD, ...set(O),
    BR, 0, END, END,
    BLOCK, VOID, LOOP, VOID,
    ...get(O), ...get(BYTES), I32_GE_U, BR_IF, 1,
    ...get(Q), ...get(O), I32_ADD, ...simd(V128_LOAD32_SPLAT, ...memarg(2)), ...set(QV),
    ...range(groups).flatMap(oneDimension),
    ...get(O), ...i32(4), I32_ADD, ...set(O),
    BR, 0, END, END,
    ...range(groups).flatMap((group) => [...get(OUT), ...get(acc(group)), ...simd(V128_STORE, ...memarg(0, group * 16))]),
    ...get(OUT), ...i32(rowsPerStep * 4), I32_ADD, ...set(OUT),
    ...get(ROWS), ...i32(rowsPerStep * 4), I32_ADD, ...set(ROWS),
    BR, 0, END, END,
    END,
  ];
}

/** The module with `rowsPerStep` rows side by side (exported for bench/retrieval/cosines.ts to compare). */
export function dotsModule(rowsPerStep = ROWS_PER_STEP): Uint8Array<ArrayBuffer> {
  if (rowsPerStep <= 0 || rowsPerStep % 4 !== 0) throw new Error(`rows per step must be a positive multiple of 4, not ${rowsPerStep}`);
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [0x01, 0x60, 0x05, ...new Array(5).fill(I32_TYPE), 0x00]),
    // memory import: shared (flags 3), minimum 0, maximum 65536 pages.
    ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x03, 0x00, ...unsignedLeb(65536)]),
    ...section(3, [0x01, 0x00]),
    ...section(7, [0x01, ...name('dots'), 0x00, 0x00]),
    ...section(10, [0x01, ...functionBody(dotsBody(rowsPerStep))]),
  ]);
}

/** out[i] = the float32 dot product of the row at byte address rows[i] (i32) with q, i < n (a multiple of the module's rows per step). */
export type DotsKernel = (q: number, rows: number, n: number, bytes: number, out: number) => void;

let compiled: WebAssembly.Module | undefined;

/** The kernel instantiated on `memory` (shared, at most 65,536 pages). */
function dotsKernel(memory: WebAssembly.Memory): DotsKernel {
  compiled ??= new WebAssembly.Module(dotsModule());
  return new WebAssembly.Instance(compiled, { env: { memory } }).exports.dots as DotsKernel;
}

/** Rows per kernel call: the scratch holds this many addresses and dots. A multiple of ROWS_PER_STEP. */
const BATCH = ROWS_PER_STEP * 341;

/** Float32 rows of `dim` components back to back in a shared memory, the first at byte `floatsAt`. */
export interface Float32Rows {
  memory: WebAssembly.Memory;
  dim: number;
  floatsAt?: number;
}

/** Bytes each thread that computes dots in a memory adds to it: the query, an address and a dot per row of a batch. */
export function dotsScratchBytesOf(dim: number): number {
  return Math.ceil((Math.ceil(dim / 4) * 16 + BATCH * 8) / PAGE) * PAGE;
}

interface DotsScratch {
  dots: DotsKernel;
  queryAt: number;
  addressesAt: number;
  dotsAt: number;
}

/** Per thread: its scratch region in each memory it computed dots in (null: none to be had). */
const scratches = new WeakMap<WebAssembly.Memory, DotsScratch | null>();

/** Undefined without SIMD, or with more threads than the memory has room for: this thread computes them in JS. */
function scratchOf(rows: Float32Rows): DotsScratch | undefined {
  return scratchRegionOf(scratches, rows.memory, dotsScratchBytesOf(rows.dim), (queryAt) => {
    const addressesAt = queryAt + Math.ceil(rows.dim / 4) * 16;
    return { dots: dotsKernel(rows.memory), queryAt, addressesAt, dotsAt: addressesAt + BATCH * 4 };
  });
}

/**
 * out[k] = the float32 dot product of the row at positions[k] with `query`, for every k; false (and out
 * untouched) when the rows are not in a memory or this thread has no scratch region in it.
 */
export function float32DotsAt(rows: Float32Rows, positions: ArrayLike<number>, query: Float32Array, out: Float64Array): boolean {
  if (rows.floatsAt === undefined) return false;
  const scratch = scratchOf(rows);
  if (!scratch) return false;
  const { dots, queryAt, addressesAt, dotsAt } = scratch;
  const buffer = rows.memory.buffer;
  const rowBytes = rows.dim * 4;
  new Float32Array(buffer, queryAt, rows.dim).set(query);
  const addresses = new Uint32Array(buffer, addressesAt, BATCH);
  const results = new Float32Array(buffer, dotsAt, BATCH);
  for (let from = 0; from < positions.length; from += BATCH) {
    const count = Math.min(BATCH, positions.length - from);
    for (let i = 0; i < count; i++) addresses[i] = rows.floatsAt + positions[from + i]! * rowBytes;
    // The last step's spare lanes take the first row again (their dots are not read).
    const padded = Math.ceil(count / ROWS_PER_STEP) * ROWS_PER_STEP;
    addresses.fill(addresses[0]!, count, padded);
    dots(queryAt, addressesAt, padded, rowBytes, dotsAt);
    for (let i = 0; i < count; i++) out[from + i] = results[i]!;
  }
  return true;
}
