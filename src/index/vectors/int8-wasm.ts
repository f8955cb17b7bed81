/**
 * Approximate cosines of one query with many int8 rows, in WebAssembly SIMD, over rows held in a shared
 * `WebAssembly.Memory` so that the reader threads of a process scan one copy (int8-rows.ts).
 *
 * The module is written out instruction by instruction below (no toolchain at build time); it is the .wat:
 *
 *   (module
 *     (import "env" "memory" (memory 0 65536 shared))
 *     ;; out[i] = f32(Σ_j rows[i][j] · q[j]) · scales[i], i < n; rows of `stride` bytes (a multiple of 16),
 *     ;; the query as i16 (2 × stride bytes), scales and out f32.
 *     (func (export "scores") (param $q i32) (param $rows i32) (param $n i32) (param $stride i32)
 *                             (param $scales i32) (param $out i32)
 *       (local $end i32) (local $p i32) (local $qq i32) (local $acc v128) (local $v v128)
 *       (local.set $end (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2))))
 *       (block (loop
 *         (br_if 1 (i32.ge_u (local.get $out) (local.get $end)))
 *         (local.set $acc (v128.const i32x4 0 0 0 0))
 *         (local.set $p (local.get $rows))
 *         (local.set $rows (i32.add (local.get $rows) (local.get $stride)))
 *         (local.set $qq (local.get $q))
 *         (loop
 *           (local.set $v (v128.load (local.get $p)))
 *           (local.set $acc (i32x4.add (local.get $acc)
 *             (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (v128.load (local.get $qq)))))
 *           (local.set $acc (i32x4.add (local.get $acc)
 *             (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (v128.load offset=16 (local.get $qq)))))
 *           (local.set $qq (i32.add (local.get $qq) (i32.const 32)))
 *           (local.set $p (i32.add (local.get $p) (i32.const 16)))
 *           (br_if 0 (i32.lt_u (local.get $p) (local.get $rows))))
 *         (f32.store (local.get $out) (f32.mul (f32.load (local.get $scales)) (f32.convert_i32_s
 *           (i32.add (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
 *                    (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))))
 *         (local.set $scales (i32.add (local.get $scales) (i32.const 4)))
 *         (local.set $out (i32.add (local.get $out) (i32.const 4)))
 *         (br 0))))
 *     ;; The positions i < n with scores[i] >= threshold, ascending, into out; returns how many.
 *     (func (export "above") (param $scores i32) (param $n i32) (param $threshold f32) (param $out i32) (result i32)
 *       (local $i i32) (local $k i32)
 *       (block (loop
 *         (br_if 1 (i32.ge_u (local.get $i) (local.get $n)))
 *         (if (f32.ge (f32.load (i32.add (local.get $scores) (i32.shl (local.get $i) (i32.const 2)))) (local.get $threshold))
 *           (then
 *             (i32.store (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 2))) (local.get $i))
 *             (local.set $k (i32.add (local.get $k) (i32.const 1)))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 1)))
 *         (br 0)))
 *       (local.get $k))
 *
 * `i32x4.dot_i16x8_s` multiplies eight pairs of i16 and adds neighbours into four i32 lanes (pmaddwd);
 * products of int8 values are at most 127² and a row of 65,536 dimensions sums to under 2^31: no overflow.
 *
 * The relaxed kernel (relaxed SIMD) takes 16 products in one instruction, `i16x8.relaxed_dot_i8x16_i7x16_s`
 * (pmaddubsw on x64: 16 products, neighbours added into eight i16), then `i32x4.dot_i16x8_s` against ones
 * (pmaddwd) into four i32 lanes: three instructions per 16 bytes where the kernel above takes six. Its
 * result is the exact integer dot product only when the second operand's lanes are in 0..127 (x64 reads
 * them unsigned, ARM signed), so the question is held at ±63 plus 64 (u8, `stride` bytes) and the kernel
 * subtracts 64 · Σrow (an i32 per row, `sums`): dot(row, q + 64) − 64 · Σrow = dot(row, q). A pair of
 * products is at most 2 · 127 · 127 < 2^15, so pmaddubsw's i16 saturation never applies. (Not
 * `i32x4.relaxed_dot_i8x16_i7x16_add_s`, the same with the add: V8 11.3's baseline compiler gets it wrong on
 * x64, twice the dot product and the accumulator lost; and it rebuilds its ones in every use.) It takes
 * 32 bytes per turn of the inner loop, after an odd 16 first. Its "scores", where it differs from the above:
 *
 *     (func (export "scores") (param $q i32) (param $rows i32) (param $n i32) (param $stride i32)
 *                             (param $scales i32) (param $out i32) (param $sums i32)
 *       (local $end i32) (local $p i32) (local $qq i32) (local $acc v128)
 *       ...
 *         (if (i32.and (local.get $stride) (i32.const 16)) (then
 *           (local.set $acc (BLOCK 0))
 *           (local.set $qq (i32.add (local.get $qq) (i32.const 16)))
 *           (local.set $p (i32.add (local.get $p) (i32.const 16)))))
 *         (block (br_if 0 (i32.ge_u (local.get $p) (local.get $rows)))
 *           (loop
 *             (local.set $acc (i32x4.add (i32x4.add (local.get $acc) (BLOCK 0)) (BLOCK 16)))
 *             (local.set $qq (i32.add (local.get $qq) (i32.const 32)))
 *             (local.set $p (i32.add (local.get $p) (i32.const 32)))
 *             (br_if 0 (i32.lt_u (local.get $p) (local.get $rows)))))
 *         (f32.store (local.get $out) (f32.mul (f32.load (local.get $scales)) (f32.convert_i32_s
 *           (i32.sub (Σ lanes of $acc) (i32.shl (i32.load (local.get $sums)) (i32.const 6))))))
 *         (local.set $sums (i32.add (local.get $sums) (i32.const 4)))
 *         ... (as above)
 *
 *   where (BLOCK offset) is (i32x4.dot_i16x8_s (i16x8.relaxed_dot_i8x16_i7x16_s
 *     (v128.load offset=offset (local.get $p)) (v128.load offset=offset (local.get $qq))) (v128.const i16x8 1 1 1 1 1 1 1 1))
 *
 * Node 20 (V8 11.3) validates relaxed SIMD only under the V8 flag --experimental-wasm-relaxed-simd, which
 * can be set at run time; Node 22 ships it. The kernel is chosen once per thread (`int8KernelKind`).
 */

