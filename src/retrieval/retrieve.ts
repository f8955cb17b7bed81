/**
 * Retrieval: question → full-text candidates (top_k) ∪ vector candidates (top_k) → term and vector
 * similarity → weighted sum → optional rerank → threshold → pagerank/similarity order → page.
 */
import type { Candidate, ChunkFilter, IndexedChunk } from '../index/types.js';
import { highlight } from './highlight.js';
import { raptorMark } from '../enrichment/raptor/mark.js';
import { allowedDocumentIds } from './metadata.js';
import {
  blend, compareRanked, isUsableVector, normalisePagerank, termScale, unitScore, vectorSimilarity,
} from './scoring.js';
import { queryTerms } from './tokenizer.js';
import type { DocAgg, ReferenceChunk, RetrievalResult, RetrievalTimings, RetrieveDeps, RetrieveParams } from './types.js';

export const RETRIEVAL_DEFAULTS = {
  page: 1,
  page_size: 30,
  similarity_threshold: 0.2,
  vector_similarity_weight: 0.3,
  top_k: 1024,
} as const;

/** At least this many of the best candidates go to the rerank model (RAGFlow reranks ~64 per request). */
export const RERANK_WINDOW = 64;

interface Scored {
  id: string;
  dataset_id: string;
  document_id: string;
  document_name: string;
  term: number;
  vector: number;
  similarity: number;
  pagerank: number;
}

function positiveInt(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback;
}

function finiteOr(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) ? value : fallback;
}

function settings(params: RetrieveParams) {
  const d = RETRIEVAL_DEFAULTS;
  return {
    page: positiveInt(params.page, d.page),
    pageSize: positiveInt(params.page_size, d.page_size),
    topK: positiveInt(params.top_k, d.top_k),
    threshold: finiteOr(params.similarity_threshold, d.similarity_threshold),
    vectorWeight: unitScore(finiteOr(params.vector_similarity_weight, d.vector_similarity_weight)),
  };
}

async function timed<T>(run: () => Promise<T>, record: (ms: number) => void): Promise<T> {
  const start = performance.now();
  try {
    return await run();
  } finally {
    record(performance.now() - start);
  }
}

/** The documents the search may return: undefined = no restriction, [] = none. */
async function documentScope(params: RetrieveParams, deps: RetrieveDeps): Promise<string[] | undefined> {
  const condition = params.metadata_condition;
  const explicit = params.document_ids?.length ? params.document_ids : undefined;
  if (!condition || condition.conditions.length === 0) return explicit;
  if (!deps.documentMetadata) throw new Error('metadata_condition needs RetrieveDeps.documentMetadata');
  const allowed = allowedDocumentIds(await deps.documentMetadata(params.dataset_ids), condition);
  if (!explicit) return allowed;
  const chosen = new Set(explicit);
  return allowed.filter((id) => chosen.has(id));
}

interface Hit {
  candidate: Candidate;
  /** Term similarity (scoring.ts termScale); 0 when full-text search did not return the chunk. */
  term: number;
  /** Cosine with the query vector, null when the chunk has none of the query's dimension. */
  cosine: number | null;
}

/**
 * The union of both hit lists: full-text hits carry their term similarity, vector hits their cosine;
 * text-only hits take theirs from `textCosines` (the cosines of the full-text hits).
 */
function mergeHits(textHits: Candidate[], vectorHits: Candidate[], textCosines: Map<string, number>): Hit[] {
  const term = termScale(textHits.map((h) => h.score));
  const hits = new Map<string, Hit>(vectorHits.map((h) => [h.id, { candidate: h, term: 0, cosine: h.score }]));
  for (const h of textHits) {
    const hit = hits.get(h.id);
    if (hit) hit.term = term(h.score);
    else hits.set(h.id, { candidate: h, term: term(h.score), cosine: textCosines.get(h.id) ?? null });
  }
  return [...hits.values()];
}

async function pageranks(datasetIds: Iterable<string>, deps: RetrieveDeps): Promise<Map<string, number>> {
  const unique = [...new Set(datasetIds)];
  const values = await Promise.all(unique.map(async (id) => normalisePagerank(await deps.pagerankOf(id))));
  return new Map(unique.map((id, i) => [id, values[i]!]));
}

function score(hits: Hit[], useVector: boolean, vectorWeight: number, pagerank: Map<string, number>): Scored[] {
  return hits.map(({ candidate: c, term, cosine }) => {
    const vector = useVector ? vectorSimilarity(cosine) : 0;
    return {
      id: c.id,
      dataset_id: c.dataset_id,
      document_id: c.document_id,
      document_name: c.document_name,
      term,
      vector,
      similarity: useVector ? blend(vector, term, vectorWeight) : term,
      pagerank: pagerank.get(c.dataset_id) ?? 0,
    };
  });
}

function rerankText(chunk: IndexedChunk): string {
  return [chunk.content, chunk.important_keywords.join(' ')].filter(Boolean).join('\n');
}

/**
 * RAGFlow's rerank_by_model: the best candidates are scored by the rerank model, whose score takes the
 * place of the vector part (and is reported as vector_similarity); the others are dropped.
 */
async function rerankBest(
  question: string, ranked: Scored[], windowSize: number, vectorWeight: number, deps: RetrieveDeps,
  rerank: NonNullable<RetrieveDeps['rerank']>, loaded: Map<string, IndexedChunk>,
): Promise<Scored[]> {
  const window = ranked.slice(0, windowSize);
  for (const chunk of await deps.index.getMany(window.map((s) => s.id), { vectors: false })) loaded.set(chunk.id, chunk);
  const present = window.filter((s) => loaded.has(s.id));
  if (present.length === 0) return [];
  const scores = await rerank(question, present.map((s) => rerankText(loaded.get(s.id)!)));
  return present.map((s, i) => {
    const vector = unitScore(scores[i] ?? 0);
    return { ...s, vector, similarity: blend(vector, s.term, vectorWeight) };
  });
}

