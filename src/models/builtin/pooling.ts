import { normalizeInPlace } from '../vector.js';

/**
 * Pools a [batch, seq, dims] hidden-state tensor into one L2-normalised vector per row: 'cls' takes the
 * first token, 'mean' averages the tokens whose attention mask is 1.
 */
export function poolAndNormalize(
  hidden: Float32Array,
  mask: ArrayLike<number | bigint>,
  batch: number,
  seq: number,
  dims: number,
  mode: 'mean' | 'cls',
): Float32Array {
  const out = new Float32Array(batch * dims);
  for (let b = 0; b < batch; b++) {
    const row = out.subarray(b * dims, (b + 1) * dims);
    if (mode === 'cls') {
      row.set(hidden.subarray(b * seq * dims, b * seq * dims + dims));
    } else {
      let count = 0;
      for (let t = 0; t < seq; t++) {
        if (Number(mask[b * seq + t]) === 0) continue;
        count++;
        const base = (b * seq + t) * dims;
        for (let d = 0; d < dims; d++) row[d]! += hidden[base + d]!;
      }
      if (count > 0) for (let d = 0; d < dims; d++) row[d]! /= count;
    }
    normalizeInPlace(row);
  }
  return out;
}
