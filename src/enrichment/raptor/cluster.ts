import { kMeans, type KMeansFit } from './kmeans.js';
import { principalComponents } from './pca.js';
import { seededRandom } from '../../seeded-random.js';
import { nextTurn } from '../../batching.js';

/** How one level's items are grouped (parser_config.raptor: max_cluster, clustering_ratio, clustering_threshold, random_seed). */
export interface ClusterSettings {
  /** At most this many clusters per level. */
  maxCluster: number;
  /** At most this share of the level's items as clusters (RAGFlow's clustering_ratio). */
  ratio: number;
  /**
   * Minimum mean cosine similarity of a cluster's members to the cluster's centre: a cluster count whose
   * clusters are looser than this is not chosen (a higher threshold gives more, tighter clusters).
   */
  threshold: number;
  seed: number;
}

/** Dimensions the embeddings are reduced to before clustering (RAGFlow's UMAP uses at most 12). */
const REDUCED_DIMENSIONS = 12;
/** Cluster counts tried past the best one found before the search stops. */
const PATIENCE = 5;
/** Every cluster count up to this is tried; above it, counts grow by GROWTH (a large level needs no exact k). */
const EVERY_K_UP_TO = 16;
const GROWTH = 1.25;

/** The most clusters a level of `n` items may have: fewer than n (so every level shrinks), at least 1. */
export function clusterBound(n: number, s: Pick<ClusterSettings, 'maxCluster' | 'ratio'>): number {
  return Math.max(1, Math.min(s.maxCluster, Math.floor(s.ratio * n), n - 1));
}

/**
 * Clusters `vectors` (one level of one RAPTOR tree) and returns the clusters as ascending item indexes,
 * ordered by their first item. Deterministic: the same vectors in the same order with the same settings
 * give the same clusters.
 *
 * RAGFlow reduces with UMAP and picks the number of Gaussian-mixture components with the least BIC. Here
 * the vectors are reduced by PCA, k-means (seeded k-means++) is fitted for k = 1, 2, … up to the bound (every
 * k to 16, then growing by a quarter), and each fit is scored by the BIC of the Gaussian mixture it implies
 * (cluster shares as weights, one diagonal covariance shared by the clusters). The fit with the least BIC
 * among those whose clusters are all as tight as the threshold asks wins; the search stops a few counts
 * past the best, and when no fit is tight enough the finest (the bound) is used. k-means is plain, fast and
 * exactly repeatable in JavaScript, where a full mixture fit would add little to which chunks get
 * summarised together. Yields to the event loop after each fit (a worker keeps heartbeating) and calls
 * `onFit` with the k just fitted.
 */
export async function clusterVectors(vectors: ArrayLike<number>[], settings: ClusterSettings, onFit?: (k: number) => void): Promise<number[][]> {
  const n = vectors.length;
  if (n <= 1) return [];
  const bound = clusterBound(n, settings);
  if (bound === 1) return [vectors.map((_, i) => i)];
  const random = seededRandom(settings.seed);
  const reduced = principalComponents(vectors, Math.min(REDUCED_DIMENSIONS, n - 1), random);
  const unit = unitRows(vectors);
  let best: { bic: number; fit: KMeansFit } | undefined;
  let last: KMeansFit | undefined;
  let sinceBest = 0;
  for (const k of clusterCounts(bound)) {
    last = kMeans(reduced, k, random);
    onFit?.(k);
    await nextTurn();
    const bic = mixtureBic(reduced, last);
    if (tightEnough(unit, last, settings.threshold) && (!best || bic < best.bic)) {
      best = { bic, fit: last };
      sinceBest = 0;
    } else if (best && ++sinceBest >= PATIENCE) {
      break;
    }
  }
  return groups((best?.fit ?? last!).labels);
}

/** The cluster counts tried, ascending, ending with the bound. */
function clusterCounts(bound: number): number[] {
  const counts: number[] = [];
  for (let k = 1; k <= bound; k = k < EVERY_K_UP_TO ? k + 1 : Math.max(k + 1, Math.floor(k * GROWTH))) counts.push(k);
  if (counts.at(-1) !== bound) counts.push(bound);
  return counts;
}

/**
 * Bayesian information criterion of the Gaussian mixture a k-means fit implies: weights = cluster shares,
 * means = centroids, one diagonal covariance shared by all clusters (its maximum-likelihood estimate).
 * Lower is better.
 */
export function mixtureBic(points: ArrayLike<number>[], fit: KMeansFit): number {
  const n = points.length;
  const k = fit.centroids.length;
  const dims = points[0]?.length ?? 0;
  const sizes = new Array<number>(k).fill(0);
  const spread = new Float64Array(dims);
  for (let i = 0; i < n; i++) {
    const c = fit.centroids[fit.labels[i]!]!;
    const p = points[i]!;
    sizes[fit.labels[i]!]!++;
    for (let j = 0; j < dims; j++) spread[j]! += (p[j]! - c[j]!) ** 2;
  }
  let logLikelihood = 0;
  for (const size of sizes) if (size > 0) logLikelihood += size * Math.log(size / n);
  for (let j = 0; j < dims; j++) {
    // A floor keeps a dimension fitted exactly (duplicates, a cluster per point) from scoring -infinity.
    const variance = Math.max(spread[j]! / n, 1e-12);
    logLikelihood -= (n / 2) * Math.log(2 * Math.PI * variance) + spread[j]! / (2 * variance);
  }
  const parameters = k - 1 + k * dims + dims;
  return -2 * logLikelihood + parameters * Math.log(n);
}

/**
 * Whether every cluster's members are, on average, at least `threshold` similar (cosine, in the
 * original space) to the cluster's centre. `unit` holds the vectors scaled to length 1.
 */
function tightEnough(unit: Float64Array[], fit: KMeansFit, threshold: number): boolean {
  const dims = unit[0]!.length;
  const k = fit.centroids.length;
  const sums = Array.from({ length: k }, () => new Float64Array(dims));
  const sizes = new Int32Array(k);
  for (let i = 0; i < unit.length; i++) {
    const s = sums[fit.labels[i]!]!;
    const v = unit[i]!;
    for (let j = 0; j < dims; j++) s[j]! += v[j]!;
    sizes[fit.labels[i]!]!++;
  }
  // Mean cosine of unit vectors to their normalised sum = |sum| / count.
  for (let c = 0; c < k; c++) {
    let squared = 0;
    for (const x of sums[c]!) squared += x * x;
    if (Math.sqrt(squared) / sizes[c]! < threshold) return false;
  }
  return true;
}

function unitRows(vectors: ArrayLike<number>[]): Float64Array[] {
  return vectors.map((v) => {
    const out = Float64Array.from(v);
    let squared = 0;
    for (const x of out) squared += x * x;
    const norm = Math.sqrt(squared);
    if (norm > 0) for (let j = 0; j < out.length; j++) out[j]! /= norm;
    return out;
  });
}

/** Item indexes per label, each ascending, ordered by their first item. */
function groups(labels: Int32Array): number[][] {
  const byLabel = new Map<number, number[]>();
  labels.forEach((label, i) => {
    const members = byLabel.get(label) ?? [];
    members.push(i);
    byLabel.set(label, members);
  });
  return [...byLabel.values()].sort((a, b) => a[0]! - b[0]!);
}
