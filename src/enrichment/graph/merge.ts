import { createHash } from 'node:crypto';
import type { Graph, GraphEntity, GraphRelation, UnitExtraction } from './types.js';

/**
 * Merging the extraction answers of a dataset into one graph: the same normalised name and type is one
 * node (descriptions merged, chunks and mentions counted), the same pair of nodes is one edge (weights
 * summed). Pure and deterministic: the units are taken in their dataset order.
 */

/** Distinct description fragments kept per node or edge (the first ones, in dataset order). */
export const MAX_FRAGMENTS = 8;
/** Source chunk ids kept per node or edge. */
export const MAX_SOURCES = 100;
/** The type of an entity that a relation names but no answer described. */
export const UNKNOWN_TYPE = 'unknown';

/** The key two spellings of one name share: Unicode-normalised, lower case, single spaces. */
export function nameKey(name: string): string {
  return name.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

export function entityId(key: string, type: string): string {
  return createHash('sha256').update(`${key}\u0000${type}`).digest('hex').slice(0, 32);
}

/** `fragments` with `text`'s distinct lines added, at most MAX_FRAGMENTS. */
export function addFragments(fragments: string[], text: string): void {
  for (const line of text.split('\n')) {
    const fragment = line.trim();
    if (!fragment || fragments.length >= MAX_FRAGMENTS) continue;
    const key = fragment.toLowerCase();
    if (!fragments.some((f) => f.toLowerCase() === key)) fragments.push(fragment);
  }
}

export function addSources(sources: string[], ids: Iterable<string>): void {
  for (const id of ids) {
    if (sources.length >= MAX_SOURCES) return;
    if (!sources.includes(id)) sources.push(id);
  }
}

interface EntityAcc {
  entity: GraphEntity;
  fragments: string[];
}

export interface RelationAcc {
  relation: GraphRelation;
  fragments: string[];
}

/** Adds an edge between two nodes to `relations` (one per unordered pair): weights summed, descriptions and sources merged. */
export function addRelation(
  relations: Map<string, RelationAcc>,
  source: string,
  target: string,
  edge: { weight: number; description: string },
  sourceIds: Iterable<string>,
): void {
  if (source === target) return;
  const key = pairKey(source, target);
  let acc = relations.get(key);
  if (!acc) {
    acc = { relation: { source, target, description: '', weight: 0, sourceIds: [] }, fragments: [] };
    relations.set(key, acc);
  }
  acc.relation.weight += edge.weight;
  addFragments(acc.fragments, edge.description);
  addSources(acc.relation.sourceIds, sourceIds);
}

export function pairKey(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}

/** One graph out of the units' answers. */
export function mergeExtractions(units: UnitExtraction[]): Graph {
  const ordered = [...units].sort((a, b) => a.seq - b.seq);
  const entities = new Map<string, EntityAcc>();
  /** name key -> type -> mentions, to place a relation's endpoint whose type the relation does not say. */
  const typesByName = new Map<string, Map<string, number>>();

  const addEntity = (name: string, type: string, description: string, chunkIds: string[]): string => {
    const key = nameKey(name);
    const id = entityId(key, type);
    let acc = entities.get(id);
    if (!acc) {
      acc = { entity: { id, name, type, description: '', sourceIds: [], mentions: 0, pagerank: 0, community: -1 }, fragments: [] };
      entities.set(id, acc);
    }
    acc.entity.mentions++;
    addFragments(acc.fragments, description);
    addSources(acc.entity.sourceIds, chunkIds);
    const types = typesByName.get(key) ?? new Map<string, number>();
    types.set(type, (types.get(type) ?? 0) + 1);
    typesByName.set(key, types);
    return id;
  };

  for (const unit of ordered) {
    for (const e of unit.entities) addEntity(e.name, e.type, e.description, unit.chunkIds);
  }

  /** The node a relation endpoint names: the type the same answer gave it, else the name's most mentioned type. */
  const endpoint = (name: string, unitTypes: Map<string, string>, chunkIds: string[]): string => {
    const key = nameKey(name);
    const own = unitTypes.get(key);
    if (own) return entityId(key, own);
    const types = typesByName.get(key);
    if (types) {
      let best = '';
      let most = -1;
      for (const [t, n] of types) if (n > most) [best, most] = [t, n];
      return entityId(key, best);
    }
    return addEntity(name, UNKNOWN_TYPE, '', chunkIds);
  };

  const relations = new Map<string, RelationAcc>();
  for (const unit of ordered) {
    const unitTypes = new Map<string, string>();
    for (const e of unit.entities) if (!unitTypes.has(nameKey(e.name))) unitTypes.set(nameKey(e.name), e.type);
    for (const r of unit.relations) {
      addRelation(relations, endpoint(r.source, unitTypes, unit.chunkIds), endpoint(r.target, unitTypes, unit.chunkIds), r, unit.chunkIds);
    }
  }

  return {
    entities: [...entities.values()].map(({ entity, fragments }) => ({ ...entity, description: fragments.join('\n') })),
    relations: [...relations.values()].map(({ relation, fragments }) => ({ ...relation, description: fragments.join('\n') })),
  };
}
