/**
 * search_message: hybrid full-text + vector search over memory messages.
 *
 *   term_similarity   = (bm25(message) / best bm25 among the full-text candidates) ^ 1/4, 0 for a message that
 *                       full-text search did not return (as for chunks: src/retrieval/scoring.ts)
 *   vector_similarity = cosine(query vector, message vector), clamped to 0..1
 *   similarity        = kw · term_similarity + (1 − kw) · vector_similarity,  kw = keywords_similarity_weight
 *
 * So kw = 0.5 weighs keywords and meaning equally, kw = 1 is keyword search only and kw = 0 is vector
 * search only; the default 0.7 leans on keywords, as the parameter's name says. (RAGFlow's Elasticsearch
 * connector applies the weight the other way round; the spec's definition is followed here.) When the
 * query has no usable vector, similarity is the term similarity alone.
 *
 * Candidates are the best full-text and the nearest vector matches among searchable messages (enabled,
 * not forgotten, matching the filters). Those at or above similarity_threshold are ranked by similarity,
 * the best top_n are kept, and they are returned most recent first (valid_at descending), as RAGFlow
 * returns them. Every score is finite and within 0..1. A scope (dates, message types: search-scope.ts)
 * keeps only the candidates within it, still the best top_n of those.
 *
 * The full-text leg takes up to SEARCH_CANDIDATES matches, the vector leg only the nearest vectorCandidates
 * (100, or 10 · top_n): every message the full-text leg returned is scored with its exact cosine anyway, and
 * any other message scores (1 − kw) · its vector similarity, which ranks it below each of the nearest ones
 * (their score is at least that), so more vector candidates could not change the best top_n. Fewer hits
 * matter on the scale-out index, where Milvus sends each one and the ledger re-checks it: in a memory of
 * 1,000 messages a vector leg of 1,024 returned all of them (docs/memories.md, "Index: search scoped per
 * memory"). A scoped search takes SEARCH_CANDIDATES from both legs: its in-scope candidates may be far down.
 *
 * In a current-only search (the default: filter.currentAt set), a raw turn all of whose facts were replaced
 * or retracted ranks at half its similarity (stale-turns.ts), so the turn holding the change comes first.
 */
import type { MemoryIndex, MemoryMessage, MemorySearchFilter } from '../index/memories/memory-index.js';
import { isUsableVector, termScale, unitScore, vectorSimilarity } from '../retrieval/scoring.js';
import { inScope, isScoped, type SearchScope } from './search-scope.js';
import { STALE_TURN_WEIGHT, staleTurns } from './stale-turns.js';

export const SEARCH_DEFAULTS = { similarity_threshold: 0.2, keywords_similarity_weight: 0.7, top_n: 10 } as const;

/** Candidates taken from full-text search, and from vector search when the search is scoped. */
export const SEARCH_CANDIDATES = 1024;

/** The fewest candidates taken from vector search (see the header for why this many suffice). */
export const VECTOR_CANDIDATES = 100;

/** The nearest messages the vector leg returns for a search of `topN` results. */
export function vectorCandidates(topN: number, scoped: boolean): number {
  return scoped ? SEARCH_CANDIDATES : Math.min(SEARCH_CANDIDATES, Math.max(VECTOR_CANDIDATES, topN * 10));
}

export interface MemorySearchParams {
  query: string;
  filter: MemorySearchFilter;
  similarity_threshold?: number;
  keywords_similarity_weight?: number;
  top_n?: number;
  /** Dates and types to keep (checked on the ranked candidates; see search-scope.ts). */
  scope?: SearchScope;
}

export interface MemorySearchDeps {
  index: MemoryIndex;
  /** Embeds the query with the memories' embedding model (L2-normalised). */
  embedQuery(text: string): Promise<number[]>;
}

export interface ScoredMessage {
  message: MemoryMessage;
  similarity: number;
  term_similarity: number;
  vector_similarity: number;
}

/** The weighted sum of the two parts, in 0..1. */
export function hybridSimilarity(termPart: number, vectorPart: number, keywordsWeight: number): number {
  const kw = unitScore(keywordsWeight);
  return unitScore(kw * unitScore(termPart) + (1 - kw) * unitScore(vectorPart));
}

function finiteOr(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) ? value : fallback;
}

