/**
 * Retrieval: question → full-text candidates (top_k) ∪ vector candidates (top_k) → term and vector
 * similarity → weighted sum → optional rerank → threshold → pagerank/similarity order → page.
 */
import type { Candidate, ChunkFilter, IndexedChunk } from '../index/chunks/chunk-index.js';
import { highlight } from './highlight.js';
import { raptorMark } from '../enrichment/raptor/mark.js';
import { allowedDocumentIds } from './metadata.js';
import { NameOrder } from './name-order.js';
import {
  blend, compareRanked, firstRanked, isUsableVector, normalisePagerank, termScale, unitScore, vectorSimilarity,
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

function scoredHit(c: Candidate, term: number, vector: number): Scored {
  return {
    id: c.id, dataset_id: c.dataset_id, document_id: c.document_id, document_name: c.document_name,
    term, vector, similarity: 0, pagerank: 0,
  };
}

/**
 * The full-text hits scored, by id: their term similarity, and their cosines (`textCosines`) as the vector
 * part. Done while the vector search still runs, so that the merge after it only adds the vector hits.
 */
function scoreTextHits(textHits: Candidate[], textCosines: Map<string, number>, useVector: boolean): Map<string, Scored> {
  const term = termScale(textHits.map((h) => h.score));
  const byId = new Map<string, Scored>();
  for (const h of textHits) byId.set(h.id, scoredHit(h, term(h.score), useVector ? vectorSimilarity(textCosines.get(h.id) ?? null) : 0));
  return byId;
}

/**
 * The union of both hit lists: vector hits take their own cosine as the vector part (full-text hits among
 * them keep their term similarity), then every candidate gets its dataset's pagerank and the weighted
 * sum. One object per candidate: a retrieval handles ~2,000 of them.
 */
function withVectorHits(
  byId: Map<string, Scored>, vectorHits: Candidate[], useVector: boolean, vectorWeight: number, pagerank: Map<string, number>,
): Scored[] {
  for (const h of vectorHits) {
    const hit = byId.get(h.id);
    if (hit) hit.vector = vectorSimilarity(h.score);
    else byId.set(h.id, scoredHit(h, 0, vectorSimilarity(h.score)));
  }
  const all = [...byId.values()];
  for (const s of all) {
    s.pagerank = pagerank.get(s.dataset_id) ?? 0;
    s.similarity = useVector ? blend(s.vector, s.term, vectorWeight) : s.term;
  }
  return all;
}

async function pageranks(textHits: Candidate[], vectorHits: Candidate[], deps: RetrieveDeps): Promise<Map<string, number>> {
  const unique = new Set<string>();
  for (const h of textHits) unique.add(h.dataset_id);
  for (const h of vectorHits) unique.add(h.dataset_id);
  const ids = [...unique];
  const values = await Promise.all(ids.map(async (id) => normalisePagerank(await deps.pagerankOf(id))));
  return new Map(ids.map((id, i) => [id, values[i]!]));
}

function rerankText(chunk: IndexedChunk): string {
  return [chunk.content, chunk.important_keywords.join(' ')].filter(Boolean).join('\n');
}

/**
 * RAGFlow's rerank_by_model: the best candidates are scored by the rerank model, whose score takes the
 * place of the vector part (and is reported as vector_similarity); the others are dropped.
 */
async function rerankBest(
  question: string, window: Scored[], vectorWeight: number, deps: RetrieveDeps,
  rerank: NonNullable<RetrieveDeps['rerank']>, loaded: Map<string, IndexedChunk>,
): Promise<Scored[]> {
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
/** Where each document name falls in that order, remembered across retrievals. */
const documentNames = new NameOrder(byName);

/** Document names whose order is remembered now (for /metrics and healthz). */
export function documentNameCacheSize(): number {
  return documentNames.size;
}

/**
 * Documents by count, then name; documents of the same count and name in the order of their best chunks
 * (the order a ranked list would first name them in).
 */
function docAggs(results: Scored[]): DocAgg[] {
  const byDoc = new Map<string, { agg: DocAgg; best: Scored; place: number }>();
  for (const r of results) {
    const doc = byDoc.get(r.document_id);
    if (!doc) byDoc.set(r.document_id, { agg: { doc_name: r.document_name, doc_id: r.document_id, count: 1 }, best: r, place: 0 });
    else {
      doc.agg.count += 1;
      if (compareRanked(r, doc.best) < 0) doc.best = r;
    }
  }
  const docs = [...byDoc.values()];
  const places = documentNames.placesOf(docs.map((d) => d.agg.doc_name));
  if (places) docs.forEach((d, i) => (d.place = places[i]!));
  const nameOrder = places
    ? (a: { place: number }, b: { place: number }) => a.place - b.place
    : (a: { agg: DocAgg }, b: { agg: DocAgg }) => byName(a.agg.doc_name, b.agg.doc_name);
  return docs
    .sort((a, b) => b.agg.count - a.agg.count || nameOrder(a, b) || compareRanked(a.best, b.best))
    .map((d) => d.agg);
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
  const textScored = Promise.all([fullText, textCosines]).then(([hits, cosines]) => scoreTextHits(hits, cosines, useVector));
  textScored.catch(() => undefined);
  const vectorHits = useVector
    ? await timed(() => deps.index.vectorSearch(vector, filter, s.topK), (ms) => (timings.vector = ms))
    : [];
  const textHits = await fullText;

  const fuseStart = performance.now();
  const pagerank = await pageranks(textHits, vectorHits, deps);
  let scored = withVectorHits(await textScored, vectorHits, useVector, s.vectorWeight, pagerank);
  timings.fuse = performance.now() - fuseStart;

  const loaded = new Map<string, IndexedChunk>();
  const rerank = deps.rerank;
  if (rerank) {
    const windowSize = Math.max(RERANK_WINDOW, s.page * s.pageSize);
    scored = await timed(
      () => rerankBest(question, firstRanked(scored, windowSize), s.vectorWeight, deps, rerank, loaded),
      (ms) => (timings.rerank = ms),
    );
  }

  const kept = scored.filter((r) => r.similarity >= s.threshold);
  // Only the page is put in order: doc_aggs and the total need no order.
  const pageItems = firstRanked(kept, s.page * s.pageSize).slice((s.page - 1) * s.pageSize);
  const missing = pageItems.filter((r) => !loaded.has(r.id)).map((r) => r.id);
  // doc_aggs is counted while a reader thread loads the page.
  const page = deps.index.getMany(missing, { vectors: false });
  const aggs = docAggs(kept);
  for (const chunk of await page) loaded.set(chunk.id, chunk);
  const highlightStems = params.highlight ? new Set(queryTerms(question).map((t) => t.stem)) : undefined;
  const chunks = pageItems.flatMap((r) => {
    const chunk = loaded.get(r.id);
    return chunk ? [toReference(r, chunk, highlightStems)] : [];
  });
  return finish(kept.length, chunks, aggs);
}