/** localeCompare's order, without a collator looked up on every comparison. */
const byName = new Intl.Collator().compare;

function docAggs(results: Scored[]): DocAgg[] {
  const byDoc = new Map<string, DocAgg>();
  for (const r of results) {
    const agg = byDoc.get(r.document_id);
    if (agg) agg.count += 1;
    else byDoc.set(r.document_id, { doc_name: r.document_name, doc_id: r.document_id, count: 1 });
  }
  return [...byDoc.values()].sort((a, b) => b.count - a.count || byName(a.doc_name, b.doc_name));
}

function toReference(s: Scored, chunk: IndexedChunk, highlightStems: ReadonlySet<string> | undefined): ReferenceChunk {
  const content = chunk.parent_content || chunk.content;
  const reference: ReferenceChunk = {
    id: chunk.id,
    content,
    document_id: chunk.document_id,
    document_name: chunk.document_name,
    document_keyword: chunk.document_name,
    dataset_id: chunk.dataset_id,
    image_id: chunk.image_id,
    positions: chunk.positions,
    similarity: unitScore(s.similarity),
    vector_similarity: unitScore(s.vector),
    term_similarity: unitScore(s.term),
    important_keywords: chunk.important_keywords,
    tag_kwd: chunk.tag_kwd,
    questions: chunk.questions,
    ...raptorMark(chunk),
  };
  if (highlightStems) reference.highlight = highlight(content, highlightStems);
  return reference;
}

export async function retrieve(params: RetrieveParams, deps: RetrieveDeps): Promise<RetrievalResult> {
  const started = performance.now();
  const timings: RetrievalTimings = { embed: 0, fulltext: 0, vector: 0, fuse: 0, rerank: 0, total: 0 };
  const finish = (total: number, chunks: ReferenceChunk[], aggs: DocAgg[]): RetrievalResult => {
    timings.total = performance.now() - started;
    return { total, chunks, doc_aggs: aggs, timings };
  };

  const question = params.question ?? '';
  if (question.trim() === '' || params.dataset_ids.length === 0) return finish(0, [], []);
  const s = settings(params);
  const documentIds = await documentScope(params, deps);
  if (documentIds?.length === 0) return finish(0, [], []);
  const filter: ChunkFilter = { datasetIds: params.dataset_ids, documentIds, availableOnly: true };

  // Embedding, full-text and vector search overlap where they can: a remote or threaded embedder works
  // while full-text search runs, and on an index with reader threads the vector search runs beside the
  // full-text search. The no-op catches keep one failure from leaving the other an unhandled rejection.
  const embedding = timed(() => deps.embedQuery(question), (ms) => (timings.embed = ms));
  embedding.catch(() => undefined);
  const fullText = timed(() => deps.index.fullText(question, filter, s.topK), (ms) => (timings.fulltext = ms));
  fullText.catch(() => undefined);
  // Whichever of the two fails first is the error reported.
  const vector = await Promise.race([embedding, fullText.then(() => embedding)]);
  const useVector = isUsableVector(vector);
  // The full-text hits' cosines are asked for as soon as both the hits and the vector are there, beside the
  // vector search (on an index with reader threads, on another thread), not after it: the merge then waits
  // for nothing more. Hits that the vector search also finds get a cosine they do not need (cheap).
  const textCosines = useVector
    ? fullText.then((hits) => deps.index.cosineSimilarities(hits.map((h) => h.id), vector))
    : Promise.resolve(new Map<string, number>());
  textCosines.catch(() => undefined);
  const vectorHits = useVector
    ? await timed(() => deps.index.vectorSearch(vector, filter, s.topK), (ms) => (timings.vector = ms))
    : [];
  const textHits = await fullText;

  const fuseStart = performance.now();
  const hits = mergeHits(textHits, vectorHits, await textCosines);
  const pagerank = await pageranks(hits.map((h) => h.candidate.dataset_id), deps);
  let ranked = score(hits, useVector, s.vectorWeight, pagerank).sort(compareRanked);
  timings.fuse = performance.now() - fuseStart;

  const loaded = new Map<string, IndexedChunk>();
  const rerank = deps.rerank;
  if (rerank) {
    const windowSize = Math.max(RERANK_WINDOW, s.page * s.pageSize);
    ranked = await timed(
      () => rerankBest(question, ranked, windowSize, s.vectorWeight, deps, rerank, loaded),
      (ms) => (timings.rerank = ms),
    );
    ranked.sort(compareRanked);
  }

  const kept = ranked.filter((r) => r.similarity >= s.threshold);
  const pageItems = kept.slice((s.page - 1) * s.pageSize, s.page * s.pageSize);
  const missing = pageItems.filter((r) => !loaded.has(r.id)).map((r) => r.id);
  for (const chunk of await deps.index.getMany(missing, { vectors: false })) loaded.set(chunk.id, chunk);
  const highlightStems = params.highlight ? new Set(queryTerms(question).map((t) => t.stem)) : undefined;
  const chunks = pageItems.flatMap((r) => {
    const chunk = loaded.get(r.id);
    return chunk ? [toReference(r, chunk, highlightStems)] : [];
  });
  return finish(kept.length, chunks, docAggs(kept));
}