import { debuglog } from 'node:util';
import v8 from 'node:v8';
import { seededRandom } from '../../seeded-random.js';
import { functionBody, get, i32, loadV128, memarg, name, relaxedDotBlock, section, set, simd, sumOfLanes, unsignedLeb } from './wasm-assembly.js';

// Locals: 0 $q, 1 $rows, 2 $n, 3 $stride, 4 $scales, 5 $out, 6 $end, 7 $p, 8 $qq, 9 $acc, 10 $v.
const V128_CONST = 0x0c;
const I16X8_EXTEND_LOW_I8X16_S = 0x87, I16X8_EXTEND_HIGH_I8X16_S = 0x88, I32X4_ADD = 0xae, I32X4_DOT_I16X8_S = 0xba;
const BLOCK = 0x02, LOOP = 0x03, END = 0x0b, BR = 0x0c, BR_IF = 0x0d, VOID = 0x40;
const I32_ADD = 0x6a, I32_SUB = 0x6b, I32_SHL = 0x74, I32_LT_U = 0x49, I32_GE_U = 0x4f;
const F32_LOAD = 0x2a, F32_STORE = 0x38, F32_MUL = 0x94, F32_CONVERT_I32_S = 0xb2;
const I32_TYPE = 0x7f, F32_TYPE = 0x7d, V128_TYPE = 0x7b;
const IF = 0x04, F32_GE = 0x60, I32_LOAD = 0x28, I32_STORE = 0x36;
const I32_AND = 0x71;

