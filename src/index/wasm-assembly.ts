/**
 * Byte helpers for the WebAssembly modules written out instruction by instruction (hamming-wasm.ts,
 * int8-wasm.ts, cosine-wasm.ts): LEB128 numbers, the instructions they use most, sections and names.
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
