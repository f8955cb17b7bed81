/** A partition of points into k clusters. */
export interface KMeansFit {
  /** Cluster of each point, 0..k-1; every cluster has at least one point. */
  labels: Int32Array;
  centroids: Float64Array[];
}

/**
 * k-means (Lloyd) from a k-means++ start drawn with `random`: the same points, k and generator state give
 * the same partition. Ties go to the lower cluster; a cluster left empty takes the point farthest from
 * its own centroid, so exactly k clusters come back (k is at most the number of points).
 */
export function kMeans(points: ArrayLike<number>[], k: number, random: () => number, maxIterations = 30): KMeansFit {
  const n = points.length;
  if (k < 1 || k > n) throw new RangeError(`k-means needs 1 <= k <= ${n} (got ${k})`);
  const centroids = plusPlusStart(points, k, random);
  const labels = new Int32Array(n).fill(-1);
  for (let it = 0; it < maxIterations; it++) {
    let changed = false;
    for (let i = 0; i < n; i++) {
      const nearest = nearestCentroid(points[i]!, centroids);
      if (nearest !== labels[i]) {
        labels[i] = nearest;
        changed = true;
      }
    }
    fillEmptyClusters(points, labels, centroids);
    recomputeCentroids(points, labels, centroids);
    if (!changed) break;
  }
  return { labels, centroids };
}

function plusPlusStart(points: ArrayLike<number>[], k: number, random: () => number): Float64Array[] {
  const n = points.length;
  const chosen = [Math.floor(random() * n)];
  const nearest = points.map((p) => squaredDistance(p, points[chosen[0]!]!));
  while (chosen.length < k) {
    const total = nearest.reduce((s, d) => s + d, 0);
    let pick = -1;
    if (total > 0) {
      let target = random() * total;
      for (let i = 0; i < n; i++) {
        if (nearest[i]! <= 0) continue;
        pick = i;
        target -= nearest[i]!;
        if (target < 0) break;
      }
    }
    // Every point sits on a centre already (duplicates): take the first one not chosen yet.
    if (pick < 0) pick = points.findIndex((_, i) => !chosen.includes(i));
    chosen.push(pick);
    for (let i = 0; i < n; i++) nearest[i] = Math.min(nearest[i]!, squaredDistance(points[i]!, points[pick]!));
  }
  return chosen.map((i) => Float64Array.from(points[i]!));
}

function nearestCentroid(p: ArrayLike<number>, centroids: Float64Array[]): number {
  let best = 0;
  let bestDistance = Infinity;
  for (let c = 0; c < centroids.length; c++) {
    const d = squaredDistance(p, centroids[c]!);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return best;
}

function fillEmptyClusters(points: ArrayLike<number>[], labels: Int32Array, centroids: Float64Array[]): void {
  const sizes = new Int32Array(centroids.length);
  for (const l of labels) sizes[l]!++;
  for (let c = 0; c < centroids.length; c++) {
    if (sizes[c]! > 0) continue;
    let far = -1;
    let farDistance = -1;
    for (let i = 0; i < points.length; i++) {
      if (sizes[labels[i]!]! < 2) continue;
      const d = squaredDistance(points[i]!, centroids[labels[i]!]!);
      if (d > farDistance) {
        farDistance = d;
        far = i;
      }
    }
    sizes[labels[far]!]!--;
    labels[far] = c;
    sizes[c] = 1;
  }
}

function recomputeCentroids(points: ArrayLike<number>[], labels: Int32Array, centroids: Float64Array[]): void {
  const sizes = new Int32Array(centroids.length);
  for (const c of centroids) c.fill(0);
  for (let i = 0; i < points.length; i++) {
    const c = centroids[labels[i]!]!;
    const p = points[i]!;
    for (let j = 0; j < c.length; j++) c[j]! += p[j]!;
    sizes[labels[i]!]!++;
  }
  for (let c = 0; c < centroids.length; c++) for (let j = 0; j < centroids[c]!.length; j++) centroids[c]![j]! /= sizes[c]!;
}

export function squaredDistance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    sum += d * d;
  }
  return sum;
}