const BODY = [
  0x02, 0x03, I32_TYPE, 0x02, V128_TYPE, // locals: 3 × i32 ($end $p $qq), 2 × v128 ($acc $v)
  ...get(5), ...get(2), ...i32(2), I32_SHL, I32_ADD, ...set(6),
  BLOCK, VOID, LOOP, VOID,
  ...get(5), ...get(6), I32_GE_U, BR_IF, 1,
  ...simd(V128_CONST, ...new Array(16).fill(0)), ...set(9),
  ...get(1), ...set(7),
  ...get(1), ...get(3), I32_ADD, ...set(1),
  ...get(0), ...set(8),
  LOOP, VOID,
  ...loadV128(7), ...set(10),
  ...get(9),
  ...get(10), ...simd(I16X8_EXTEND_LOW_I8X16_S), ...loadV128(8), ...simd(I32X4_DOT_I16X8_S),
  ...simd(I32X4_ADD), ...set(9),
  ...get(9),
  ...get(10), ...simd(I16X8_EXTEND_HIGH_I8X16_S), ...loadV128(8, 16), ...simd(I32X4_DOT_I16X8_S),
  ...simd(I32X4_ADD), ...set(9),
  ...get(8), ...i32(32), I32_ADD, ...set(8),
  ...get(7), ...i32(16), I32_ADD, ...set(7),
  ...get(7), ...get(1), I32_LT_U, BR_IF, 0,
  END,
  ...get(5),
  ...get(4), F32_LOAD, ...memarg(2),
  ...sumOfLanes(9), F32_CONVERT_I32_S,
  F32_MUL, F32_STORE, ...memarg(2),
  ...get(4), ...i32(4), I32_ADD, ...set(4),
  ...get(5), ...i32(4), I32_ADD, ...set(5),
  BR, 0, END, END,
  END,
];

// Locals: 0 $scores, 1 $n, 2 $threshold, 3 $out, 4 $i, 5 $k.
const ABOVE = [
  0x01, 0x02, I32_TYPE, // locals: 2 × i32 ($i $k)
  BLOCK, VOID, LOOP, VOID,
  ...get(4), ...get(1), I32_GE_U, BR_IF, 1,
  ...get(0), ...get(4), ...i32(2), I32_SHL, I32_ADD, F32_LOAD, ...memarg(2), ...get(2), F32_GE,
  IF, VOID,
  ...get(3), ...get(5), ...i32(2), I32_SHL, I32_ADD, ...get(4), I32_STORE, ...memarg(2),
  ...get(5), ...i32(1), I32_ADD, ...set(5),
  END,
  ...get(4), ...i32(1), I32_ADD, ...set(4),
  BR, 0, END, END,
  ...get(5),
  END,
];

// Locals: 0 $q, 1 $rows, 2 $n, 3 $stride, 4 $scales, 5 $out, 6 $sums, 7 $end, 8 $p, 9 $qq, 10 $acc.
/** Σ of 16 products of the row at $p and the question at $qq, `offset` bytes on, into four i32 lanes. */
const relaxedBlock = (offset: number) => relaxedDotBlock(8, 9, offset);
const advance = (bytes: number) => [...get(9), ...i32(bytes), I32_ADD, ...set(9), ...get(8), ...i32(bytes), I32_ADD, ...set(8)];
const RELAXED_BODY = [
  0x02, 0x03, I32_TYPE, 0x01, V128_TYPE, // locals: 3 × i32 ($end $p $qq), 1 × v128 ($acc)
  ...get(5), ...get(2), ...i32(2), I32_SHL, I32_ADD, ...set(7),
  BLOCK, VOID, LOOP, VOID,
  ...get(5), ...get(7), I32_GE_U, BR_IF, 1,
  ...simd(V128_CONST, ...new Array(16).fill(0)), ...set(10),
  ...get(1), ...set(8),
  ...get(1), ...get(3), I32_ADD, ...set(1),
  ...get(0), ...set(9),
  ...get(3), ...i32(16), I32_AND, IF, VOID,
  ...relaxedBlock(0), ...set(10),
  ...advance(16),
  END,
  BLOCK, VOID,
  ...get(8), ...get(1), I32_GE_U, BR_IF, 0,
  LOOP, VOID,
  ...get(10), ...relaxedBlock(0), ...simd(I32X4_ADD), ...relaxedBlock(16), ...simd(I32X4_ADD), ...set(10),
  ...advance(32),
  ...get(8), ...get(1), I32_LT_U, BR_IF, 0,
  END, END,
  ...get(5),
  ...get(4), F32_LOAD, ...memarg(2),
  ...sumOfLanes(10),
  ...get(6), I32_LOAD, ...memarg(2), ...i32(6), I32_SHL, I32_SUB, F32_CONVERT_I32_S,
  F32_MUL, F32_STORE, ...memarg(2),
  ...get(4), ...i32(4), I32_ADD, ...set(4),
  ...get(6), ...i32(4), I32_ADD, ...set(6),
  ...get(5), ...i32(4), I32_ADD, ...set(5),
  BR, 0, END, END,
  END,
];

