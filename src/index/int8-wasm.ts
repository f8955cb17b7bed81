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
 */

import { functionBody, get, i32, memarg, name, section, set, simd, unsignedLeb } from './wasm-assembly.js';

// Locals: 0 $q, 1 $rows, 2 $n, 3 $stride, 4 $scales, 5 $out, 6 $end, 7 $p, 8 $qq, 9 $acc, 10 $v.
const V128_LOAD = 0x00, V128_CONST = 0x0c, I32X4_EXTRACT_LANE = 0x1b;
const I16X8_EXTEND_LOW_I8X16_S = 0x87, I16X8_EXTEND_HIGH_I8X16_S = 0x88, I32X4_ADD = 0xae, I32X4_DOT_I16X8_S = 0xba;
const BLOCK = 0x02, LOOP = 0x03, END = 0x0b, BR = 0x0c, BR_IF = 0x0d, VOID = 0x40;
const I32_ADD = 0x6a, I32_SHL = 0x74, I32_LT_U = 0x49, I32_GE_U = 0x4f;
const F32_LOAD = 0x2a, F32_STORE = 0x38, F32_MUL = 0x94, F32_CONVERT_I32_S = 0xb2;
const I32_TYPE = 0x7f, F32_TYPE = 0x7d, V128_TYPE = 0x7b;
const IF = 0x04, F32_GE = 0x60, I32_STORE = 0x36;

const lane = (n: number) => [...get(9), ...simd(I32X4_EXTRACT_LANE, n)];

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
  ...get(7), ...simd(V128_LOAD, ...memarg(0)), ...set(10),
  ...get(9),
  ...get(10), ...simd(I16X8_EXTEND_LOW_I8X16_S), ...get(8), ...simd(V128_LOAD, ...memarg(0)), ...simd(I32X4_DOT_I16X8_S),
  ...simd(I32X4_ADD), ...set(9),
  ...get(9),
  ...get(10), ...simd(I16X8_EXTEND_HIGH_I8X16_S), ...get(8), ...simd(V128_LOAD, ...memarg(0, 16)), ...simd(I32X4_DOT_I16X8_S),
  ...simd(I32X4_ADD), ...set(9),
  ...get(8), ...i32(32), I32_ADD, ...set(8),
  ...get(7), ...i32(16), I32_ADD, ...set(7),
  ...get(7), ...get(1), I32_LT_U, BR_IF, 0,
  END,
  ...get(5),
  ...get(4), F32_LOAD, ...memarg(2),
  ...lane(0), ...lane(1), I32_ADD, ...lane(2), ...lane(3), I32_ADD, I32_ADD, F32_CONVERT_I32_S,
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

const MODULE = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [
    0x02,
    0x60, 0x06, ...new Array(6).fill(I32_TYPE), 0x00,
    0x60, 0x04, I32_TYPE, I32_TYPE, F32_TYPE, I32_TYPE, 0x01, I32_TYPE,
  ]),
  // memory import: shared (flags 3), minimum 0, maximum 65536 pages.
  ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x03, 0x00, ...unsignedLeb(65536)]),
  ...section(3, [0x02, 0x00, 0x01]),
  ...section(7, [0x02, ...name('scores'), 0x00, 0x00, ...name('above'), 0x00, 0x01]),
  ...section(10, [0x02, ...functionBody(BODY), ...functionBody(ABOVE)]),
]);

let compiled: WebAssembly.Module | undefined;

/** The module's functions; all addresses are byte offsets into the memory. */
export interface Int8Kernels {
  /** out[i] = (Σ_j rows[i][j] · q[j]) · scales[i], i < n. */
  scores(q: number, rows: number, n: number, stride: number, scales: number, out: number): void;
  /** Writes the positions i < n with scores[i] ≥ threshold, ascending, to out (i32); returns how many. */
  above(scores: number, n: number, threshold: number, out: number): number;
}

/** The functions, instantiated on `memory` (shared, at most 65,536 pages). */
export function int8Kernels(memory: WebAssembly.Memory): Int8Kernels {
  compiled ??= new WebAssembly.Module(MODULE);
  return new WebAssembly.Instance(compiled, { env: { memory } }).exports as unknown as Int8Kernels;
}
