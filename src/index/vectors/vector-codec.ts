/** Vector <-> BLOB encodings used by the SQLite index (sqlite-vec reads float32 and bit BLOBs). */

export function toFloat32Blob(vector: number[]): Buffer {
  return Buffer.from(new Float32Array(vector).buffer);
}

export function fromFloat32Blob(blob: Uint8Array): number[] {
  // Copy first: a BLOB's byte offset need not be 4-aligned, which Float32Array requires.
  const bytes = new Uint8Array(blob);
  return Array.from(new Float32Array(bytes.buffer, 0, bytes.byteLength >> 2));
}

/** Binary quantisation: bit i set when component i is positive (sqlite-vec `bit[]` layout, LSB first). */
export function toSignBits(vector: number[]): Buffer {
  const bits = Buffer.alloc(Math.ceil(vector.length / 8));
  vector.forEach((x, i) => {
    if (x > 0) bits[i >> 3]! |= 1 << (i & 7);
  });
  return bits;
}