/** A module of "scores" (`scoresParams` i32 parameters) and "above". */
const moduleOf = (scoresParams: number, scores: number[]) => Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [
    0x02,
    0x60, scoresParams, ...new Array(scoresParams).fill(I32_TYPE), 0x00,
    0x60, 0x04, I32_TYPE, I32_TYPE, F32_TYPE, I32_TYPE, 0x01, I32_TYPE,
  ]),
  // memory import: shared (flags 3), minimum 0, maximum 65536 pages.
  ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x03, 0x00, ...unsignedLeb(65536)]),
  ...section(3, [0x02, 0x00, 0x01]),
  ...section(7, [0x02, ...name('scores'), 0x00, 0x00, ...name('above'), 0x00, 0x01]),
  ...section(10, [0x02, ...functionBody(scores), ...functionBody(ABOVE)]),
]);

const PLAIN_MODULE = moduleOf(6, BODY);
const RELAXED_MODULE = moduleOf(7, RELAXED_BODY);

/** Which scores kernel: `plain` takes the question as i16 at ±127, `relaxed` as u8 at ±63 plus 64 and the rows' sums. */
export type Int8KernelKind = 'plain' | 'relaxed';

/** The module's functions; all addresses are byte offsets into the memory. */
export interface Int8Kernels {
  /**
   * out[i] = (Σ_j rows[i][j] · q[j]) · scales[i], i < n; `sums` (Σ_j rows[i][j], i32 per row) is read by
   * the relaxed kernel only (the plain one takes six arguments and ignores a seventh).
   */
  scores(q: number, rows: number, n: number, stride: number, scales: number, out: number, sums: number): void;
  /** Writes the positions i < n with scores[i] ≥ threshold, ascending, to out (i32); returns how many. */
  above(scores: number, n: number, threshold: number, out: number): number;
}

/**
 * Writes a question's rounded values at `at` as the `kind` kernel reads them: i16 for the plain kernel; for the
 * relaxed one u8 plus 64, since its second operand must lie in 0..127 (the padding too).
 */
export function writeQuestion(memory: WebAssembly.Memory, at: number, values: ArrayLike<number>, kind: Int8KernelKind): void {
  if (kind === 'plain') {
    new Int16Array(memory.buffer, at, values.length).set(values);
    return;
  }
  const question = new Uint8Array(memory.buffer, at, values.length);
  for (let j = 0; j < values.length; j++) question[j] = values[j]! + 64;
}

const compiled: Partial<Record<Int8KernelKind, WebAssembly.Module>> = {};

/** The functions of the `kind` kernel (by default this thread's), instantiated on `memory` (shared, at most 65,536 pages). */
export function int8Kernels(memory: WebAssembly.Memory, kind: Int8KernelKind = int8KernelKind()): Int8Kernels {
  const module = (compiled[kind] ??= new WebAssembly.Module(kind === 'relaxed' ? RELAXED_MODULE : PLAIN_MODULE));
  return new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as Int8Kernels;
}

const debug = debuglog('cairn-int8');
let chosen: Int8KernelKind | undefined;
let relaxedWorks: boolean | undefined;

