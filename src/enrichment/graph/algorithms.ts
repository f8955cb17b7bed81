import type { Graph } from './types.js';
import { seededRandom } from '../../seeded-random.js';

/**
 * Graph measures over the merged graph, undirected and weighted: PageRank (what the graph API ranks
 * nodes by and retrieval weighs entities with) and Louvain communities (modularity, seeded node order,
 * so the same graph always gives the same communities).
 */

/** Every node's neighbours with the summed edge weight, in node order. */
function adjacency(graph: Graph): { ids: string[]; neighbours: Map<number, number>[] } {
  const ids = graph.entities.map((e) => e.id);
  const index = new Map(ids.map((id, i) => [id, i]));
  const neighbours = ids.map(() => new Map<number, number>());
  for (const r of graph.relations) {
    const a = index.get(r.source);
    const b = index.get(r.target);
    if (a === undefined || b === undefined || a === b) continue;
    const w = r.weight > 0 ? r.weight : 1;
    neighbours[a]!.set(b, (neighbours[a]!.get(b) ?? 0) + w);
    neighbours[b]!.set(a, (neighbours[b]!.get(a) ?? 0) + w);
  }
  return { ids, neighbours };
}

/** Weighted PageRank (damping 0.85); a node without edges spreads its rank evenly. Sums to 1. */
export function pagerank(graph: Graph, damping = 0.85, tolerance = 1e-10, maxIterations = 100): Map<string, number> {
  const { ids, neighbours } = adjacency(graph);
  const n = ids.length;
  if (n === 0) return new Map();
  const strength = neighbours.map((m) => [...m.values()].reduce((s, w) => s + w, 0));
  let rank = new Array<number>(n).fill(1 / n);
  for (let iter = 0; iter < maxIterations; iter++) {
    let dangling = 0;
    for (let i = 0; i < n; i++) if (strength[i] === 0) dangling += rank[i]!;
    const base = (1 - damping) / n + (damping * dangling) / n;
    const next = new Array<number>(n).fill(base);
    for (let i = 0; i < n; i++) {
      if (strength[i] === 0) continue;
      const share = (damping * rank[i]!) / strength[i]!;
      for (const [j, w] of neighbours[i]!) next[j]! += share * w;
    }
    let change = 0;
    for (let i = 0; i < n; i++) change += Math.abs(next[i]! - rank[i]!);
    rank = next;
    if (change < tolerance) break;
  }
  return new Map(ids.map((id, i) => [id, rank[i]!]));
}

function shuffled(n: number, random: () => number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** One level of Louvain's local moving: each node's community, and whether any node moved. */
function localMoving(neighbours: Map<number, number>[], selfLoops: number[], random: () => number): { community: number[]; moved: boolean } {
  const n = neighbours.length;
  const degree = neighbours.map((m, i) => [...m.values()].reduce((s, w) => s + w, 0) + 2 * selfLoops[i]!);
  const m2 = degree.reduce((s, d) => s + d, 0);
  const community = Array.from({ length: n }, (_, i) => i);
  const total = [...degree];
  if (m2 === 0) return { community, moved: false };
  let moved = false;
  const order = shuffled(n, random);
  for (let pass = 0; pass < 100; pass++) {
    let changes = 0;
    for (const i of order) {
      const own = community[i]!;
      const links = new Map<number, number>();
      for (const [j, w] of neighbours[i]!) links.set(community[j]!, (links.get(community[j]!) ?? 0) + w);
      total[own]! -= degree[i]!;
      // Gain of joining community c: links to c − total(c) · degree(i) / 2m; staying alone gains 0.
      let best = own;
      let bestGain = (links.get(own) ?? 0) - (total[own]! * degree[i]!) / m2;
      for (const [c, w] of [...links.entries()].sort((x, y) => x[0] - y[0])) {
        const gain = w - (total[c]! * degree[i]!) / m2;
        if (gain > bestGain + 1e-12) [best, bestGain] = [c, gain];
      }
      total[best]! += degree[i]!;
      if (best !== own) {
        community[i] = best;
        changes++;
        moved = true;
      }
    }
    if (changes === 0) break;
  }
  return { community, moved };
}

/**
 * Louvain communities: local moving, then each community becomes one node, until nothing moves. Returns
 * each node's community numbered 0.. by size (largest first, then by first node), or -1 for a node alone.
 */
export function communities(graph: Graph, seed: number): Map<string, number> {
  const { ids, neighbours: base } = adjacency(graph);
  const random = seededRandom(seed);
  let neighbours = base;
  let selfLoops = base.map(() => 0);
  /** original node -> node of the current level */
  let membership = ids.map((_, i) => i);
  for (let level = 0; level < 32; level++) {
    const { community, moved } = localMoving(neighbours, selfLoops, random);
    if (!moved) break;
    const renumber = new Map<number, number>();
    for (const c of community) if (!renumber.has(c)) renumber.set(c, renumber.size);
    const next = Array.from({ length: renumber.size }, () => new Map<number, number>());
    const nextSelf = new Array<number>(renumber.size).fill(0);
    for (let i = 0; i < neighbours.length; i++) {
      const ci = renumber.get(community[i]!)!;
      nextSelf[ci]! += selfLoops[i]!;
      for (const [j, w] of neighbours[i]!) {
        const cj = renumber.get(community[j]!)!;
        // Each undirected edge is seen from both ends: inside a community it adds w/2 twice.
        if (ci === cj) nextSelf[ci]! += w / 2;
        else next[ci]!.set(cj, (next[ci]!.get(cj) ?? 0) + w);
      }
    }
    membership = membership.map((m) => renumber.get(community[m]!)!);
    neighbours = next;
    selfLoops = nextSelf;
  }
  const members = new Map<number, number[]>();
  membership.forEach((c, i) => {
    const group = members.get(c);
    if (group) group.push(i);
    else members.set(c, [i]);
  });
  const groups = [...members.values()].filter((g) => g.length > 1).sort((a, b) => b.length - a.length || a[0]! - b[0]!);
  const result = new Map<string, number>(ids.map((id) => [id, -1]));
  groups.forEach((g, c) => g.forEach((i) => result.set(ids[i]!, c)));
  return result;
}
