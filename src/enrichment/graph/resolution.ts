import { tokenize } from '../../retrieval/tokenizer.js';
import { addFragments, addRelation, addSources, nameKey, type RelationAcc } from './merge.js';
import type { Graph, GraphEntity } from './types.js';

/**
 * Entity resolution: near-duplicate names of one type become one node. Candidates come from the names
 * alone, deterministically:
 * - by rule, merged without asking: the same letters and digits ("Open AI" / "OpenAI", "U.S.A." / "USA"),
 *   or the same word stems with spellings within 2 edits ("Bank Holidays" / "bank holiday");
 * - by spelling, confirmed by the model: compact names of at least 5 characters within 1 edit (2 from 10
 *   characters), e.g. "Acme Corp" / "Acme Crop".
 */

/** Spelling candidates asked about per job, the closest first; the rest stay apart. */
export const MAX_CANDIDATE_PAIRS = 2000;
const MIN_FUZZY_CHARS = 5;

export interface ResolutionCandidates {
  /** Pairs merged by rule. */
  rule: [string, string][];
  /** Pairs for the model to confirm. */
  fuzzy: [string, string][];
}

/** Letters and digits of the name only. */
export function compactName(name: string): string {
  return nameKey(name).replace(/[^\p{L}\p{N}]+/gu, '');
}

/** The name's word stems in order, stopwords kept (a name is short). */
export function stemName(name: string): string {
  return tokenize(name).map((t) => t.stem).join(' ');
}

/** Levenshtein distance when it is at most `max`, else max + 1 (stops early). */
export function boundedEditDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      row.push(v);
      if (v < best) best = v;
    }
    if (best > max) return max + 1;
    prev = row;
  }
  return prev[b.length]!;
}

function allowedEdits(length: number): number {
  return length >= 10 ? 2 : 1;
}

/** The candidate pairs of a graph (entity ids, each pair in graph order). */
export function resolutionCandidates(graph: Graph): ResolutionCandidates {
  const byType = new Map<string, GraphEntity[]>();
  for (const e of graph.entities) {
    const group = byType.get(e.type);
    if (group) group.push(e);
    else byType.set(e.type, [e]);
  }
  const rule: [string, string][] = [];
  const fuzzy: { pair: [string, string]; distance: number; order: number }[] = [];
  for (const group of byType.values()) {
    // Rule: the first entity with a key is the one the others with that key join.
    const firstBy = new Map<string, string>();
    const ruled = new Set<string>();
    const compacts = new Map(group.map((e) => [e.id, compactName(e.name)]));
    for (const e of group) {
      for (const key of [`c:${compacts.get(e.id)}`, `s:${stemName(e.name)}`]) {
        if (key.length <= 2) continue;
        const first = firstBy.get(key);
        if (first === undefined) firstBy.set(key, e.id);
        else if (first !== e.id && !ruled.has(e.id)) {
          // Stems alone are too coarse ("universal" / "university"): the spellings must be close too.
          if (key.startsWith('s:') && boundedEditDistance(compacts.get(first)!, compacts.get(e.id)!, 2) > 2) continue;
          rule.push([first, e.id]);
          ruled.add(e.id);
        }
      }
    }
    // Spelling: among the rest, compared within length buckets (a pair is at most 2 characters apart).
    const rest = group
      .filter((e) => !ruled.has(e.id))
      .map((e, i) => ({ id: e.id, compact: compacts.get(e.id)!, i }))
      .filter((e) => e.compact.length >= MIN_FUZZY_CHARS);
    const byLength = new Map<number, typeof rest>();
    for (const e of rest) {
      const bucket = byLength.get(e.compact.length);
      if (bucket) bucket.push(e);
      else byLength.set(e.compact.length, [e]);
    }
    const position = new Map(group.map((e, i) => [e.id, i]));
    for (const a of rest) {
      for (let len = a.compact.length; len <= a.compact.length + 2; len++) {
        for (const b of byLength.get(len) ?? []) {
          // Each pair once: same-length pairs from the earlier one only.
          if ((len === a.compact.length && b.i <= a.i) || a.compact === b.compact) continue;
          const max = allowedEdits(Math.min(a.compact.length, b.compact.length));
          const distance = boundedEditDistance(a.compact, b.compact, max);
          if (distance > max) continue;
          const [first, second] = position.get(a.id)! < position.get(b.id)! ? [a.id, b.id] : [b.id, a.id];
          fuzzy.push({ pair: [first, second], distance, order: fuzzy.length });
        }
      }
    }
  }
  fuzzy.sort((x, y) => x.distance - y.distance || x.order - y.order);
  return { rule, fuzzy: fuzzy.slice(0, MAX_CANDIDATE_PAIRS).map((f) => f.pair) };
}

/**
 * The graph with each group of merged entities as one node: the most mentioned keeps its id and name
 * (the earlier on a tie), descriptions and sources are combined, edges re-pointed and combined (weights
 * summed), edges inside a group dropped.
 */
export function applyMerges(graph: Graph, pairs: [string, string][]): Graph {
  if (!pairs.length) return graph;
  const order = new Map(graph.entities.map((e, i) => [e.id, i]));
  const byId = new Map(graph.entities.map((e) => [e.id, e]));
  const parent = new Map<string, string>();
  const find = (id: string): string => {
    let root = id;
    while (parent.get(root) !== undefined && parent.get(root) !== root) root = parent.get(root)!;
    parent.set(id, root);
    return root;
  };
  const better = (a: string, b: string) => {
    const ea = byId.get(a)!;
    const eb = byId.get(b)!;
    return ea.mentions !== eb.mentions ? (ea.mentions > eb.mentions ? a : b) : order.get(a)! < order.get(b)! ? a : b;
  };
  for (const [a, b] of pairs) {
    if (!byId.has(a) || !byId.has(b)) continue;
    const ra = find(a);
    const rb = find(b);
    if (ra === rb) continue;
    const keep = better(ra, rb);
    parent.set(ra, keep);
    parent.set(rb, keep);
  }

  const merged = new Map<string, { entity: GraphEntity; fragments: string[] }>();
  for (const e of graph.entities) {
    const root = find(e.id);
    let acc = merged.get(root);
    if (!acc) {
      const head = byId.get(root)!;
      acc = { entity: { ...head, description: '', sourceIds: [], mentions: 0 }, fragments: [] };
      merged.set(root, acc);
    }
  }
  // Descriptions in graph order, so the result does not depend on which pairs were confirmed first.
  for (const e of graph.entities) {
    const acc = merged.get(find(e.id))!;
    acc.entity.mentions += e.mentions;
    addFragments(acc.fragments, e.description);
    addSources(acc.entity.sourceIds, e.sourceIds);
  }

  const relations = new Map<string, RelationAcc>();
  for (const r of graph.relations) addRelation(relations, find(r.source), find(r.target), r, r.sourceIds);

  const entities = graph.entities
    .filter((e) => find(e.id) === e.id)
    .map((e) => {
      const { entity, fragments } = merged.get(e.id)!;
      return { ...entity, description: fragments.join('\n') };
    });
  return {
    entities,
    relations: [...relations.values()].map(({ relation, fragments }) => ({ ...relation, description: fragments.join('\n') })),
  };
}
