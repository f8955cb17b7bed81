/**
 * Hybrid similarity, as RAGFlow computes it (rag/nlp/search.py `rerank`, rag/nlp/query.py
 * `hybrid_similarity` / `similarity`):
 *
 *   term_similarity   = Σ weight(t) over query terms t found in the chunk / Σ weight(t) over all query terms
 *   vector_similarity = cosine(query vector, chunk vector), clamped to 0..1 (negative cosines count as 0:
 *                       mapping -1..1 onto 0..1 would lift every chunk to ~0.5 and break thresholds)
 *   similarity        = w · vector_similarity + (1 − w) · term_similarity,   w = vector_similarity_weight
 *
 * Term weights: RAGFlow uses a dictionary-based IDF; we use the BM25 IDF of the index itself,
 * ln(1 + (N − df + 0.5) / (df + 0.5)), so rare words dominate, common ones still count a little, and words
 * absent from every chunk get the highest weight (a question about something the corpus lacks scores low).
 *
 * Every score that leaves this module is finite and within 0..1: NaN and ±Infinity become 0.
 */
import type { TermStats } from '../index/types.js';

/** Any number to a finite score in 0..1 (NaN/±Infinity → 0). */
export function unitScore(x: number): number {
  if (!Number.isFinite(x)) return 0;
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

export function vectorSimilarity(cosine: number | null): number {
  return cosine === null ? 0 : unitScore(cosine);
}

export function idf(chunkCount: number, chunkFrequency: number): number {
  const df = Math.min(Math.max(chunkFrequency, 0), chunkCount);
  return Math.log(1 + (chunkCount - df + 0.5) / (df + 0.5));
}

export function termWeights(stems: string[], stats: TermStats): Map<string, number> {
  return new Map(stems.map((s) => [s, idf(stats.chunkCount, stats.chunkFrequency.get(s) ?? 0)]));
}

export function termSimilarity(weights: Map<string, number>, hasTerm: (stem: string) => boolean): number {
  let found = 0;
  let total = 0;
  for (const [stem, weight] of weights) {
    total += weight;
    if (hasTerm(stem)) found += weight;
  }
  return total > 0 ? unitScore(found / total) : 0;
}

/** The weighted sum; `vectorPart` is the cosine similarity, or the rerank score when a rerank model is used. */
export function blend(vectorPart: number, termPart: number, vectorWeight: number): number {
  const w = unitScore(vectorWeight);
  return unitScore(w * unitScore(vectorPart) + (1 - w) * unitScore(termPart));
}

export interface Ranked {
  id: string;
  similarity: number;
  /** The chunk's dataset pagerank, 0..100. */
  pagerank: number;
}

/**
 * Result order. RAGFlow adds the dataset's pagerank (0..100) to every chunk score, so any chunk of a
 * dataset with a higher pagerank comes before every chunk of a lower one (similarities never exceed 1).
 * We rank exactly that way but keep `similarity` the plain 0..1 weighted sum the spec requires, and, as
 * RAGFlow's pagerank guide describes, the similarity threshold applies to that unboosted similarity.
 */
export function compareRanked(a: Ranked, b: Ranked): number {
  return b.pagerank - a.pagerank || b.similarity - a.similarity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Pagerank values outside 0..100 or non-finite are clamped / zeroed, fractions floored (RAGFlow: integer). */
export function normalisePagerank(pagerank: number): number {
  return Number.isFinite(pagerank) ? Math.min(100, Math.max(0, Math.floor(pagerank))) : 0;
}

/** A query vector that is empty or all zeros carries no signal: RAGFlow then ranks by term similarity alone. */
export function isUsableVector(vector: number[]): boolean {
  return vector.some((x) => Number.isFinite(x) && x !== 0);
}