/** This thread's kernel: the relaxed one where relaxed SIMD validates (with the V8 flag if need be) and computes exactly, else the plain one. */
export function int8KernelKind(): Int8KernelKind {
  if (chosen === undefined) {
    chosen = relaxedKernelWorks() ? 'relaxed' : 'plain';
    debug(`int8 scan: ${chosen} kernel`);
  }
  return chosen;
}

/** Makes `kind` this thread's kernel (undefined: back to the automatic choice); for tests and benchmarks. */
export function useInt8Kernel(kind: Int8KernelKind | undefined): void {
  if (kind === 'relaxed' && !relaxedKernelWorks()) throw new Error('the relaxed int8 kernel is not available in this runtime');
  chosen = kind;
}

/** Whether the relaxed kernel validates, enabling relaxed SIMD on a V8 that has it behind a flag, and agrees with the plain one. */
export function relaxedKernelWorks(): boolean {
  relaxedWorks ??= relaxedValidates() && agreesWithPlain();
  return relaxedWorks;
}

/** V8 before 11.4 (Node 20) has relaxed SIMD only behind a flag (the first thread to look sets it for the process). */
const [v8Major = 0, v8Minor = 0] = process.versions.v8.split('.').map(Number);
const behindFlag = v8Major < 11 || (v8Major === 11 && v8Minor < 4);

function relaxedValidates(): boolean {
  if (WebAssembly.validate(RELAXED_MODULE)) return true;
  // Only where the flag exists: a V8 that does not know a flag prints an error.
  if (!behindFlag) return false;
  try {
    v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  } catch {
    return false;
  }
  return WebAssembly.validate(RELAXED_MODULE);
}

/**
 * Both kernels on fixed random rows (with rows of ±127 and questions of ±63 among them): the relaxed one
 * must give exactly the integer dot products, lest a runtime's relaxed instruction be one of the results the
 * specification also allows, or its compiler get it wrong (as V8 11.3's baseline compiler does the variant with
 * the add). It runs the code of the first tier (V8 compiles hot functions again, optimised).
 */
function agreesWithPlain(): boolean {
  const count = 64, stride = 48, random = seededRandom(17);
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
  const rowsAt = 0, scalesAt = count * stride, sumsAt = scalesAt + count * 4, questionAt = sumsAt + count * 4;
  const plainAt = questionAt + stride * 2, relaxedAt = plainAt + count * 4;
  const heap = new Int8Array(memory.buffer);
  new Float32Array(memory.buffer, scalesAt, count).fill(1);
  const sums = new Int32Array(memory.buffer, sumsAt, count);
  for (let i = 0; i < count; i++) {
    for (let j = 0; j < stride; j++) {
      const value = i === 0 ? 127 : i === 1 ? -127 : i === 2 ? (j % 2 ? 127 : -127) : Math.round(random() * 254) - 127;
      heap[rowsAt + i * stride + j] = value;
      sums[i]! += value;
    }
  }
  const plain = int8Kernels(memory, 'plain');
  let relaxed: Int8Kernels;
  try {
    relaxed = int8Kernels(memory, 'relaxed');
  } catch {
    return false;
  }
  for (let question = 0; question < 4; question++) {
    const values = Array.from({ length: stride }, (_, j) =>
      question === 0 ? 63 : question === 1 ? -63 : question === 2 ? (j % 3 ? -63 : 63) : Math.round(random() * 126) - 63);
    writeQuestion(memory, questionAt, values, 'plain');
    plain.scores(questionAt, rowsAt, count, stride, scalesAt, plainAt, sumsAt);
    writeQuestion(memory, questionAt, values, 'relaxed');
    relaxed.scores(questionAt, rowsAt, count, stride, scalesAt, relaxedAt, sumsAt);
    const expected = new Float32Array(memory.buffer, plainAt, count), got = new Float32Array(memory.buffer, relaxedAt, count);
    for (let i = 0; i < count; i++) {
      let dot = 0;
      for (let j = 0; j < stride; j++) dot += heap[rowsAt + i * stride + j]! * values[j]!;
      if (expected[i] !== dot || got[i] !== dot) return false;
    }
  }
  return true;
}
