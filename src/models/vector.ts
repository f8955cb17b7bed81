/** Scales a vector in place to unit L2 norm (a zero vector is left unchanged) and returns it. */
export function normalizeInPlace<T extends number[] | Float32Array>(vector: T): T {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  return vector;
}

/** A unit-norm copy of `vector`. */
export function l2normalize(vector: ArrayLike<number>): number[] {
  return normalizeInPlace(Array.from(vector));
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`vector length mismatch: ${a.length} vs ${b.length}`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** Cosine similarity; for unit vectors this equals the dot product. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const denom = Math.sqrt(dot(a, a) * dot(b, b));
  return denom > 0 ? dot(a, b) / denom : 0;
}
