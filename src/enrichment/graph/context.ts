import { createHash } from 'node:crypto';
import type { MetaStore } from '../../store/index.js';
import type { ReferenceChunk } from '../../retrieval/types.js';
import { isStopword, tokenize } from '../../retrieval/tokenizer.js';
import { countTokens } from '../../text/tokens.js';
import type { GraphCommunity, GraphEntity, GraphRelation } from './types.js';

/**
 * Retrieval with `use_kg`: one extra chunk at the top built from the knowledge graph, as RAGFlow's
 * KGSearch does — the entities that match the question, the relations around them and the report of
 * their community, as CSV tables under "---- Entities ----", "---- Relations ----" and
 * "---- Community Report ----". Unlike RAGFlow, matching is lexical (the question's word stems against
 * entity names and descriptions) and asks no model, so it adds no model call to retrieval.
 */

/** RAGFlow's document name of the graph chunk. */
export const GRAPH_CHUNK_NAME = 'Related content in Knowledge Graph';
/** RAGFlow's defaults: 6 entities, 6 relations, 1 community report, within 8,196 tokens, entities from similarity 0.3. */
export const ENTITY_TOP_N = 6;
export const RELATION_TOP_N = 6;
export const COMMUNITY_TOP_N = 1;
export const MAX_CONTEXT_TOKENS = 8196;
export const MIN_SIMILARITY = 0.3;
/** Matched entities whose relations are considered. */
const RELATION_SEEDS = 32;

/** An entity with the word stems it is matched by. */
export interface Indexed {
  entity: GraphEntity;
  /** Position in its graph: ties are broken by it. */
  ord: number;
  buildId: string;
  datasetId: string;
  name: Set<string>;
  description: Set<string>;
}

export interface EntityMatch {
  entity: GraphEntity;
  /** 0..1: 0.7 × share of the name's words in the question + 0.3 × share of the question's words in the description. */
  similarity: number;
  score: number;
  buildId: string;
  datasetId: string;
}

function stems(text: string): Set<string> {
  const all = tokenize(text);
  const content = all.filter((t) => !isStopword(t.word));
  // A name made only of stopwords ("The Who") is matched by its words all the same.
  return new Set((content.length ? content : all).map((t) => t.stem));
}

function share(of: Set<string>, within: Set<string>): number {
  if (!of.size) return 0;
  let hits = 0;
  for (const s of of) if (within.has(s)) hits++;
  return hits / of.size;
}

function highestRank(entities: Indexed[]): number {
  let top = 0;
  for (const e of entities) if (e.entity.pagerank > top) top = e.entity.pagerank;
  return top || 1;
}

/**
 * The entities that match the question, best first: similarity × (½ + ½ · pagerank / `topRank`, the
 * highest pagerank), ties in graph order.
 */
export function matchEntities(question: string, entities: Indexed[], topRank = highestRank(entities)): EntityMatch[] {
  const q = stems(question);
  if (!q.size) return [];
  const matches: (EntityMatch & { ord: number })[] = [];
  for (const e of entities) {
    const similarity = 0.7 * share(e.name, q) + 0.3 * share(q, e.description);
    if (similarity < MIN_SIMILARITY) continue;
    matches.push({ entity: e.entity, similarity, score: similarity * (0.5 + (0.5 * e.entity.pagerank) / topRank), buildId: e.buildId, datasetId: e.datasetId, ord: e.ord });
  }
  return matches.sort((a, b) => b.score - a.score || a.ord - b.ord).map(({ ord: _ord, ...m }) => m);
}

export interface RelationMatch {
  relation: GraphRelation;
  score: number;
}

/** Relations with a matched end, best first: (similarity of both ends) × (½ + ½ · weight / heaviest weight). */
export function rankRelations(relations: GraphRelation[], similarity: Map<string, number>): RelationMatch[] {
  const heaviest = Math.max(0, ...relations.map((r) => r.weight)) || 1;
  return relations
    .map((relation) => ({ relation, score: ((similarity.get(relation.source) ?? 0) + (similarity.get(relation.target) ?? 0)) * (0.5 + (0.5 * relation.weight) / heaviest) }))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || a.relation.source.localeCompare(b.relation.source) || a.relation.target.localeCompare(b.relation.target));
}

