/**
 * The rows projected onto their first `components` principal axes (rows centred first), found by
 * subspace iteration from seeded start vectors, so the projection is the same on every run.
 *
 * RAGFlow reduces the embeddings with UMAP (to at most 12 dimensions) before fitting its Gaussian
 * mixtures; a linear projection keeps the large-scale structure clustering needs, costs O(n·d·m) per
 * iteration instead of a neighbour graph, and is exactly repeatable.
 */
export function principalComponents(rows: ArrayLike<number>[], components: number, random: () => number, iterations = 12): Float64Array[] {
  const n = rows.length;
  const d = rows[0]?.length ?? 0;
  const m = Math.min(components, d, n);
  if (m <= 0) return rows.map(() => new Float64Array(0));
  // Rows, centred, one after another (n × d); the basis likewise (m × d).
  const x = new Float64Array(n * d);
  rows.forEach((r, i) => {
    for (let j = 0; j < d; j++) x[i * d + j] = r[j]!;
  });
  const mean = new Float64Array(d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) mean[j]! += x[i * d + j]!;
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) x[i * d + j]! -= mean[j]! / n;

  let basis = Float64Array.from({ length: m * d }, () => random() - 0.5);
  orthonormalise(basis, m, d);
  const y = new Float64Array(m);
  for (let it = 0; it < iterations; it++) {
    // basis <- orth(Xᵀ X basis): converges to the top-m eigenvectors of the covariance.
    const next = new Float64Array(m * d);
    for (let i = 0; i < n; i++) {
      const row = i * d;
      for (let c = 0; c < m; c++) {
        let s = 0;
        for (let j = 0; j < d; j++) s += x[row + j]! * basis[c * d + j]!;
        y[c] = s;
      }
      for (let c = 0; c < m; c++) {
        const yc = y[c]!;
        if (yc !== 0) for (let j = 0; j < d; j++) next[c * d + j]! += yc * x[row + j]!;
      }
    }
    basis = next;
    orthonormalise(basis, m, d);
  }
  return Array.from({ length: n }, (_, i) => {
    const out = new Float64Array(m);
    for (let c = 0; c < m; c++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += x[i * d + j]! * basis[c * d + j]!;
      out[c] = s;
    }
    return out;
  });
}

/** Modified Gram-Schmidt on the m rows of v (m × d) in place; a row with nothing left becomes zero. */
function orthonormalise(v: Float64Array, m: number, d: number): void {
  for (let i = 0; i < m; i++) {
    const before = Math.sqrt(rowDot(v, i, v, i, d));
    for (let k = 0; k < i; k++) {
      const p = rowDot(v, i, v, k, d);
      for (let j = 0; j < d; j++) v[i * d + j]! -= p * v[k * d + j]!;
    }
    const norm = Math.sqrt(rowDot(v, i, v, i, d));
    if (norm <= 1e-10 * Math.max(before, 1e-300)) v.fill(0, i * d, (i + 1) * d);
    else for (let j = 0; j < d; j++) v[i * d + j]! /= norm;
  }
}

function rowDot(a: Float64Array, i: number, b: Float64Array, k: number, d: number): number {
  let s = 0;
  for (let j = 0; j < d; j++) s += a[i * d + j]! * b[k * d + j]!;
  return s;
}
