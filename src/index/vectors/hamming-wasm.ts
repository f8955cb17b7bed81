/**
 * Hamming distances of one query to many rows of sign bits, in WebAssembly: `i64.popcnt` is one
 * instruction where JS needs a dozen for each 32-bit word (bench/retrieval/floor.ts measures both, printed by
 * `npx tsx bench/retrieval/ann.ts` at each size: at 100k × 384 bits ~0.6 ms against ~3 ms in JS, same machine).
 *
 * The module is written out byte by byte below (no toolchain at build time); it is the .wat:
 *
 *   (module
 *     (import "env" "memory" (memory 0))
 *     (func (export "hamming") (param $q i32) (param $rows i32) (param $n i32) (param $words i32) (param $out i32)
 *       (local $i i32) (local $w i32) (local $unused i32) (local $d i64)
 *       (block (loop
 *         (br_if 1 (i32.ge_u (local.get $i) (local.get $n)))
 *         (local.set $d (i64.const 0))
 *         (local.set $w (i32.const 0))
 *         (block (loop
 *           (br_if 1 (i32.ge_u (local.get $w) (local.get $words)))
 *           (local.set $d (i64.add (local.get $d) (i64.popcnt (i64.xor
 *             (i64.load (local.get $rows))
 *             (i64.load (i32.add (local.get $q) (i32.shl (local.get $w) (i32.const 3))))))))
 *           (local.set $rows (i32.add (local.get $rows) (i32.const 8)))
 *           (local.set $w (i32.add (local.get $w) (i32.const 1)))
 *           (br 0)))
 *         (i32.store (local.get $out) (i32.wrap_i64 (local.get $d)))
 *         (local.set $out (i32.add (local.get $out) (i32.const 4)))
 *         (local.set $i (i32.add (local.get $i) (i32.const 1)))
 *         (br 0))))
 *
 * Each row takes `words` 64-bit words (its bits zero-padded; the query is padded the same way, so padding
 * adds nothing to a distance).
 */
import { functionBody, name, section } from './wasm-assembly.js';

const BODY = [
  0x02, 0x03, 0x7f, 0x01, 0x7e, // locals: 3 × i32 ($i $w $unused), 1 × i64 ($d)
  0x02, 0x40, 0x03, 0x40, // block, loop
  0x20, 0x05, 0x20, 0x02, 0x4f, 0x0d, 0x01, // br_if 1 (i >= n)
  0x42, 0x00, 0x21, 0x08, // d = 0
  0x41, 0x00, 0x21, 0x06, // w = 0
  0x02, 0x40, 0x03, 0x40, // block, loop
  0x20, 0x06, 0x20, 0x03, 0x4f, 0x0d, 0x01, // br_if 1 (w >= words)
  0x20, 0x08, // d
  0x20, 0x01, 0x29, 0x03, 0x00, // i64.load rows
  0x20, 0x00, 0x20, 0x06, 0x41, 0x03, 0x74, 0x6a, 0x29, 0x03, 0x00, // i64.load (q + w << 3)
  0x85, 0x7b, 0x7c, 0x21, 0x08, // d += popcnt(xor)
  0x20, 0x01, 0x41, 0x08, 0x6a, 0x21, 0x01, // rows += 8
  0x20, 0x06, 0x41, 0x01, 0x6a, 0x21, 0x06, // w += 1
  0x0c, 0x00, 0x0b, 0x0b, // br 0, end loop, end block
  0x20, 0x04, 0x20, 0x08, 0xa7, 0x36, 0x02, 0x00, // i32.store out (wrap d)
  0x20, 0x04, 0x41, 0x04, 0x6a, 0x21, 0x04, // out += 4
  0x20, 0x05, 0x41, 0x01, 0x6a, 0x21, 0x05, // i += 1
  0x0c, 0x00, 0x0b, 0x0b, // br 0, end loop, end block
  0x0b, // end function
];

const MODULE = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [0x01, 0x60, 0x05, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x00]),
  ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x00, 0x00]),
  ...section(3, [0x01, 0x00]),
  ...section(7, [0x01, ...name('hamming'), 0x00, 0x00]),
  ...section(10, [0x01, ...functionBody(BODY)]),
]);

let compiled: WebAssembly.Module | undefined;
const PAGE = 65536;

/** Rows of sign bits in WebAssembly memory, ready to be scanned. */
export class HammingRows {
  readonly count: number;
  /** Bytes of WebAssembly memory the rows take. */
  readonly bytes: number;
  private readonly words: number;
  private readonly memory: WebAssembly.Memory;
  private readonly scan: (q: number, rows: number, n: number, words: number, out: number) => void;
  private readonly rowsAt: number;
  private readonly outAt: number;

  /** `bits`: the rows' sign bits back to back, ceil(dim / 8) bytes each. */
  constructor(bits: Uint8Array, count: number, dim: number) {
    const bytesPerRow = Math.ceil(dim / 8);
    this.count = count;
    this.words = Math.ceil(dim / 64);
    const rowBytes = this.words * 8;
    this.rowsAt = rowBytes;
    this.outAt = this.rowsAt + count * rowBytes;
    this.bytes = this.outAt + count * 4;
    this.memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(this.bytes / PAGE)) });
    compiled ??= new WebAssembly.Module(MODULE);
    const instance = new WebAssembly.Instance(compiled, { env: { memory: this.memory } });
    this.scan = instance.exports.hamming as HammingRows['scan'];
    const heap = new Uint8Array(this.memory.buffer);
    for (let i = 0; i < count; i++) heap.set(bits.subarray(i * bytesPerRow, (i + 1) * bytesPerRow), this.rowsAt + i * rowBytes);
  }

  /** Every row's Hamming distance to `query` (sign bits, ceil(dim / 8) bytes); valid until the next call. */
  distances(query: Uint8Array): Int32Array {
    const heap = new Uint8Array(this.memory.buffer);
    heap.fill(0, 0, this.rowsAt);
    heap.set(query.subarray(0, this.rowsAt));
    this.scan(0, this.rowsAt, this.count, this.words, this.outAt);
    return new Int32Array(this.memory.buffer, this.outAt, this.count);
  }
}
