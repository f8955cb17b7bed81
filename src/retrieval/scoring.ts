/**
 * Hybrid similarity (RAGFlow's rag/nlp/search.py `rerank` blend, with our own term similarity):
 *
 *   term_similarity   = (bm25(chunk) / best bm25 among the question's full-text candidates) ^ TERM_EXPONENT
 *                       (0 for a chunk that is not among them)
 *   vector_similarity = cosine(query vector, chunk vector), clamped to 0..1 (negative cosines count as 0:
 *                       mapping -1..1 onto 0..1 would lift every chunk to ~0.5 and break thresholds)
 *   similarity        = w · vector_similarity + (1 − w) · term_similarity,   w = vector_similarity_weight
 *
 * bm25 is the index engine's own BM25 relevance (FTS5 in the embedded index, Milvus's BM25 function at
 * scale), so nothing here depends on how an engine tokenises. Dividing by the best candidate makes it
 * per-question and scale-free (the best full-text match scores 1 whatever the engine's BM25 scale); the
 * exponent 1/4 compresses BM25's long tail to the spread of cosine similarities, so that at the default
 * weight 0.3 neither part drowns the other (bench/quality, SciFact nDCG@10: 0.744 at 0.3, against 0.717
 * with the plain ratio; BM25 alone 0.694, vector alone 0.647). The exponent keeps the order, so term
 * similarity alone ranks exactly as BM25 does. See docs/retrieval.md.
 *
 * Every score that leaves this module is finite and within 0..1: NaN and ±Infinity become 0.
 */
/** Any number to a finite score in 0..1 (NaN/±Infinity → 0). */
export function unitScore(x: number): number {
  if (!Number.isFinite(x)) return 0;
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

export function vectorSimilarity(cosine: number | null): number {
  return cosine === null ? 0 : unitScore(cosine);
}

export const TERM_EXPONENT = 0.25;

/**
 * Term similarity as a function of a full-text hit's BM25 score, given the scores of all the question's
 * full-text hits. Scores that are not positive and finite give 0.
 */
export function termScale(scores: Iterable<number>): (bm25: number) => number {
  let best = 0;
  for (const score of scores) if (Number.isFinite(score) && score > best) best = score;
  return (bm25) => (best > 0 && bm25 > 0 ? unitScore((bm25 / best) ** TERM_EXPONENT) : 0);
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
  // -1 / 0 / 1 rather than a difference: a fractional result is a heap number for every comparison of a sort.
  if (a.pagerank > b.pagerank) return -1;
  if (a.pagerank < b.pagerank) return 1;
  if (a.similarity > b.similarity) return -1;
  if (a.similarity < b.similarity) return 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Beyond this many, firstRanked sorts everything: keeping a longer list in order by insertion costs more. */
const INSERTION_LIMIT = 256;

/**
 * The first `n` of `items` in compareRanked order (a new array; `items` is not reordered). A page of 30 out
 * of ~2,000 candidates is kept in order by insertion, most candidates rejected by one comparison with the
 * last kept, instead of sorting them all.
 */
export function firstRanked<T extends Ranked>(items: readonly T[], n: number): T[] {
  if (n <= 0) return [];
  if (n > INSERTION_LIMIT || n * 4 >= items.length) return [...items].sort(compareRanked).slice(0, n);
  const best: T[] = [];
  for (const item of items) {
    if (best.length === n && compareRanked(item, best[n - 1]!) >= 0) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareRanked(best[mid]!, item) <= 0) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, item);
    if (best.length > n) best.pop();
  }
  return best;
}

/** Pagerank values outside 0..100 or non-finite are clamped / zeroed, fractions floored (RAGFlow: integer). */
export function normalisePagerank(pagerank: number): number {
  return Number.isFinite(pagerank) ? Math.min(100, Math.max(0, Math.floor(pagerank))) : 0;
}

/** A query vector that is empty or all zeros carries no signal: RAGFlow then ranks by term similarity alone. */
export function isUsableVector(vector: number[]): boolean {
  return vector.some((x) => Number.isFinite(x) && x !== 0);
}
