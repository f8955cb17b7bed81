/** Vector <-> BLOB encodings used by the SQLite index (sqlite-vec reads float32 and bit BLOBs). */

export function toFloat32Blob(vector: number[]): Buffer {
  return Buffer.from(new Float32Array(vector).buffer);
}

/** The BLOB's floats: a view when its byte offset is 4-aligned (Float32Array requires it), else a copy. */
export function float32sOf(blob: Uint8Array): Float32Array {
  const n = blob.byteLength >> 2;
  return (blob.byteOffset & 3) === 0 ? new Float32Array(blob.buffer, blob.byteOffset, n) : new Float32Array(new Uint8Array(blob).buffer, 0, n);
}

export function fromFloat32Blob(blob: Uint8Array): number[] {
  const floats = float32sOf(blob);
  // A plain loop, not Array.from: Array.from walks the typed array's iterator, ~8x slower (40-50 µs against 5-8 µs
  // per 384-dim vector), and a search decodes hundreds (bench/results/memory.md).
  const vector = new Array<number>(floats.length);
  for (let i = 0; i < floats.length; i++) vector[i] = floats[i]!;
  return vector;
}

/** Binary quantisation: bit i set when component i is positive (sqlite-vec `bit[]` layout, LSB first). */
export function toSignBits(vector: number[]): Buffer {
  const bits = Buffer.alloc(Math.ceil(vector.length / 8));
  vector.forEach((x, i) => {
    if (x > 0) bits[i >> 3]! |= 1 << (i & 7);
  });
  return bits;
}