export async function searchMessages(params: MemorySearchParams, deps: MemorySearchDeps): Promise<ScoredMessage[]> {
  const query = params.query ?? '';
  const threshold = finiteOr(params.similarity_threshold, SEARCH_DEFAULTS.similarity_threshold);
  const kw = unitScore(finiteOr(params.keywords_similarity_weight, SEARCH_DEFAULTS.keywords_similarity_weight));
  const topN = Math.max(1, Math.floor(finiteOr(params.top_n, SEARCH_DEFAULTS.top_n)));
  if (!query.trim() || params.filter.memoryIds.length === 0) return [];

  const embedding = deps.embedQuery(query);
  embedding.catch(() => undefined);
  // The two legs run at once (on the scale-out index each is a Milvus search and a ledger re-check).
  const textLeg = deps.index.fullText(query, params.filter, SEARCH_CANDIDATES);
  textLeg.catch(() => undefined);
  const vector = await embedding;
  const useVector = isUsableVector(vector);
  const [textHits, vectorHits] = await Promise.all([
    textLeg,
    useVector ? deps.index.vectorSearch(vector, params.filter, vectorCandidates(topN, isScoped(params.scope))) : [],
  ]);

  const termOf = termScale(textHits.map((h) => h.score));
  const hits = new Map(vectorHits.map((h) => [h.message_id, { id: h.message_id, term: 0, cosine: h.score as number | null }]));
  const textOnly = textHits.filter((h) => !hits.has(h.message_id));
  const cosines = useVector ? await deps.index.cosineSimilarities(textOnly.map((h) => h.message_id), vector) : new Map<number, number>();
  for (const h of textHits) {
    const hit = hits.get(h.message_id);
    if (hit) hit.term = termOf(h.score);
    else hits.set(h.message_id, { id: h.message_id, term: termOf(h.score), cosine: cosines.get(h.message_id) ?? null });
  }

  const scored = [...hits.values()].map(({ id, term, cosine }) => {
    const vec = useVector ? vectorSimilarity(cosine) : 0;
    return { id, term, vec, similarity: useVector ? hybridSimilarity(term, vec, kw) : term };
  });
  const ranked = scored.filter((s) => s.similarity >= threshold).sort((a, b) => b.similarity - a.similarity || b.id - a.id);
  const best = await bestInScope(ranked, topN, threshold, deps.index, params.scope, params.filter.currentAt);
  return best
    .map(({ s, message, similarity }) => ({ message, similarity: unitScore(similarity), term_similarity: unitScore(s.term), vector_similarity: unitScore(s.vec) }))
    .sort((a, b) => b.message.valid_at - a.message.valid_at || b.similarity - a.similarity || b.message.message_id - a.message.message_id);
}

/**
 * The best `topN` ranked candidates that exist and are in scope, loaded, with their final similarity. Without
 * a scope a page is topN candidates; with one, candidates are loaded a page at a time until topN are in scope
 * or none are left, so a narrow scope costs more loads only when many better candidates fall outside it.
 * In a current-only search (`currentAt` set) a stale turn (stale-turns.ts) counts at STALE_TURN_WEIGHT of its
 * similarity; since that only lowers scores, paging stops once the topN-th best is at least the next
 * candidate's similarity, which is exactly the topN a full re-ranking would give.
 */
async function bestInScope<T extends { id: number; similarity: number }>(
  ranked: T[], topN: number, threshold: number, index: MemoryIndex, scope: SearchScope | undefined, currentAt: number | undefined,
) {
  const scoped = isScoped(scope);
  const page = scoped ? Math.max(topN * 4, 64) : topN;
  const out: { s: T; message: MemoryMessage; similarity: number }[] = [];
  for (let from = 0; from < ranked.length; from += page) {
    if (out.length >= topN && out[topN - 1]!.similarity >= ranked[from]!.similarity) break;
    const slice = ranked.slice(from, from + page);
    const loaded = new Map((await index.getMany(slice.map((s) => s.id))).map((m) => [m.message_id, m]));
    const wanted = [...loaded.values()].filter((m) => !scoped || inScope(m, scope));
    const stale = currentAt === undefined ? new Set<number>() : await staleTurns(index, wanted, currentAt);
    for (const s of slice) {
      const message = loaded.get(s.id);
      if (!message || (scoped && !inScope(message, scope))) continue;
      const similarity = stale.has(s.id) ? s.similarity * STALE_TURN_WEIGHT : s.similarity;
      if (similarity >= threshold) out.push({ s, message, similarity });
    }
    out.sort((a, b) => b.similarity - a.similarity || b.s.id - a.s.id);
  }
  return out.slice(0, topN);
}
