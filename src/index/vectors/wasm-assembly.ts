/**
 * Byte helpers for the WebAssembly modules written out instruction by instruction (hamming-wasm.ts,
 * int8-wasm.ts, int4-wasm.ts, cosine-wasm.ts): LEB128 numbers, the instructions they use most, sections and
 * names, and the SIMD sequences two of them share.
 */

export function unsignedLeb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

export function signedLeb(value: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    if ((value === 0 && (byte & 0x40) === 0) || (value === -1 && (byte & 0x40) !== 0)) return [...out, byte];
    out.push(byte | 0x80);
  }
}

export const get = (local: number) => [0x20, ...unsignedLeb(local)];
export const set = (local: number) => [0x21, ...unsignedLeb(local)];
export const i32 = (value: number) => [0x41, ...signedLeb(value)];
/** A SIMD instruction (prefix 0xfd) with its immediates. */
export const simd = (op: number, ...immediates: number[]) => [0xfd, ...unsignedLeb(op), ...immediates];
/** A memory access's alignment (log2) and offset. */
export const memarg = (align: number, offset = 0) => [align, ...unsignedLeb(offset)];

export const section = (id: number, content: number[]) => [id, ...unsignedLeb(content.length), ...content];
export const name = (text: string) => [text.length, ...Buffer.from(text, 'ascii')];
/** A function body of the code section: its size, then its bytes (locals declarations first). */
export const functionBody = (body: number[]) => [...unsignedLeb(body.length), ...body];

const V128_LOAD = 0x00, V128_CONST = 0x0c, I32X4_EXTRACT_LANE = 0x1b, I32X4_DOT_I16X8_S = 0xba;
const I16X8_RELAXED_DOT_I8X16_I7X16_S = 0x112, I32_ADD = 0x6a;

/** The i32 sum of the four lanes of the v128 in local `acc`. */
export const sumOfLanes = (acc: number) => [
  ...get(acc), ...simd(I32X4_EXTRACT_LANE, 0), ...get(acc), ...simd(I32X4_EXTRACT_LANE, 1), I32_ADD,
  ...get(acc), ...simd(I32X4_EXTRACT_LANE, 2), ...get(acc), ...simd(I32X4_EXTRACT_LANE, 3), I32_ADD, I32_ADD,
];

/**
 * Σ of 16 products of two v128 values, int8 (what `row` pushes) and u8 in 0..127 (what `question` pushes), into
 * four i32 lanes (relaxed SIMD: int8-wasm.ts's relaxed kernel, int4-wasm.ts's scoresAt).
 */
export const relaxedDot = (row: number[], question: number[]) => [
  ...row, ...question,
  ...simd(I16X8_RELAXED_DOT_I8X16_I7X16_S),
  ...simd(V128_CONST, ...Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? 1 : 0))), ...simd(I32X4_DOT_I16X8_S),
];

/** The 16 bytes at local `address`, `offset` bytes on. */
export const loadV128 = (address: number, offset = 0) => [...get(address), ...simd(V128_LOAD, ...memarg(0, offset))];

/** relaxedDot of the int8 row at local `row` and the u8 question at local `question`, `offset` bytes on. */
export const relaxedDotBlock = (row: number, question: number, offset: number) => relaxedDot(loadV128(row, offset), loadV128(question, offset));
