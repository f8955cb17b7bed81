import assert from 'node:assert/strict';
import { clusterBound, clusterVectors, type ClusterSettings } from '../../../src/enrichment/raptor/cluster.js';
import { kMeans } from '../../../src/enrichment/raptor/kmeans.js';
import { seededRandom } from '../../../src/seeded-random.js';

const DIMS = 64;
const settings = (over: Partial<ClusterSettings> = {}): ClusterSettings => ({ maxCluster: 64, ratio: 0.5, threshold: 0.3, seed: 0, ...over });

function unit(v: number[]): number[] {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** `perBlob` unit vectors around each of `blobs` random directions (noise `spread`), blob by blob. */
function blobs(count: number, perBlob: number, spread: number, seed = 7): { vectors: number[][]; blobOf: number[] } {
  const random = seededRandom(seed);
  const centres = Array.from({ length: count }, () => unit(Array.from({ length: DIMS }, () => random() - 0.5)));
  const vectors: number[][] = [];
  const blobOf: number[] = [];
  centres.forEach((c, b) => {
    for (let i = 0; i < perBlob; i++) {
      vectors.push(unit(c.map((x) => x + spread * (random() - 0.5))));
      blobOf.push(b);
    }
  });
  return { vectors, blobOf };
}

function noise(n: number, seed: number): number[][] {
  const random = seededRandom(seed);
  return Array.from({ length: n }, () => unit(Array.from({ length: DIMS }, () => random() - 0.5)));
}

function assertPartition(clusters: number[][], n: number): void {
  const seen = clusters.flat().sort((a, b) => a - b);
  assert.deepEqual(seen, Array.from({ length: n }, (_, i) => i), 'every item in exactly one cluster');
  for (const c of clusters) assert.ok(c.length > 0, 'no empty cluster');
}

describe('RAPTOR clustering', () => {
  it('gives the same clusters for the same vectors and seed, run after run', async () => {
    const vectors = noise(60, 3);
    const first = await clusterVectors(vectors, settings({ seed: 42 }));
    for (let run = 0; run < 3; run++) assert.deepEqual(await clusterVectors(vectors, settings({ seed: 42 })), first);
    assertPartition(first, vectors.length);
  });

  it('uses the seed: different seeds split structureless data differently', async () => {
    const vectors = noise(40, 11);
    const results = new Set<string>();
    for (let seed = 0; seed < 8; seed++) results.add(JSON.stringify(await clusterVectors(vectors, settings({ seed, threshold: 0.9 }))));
    assert.ok(results.size > 1, 'eight seeds gave one clustering');
  });

  it('finds well-separated groups (members of a group together, groups apart)', async () => {
    const { vectors, blobOf } = blobs(3, 10, 0.05);
    const clusters = await clusterVectors(vectors, settings({ threshold: 0 }));
    assert.equal(clusters.length, 3, JSON.stringify(clusters));
    for (const c of clusters) assert.equal(new Set(c.map((i) => blobOf[i])).size, 1, `mixed cluster ${JSON.stringify(c)}`);
    assertPartition(clusters, vectors.length);
  });

  it('never makes more clusters than max_cluster, clustering_ratio × items or items - 1', async () => {
    const vectors = noise(50, 5);
    for (const [maxCluster, ratio] of [[3, 1], [64, 0.1], [64, 1], [1, 1]] as const) {
      const bound = clusterBound(vectors.length, { maxCluster, ratio });
      assert.equal(bound, Math.max(1, Math.min(maxCluster, Math.floor(ratio * 50), 49)));
      // Threshold 1 asks for clusters tighter than any: the finest allowed is chosen.
      const clusters = await clusterVectors(vectors, settings({ maxCluster, ratio, threshold: 1 }));
      assert.equal(clusters.length, bound, `max_cluster ${maxCluster}, ratio ${ratio}`);
      assertPartition(clusters, vectors.length);
    }
  });

  it('a higher threshold asks for tighter clusters: never fewer of them', async () => {
    const { vectors } = blobs(4, 8, 0.9, 21);
    const loose = await clusterVectors(vectors, settings({ threshold: 0 }));
    const tight = await clusterVectors(vectors, settings({ threshold: 0.95 }));
    assert.ok(tight.length > loose.length, `${tight.length} tight vs ${loose.length} loose`);
  });

  it('one item makes no cluster; two make one (every level shrinks)', async () => {
    assert.deepEqual(await clusterVectors([[1, 0]], settings()), []);
    assert.deepEqual(await clusterVectors([[1, 0], [0, 1]], settings()), [[0, 1]]);
    assert.deepEqual(await clusterVectors([], settings()), []);
  });

  it('copes with identical vectors (one cluster, no error)', async () => {
    const same = Array.from({ length: 12 }, () => unit([1, 2, 3, 4]));
    const clusters = await clusterVectors(same, settings());
    assertPartition(clusters, 12);
    assert.equal(clusters.length, 1);
  });

  it('k-means returns exactly k non-empty clusters even with duplicate points', () => {
    const points = [[0, 0], [0, 0], [0, 0], [1, 1]];
    const fit = kMeans(points, 3, seededRandom(1));
    assert.equal(new Set(fit.labels).size, 3);
  });

  it('clusters a thousand 384-dimension chunks (the worst case: no structure, every k tried) in seconds', async function () {
    this.timeout(60_000);
    const random = seededRandom(9);
    const vectors = Array.from({ length: 1000 }, () => unit(Array.from({ length: 384 }, () => random() - 0.5)));
    const started = performance.now();
    const clusters = await clusterVectors(vectors, settings());
    const ms = performance.now() - started;
    assertPartition(clusters, 1000);
    // About 1.5 s on an idle machine; the bound leaves room for a busy test machine.
    assert.ok(ms < 30_000, `${ms.toFixed(0)} ms`);
  });
});