function csvField(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A table as pandas' to_csv writes it (RAGFlow's format): a leading index column. */
function csv(header: string[], rows: (string | number)[][]): string {
  return [['', ...header], ...rows.map((r, i) => [i, ...r])].map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ');

/** The graph chunk's text; '' when nothing matched. Rows are added while they fit in `maxTokens`. */
export function formatGraphContext(
  entities: EntityMatch[],
  relations: (RelationMatch & { sourceName: string; targetName: string })[],
  communities: GraphCommunity[],
  maxTokens = MAX_CONTEXT_TOKENS,
): string {
  let budget = maxTokens;
  const fits = (row: (string | number)[]) => {
    budget -= countTokens(row.join(','));
    return budget > 0;
  };
  const entityRows: (string | number)[][] = [];
  for (const e of entities) {
    const row = [e.entity.name, e.score.toFixed(2), oneLine(e.entity.description)];
    if (!fits(row)) break;
    entityRows.push(row);
  }
  const relationRows: (string | number)[][] = [];
  for (const r of relations) {
    const row = [r.sourceName, r.targetName, r.score.toFixed(2), oneLine(r.relation.description)];
    if (!fits(row)) break;
    relationRows.push(row);
  }
  let text = '';
  if (entityRows.length) text += `\n---- Entities ----\n${csv(['Entity', 'Score', 'Description'], entityRows)}`;
  if (relationRows.length) text += `\n---- Relations ----\n${csv(['From Entity', 'To Entity', 'Score', 'Description'], relationRows)}`;
  const reports = communities.map((c, i) => {
    const evidence = c.findings.map((f) => `- ${[f.summary, f.explanation].filter(Boolean).join(': ')}`).join('\n');
    return `# ${i + 1}. ${c.title}\n## Content\n${c.summary}\n## Evidences\n${evidence}\n`;
  });
  const shown = reports.filter((r) => fits([r]));
  if (shown.length) text += `\n---- Community Report ----\n${shown.join('\n')}`;
  return text;
}

/** What retrieval keeps of a published build: it never changes, so it is read once. */
interface CachedBuild {
  entities: Indexed[];
  names: Map<string, string>;
  topRank: number;
  communities: GraphCommunity[];
}

/** Builds kept in memory (each is the graph's entities and reports, without relations). */
const CACHED_BUILDS = 8;

/** The graph chunk of a retrieval over datasets, from their published graphs. */
export class GraphContext {
  private readonly cache = new Map<string, CachedBuild>();

  constructor(private readonly store: MetaStore) {}

  async chunk(datasetIds: string[], question: string): Promise<ReferenceChunk | undefined> {
    if (!question.trim()) return undefined;
    const published = await this.store.graph.publishedMany(datasetIds);
    if (!published.length) return undefined;
    const builds = await Promise.all(published.map(async (g) => ({ ...g, data: await this.build(g.build_id, g.dataset_id) })));
    // The same name and type in two datasets is one entity (one id): its best match stands for both.
    const seen = new Set<string>();
    const topRank = Math.max(...builds.map((b) => b.data.topRank));
    const entities = builds.length === 1 ? builds[0]!.data.entities : builds.flatMap((b) => b.data.entities);
    const matches = matchEntities(question, entities, topRank).filter((m) => !seen.has(m.entity.id) && !!seen.add(m.entity.id));
    if (!matches.length) return undefined;
    const top = matches.slice(0, ENTITY_TOP_N);

    const seeds = matches.slice(0, RELATION_SEEDS);
    const similarity = new Map(seeds.map((m) => [m.entity.id, m.similarity]));
    const nameOf = (id: string) => builds.map((b) => b.data.names.get(id)).find((n) => n !== undefined) ?? id;
    const relations: GraphRelation[] = [];
    for (const b of builds) {
      const ids = seeds.filter((m) => m.buildId === b.build_id).map((m) => m.entity.id);
      if (ids.length) relations.push(...(await this.store.graph.relationsOf(b.build_id, ids)));
    }
    const rankedRelations = rankRelations(relations, similarity)
      .slice(0, RELATION_TOP_N)
      .map((r) => ({ ...r, sourceName: nameOf(r.relation.source), targetName: nameOf(r.relation.target) }));

    const topIds = new Set(top.map((m) => m.entity.id));
    const communities = builds
      .flatMap((b) => b.data.communities)
      .map((c) => ({ c, hits: c.entityIds.filter((id) => topIds.has(id)).length }))
      .filter((x) => x.hits > 0 && x.c.summary)
      .sort((a, b) => b.hits - a.hits || b.c.weight - a.c.weight || b.c.rating - a.c.rating)
      .slice(0, COMMUNITY_TOP_N)
      .map((x) => x.c);

    const content = formatGraphContext(top, rankedRelations, communities);
    if (!content) return undefined;
    const id = createHash('sha256').update(JSON.stringify([published.map((g) => g.build_id), question])).digest('hex').slice(0, 32);
    return {
      id,
      content,
      document_id: '',
      document_name: GRAPH_CHUNK_NAME,
      document_keyword: GRAPH_CHUNK_NAME,
      dataset_id: top[0]!.datasetId,
      image_id: '',
      positions: [],
      similarity: 1,
      vector_similarity: 1,
      term_similarity: 0,
      important_keywords: [],
      tag_kwd: [],
      questions: [],
    };
  }

  private async build(buildId: string, datasetId: string): Promise<CachedBuild> {
    const hit = this.cache.get(buildId);
    if (hit) {
      this.cache.delete(buildId);
      this.cache.set(buildId, hit);
      return hit;
    }
    const entities = (await this.store.graph.entities(buildId)).map((entity, ord) => ({
      entity,
      ord,
      buildId,
      datasetId,
      name: stems(entity.name),
      description: stems(entity.description),
    }));
    const data = {
      entities,
      names: new Map(entities.map((e) => [e.entity.id, e.entity.name])),
      topRank: highestRank(entities),
      communities: await this.store.graph.communities(buildId),
    };
    if (this.cache.size >= CACHED_BUILDS) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(buildId, data);
    return data;
  }
}
