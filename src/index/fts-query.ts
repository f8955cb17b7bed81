/**
 * Builds the FTS5 MATCH expression for a question.
 *
 * FTS5 has no top-k pruning: an OR of all query words makes it score every chunk that contains any of
 * them, which on a 100k-chunk corpus means most chunks (~40 ms for bm25 alone). So words are split by
 * how many chunks contain them: the rarest words, up to a budget of matched rows, are *required* (a chunk
 * must contain at least one of them); the remaining, common words are *optional*: they still add to the
 * bm25 score of the chunks that match, through `AND (optional OR scope: all)`, where `scope` is a column
 * holding the token "all" in every row. bm25 scores of the returned chunks are therefore exact; only
 * chunks containing nothing but common words are skipped, and their bm25 is small by construction (low
 * IDF). On small corpora every word is required and the result is plain bm25 over all words.
 */

/** The body columns searched, in table order; `scope` is the always-matching column. */
export const FTS_COLUMNS = ['title', 'content', 'important_keywords', 'questions', 'scope'] as const;

/**
 * bm25 column weights, RAGFlow's field boosts (title_tks^10, content_ltks^2, important_kwd^30,
 * question_tks^20) halved; `scope` never contributes.
 */
export const FTS_WEIGHTS = [5, 1, 15, 10, 0] as const;

export const SCOPE_TOKEN = 'all';

/** Default number of rows the required words may match before common words become optional. */
export const MATCH_ROW_BUDGET = 10_000;

export interface FtsWord {
  /** Normalised word as typed (FTS5 stems it). */
  word: string;
  /** Number of chunks containing the word's stem. */
  chunkFrequency: number;
}

const BODY = '{title content important_keywords questions}';

function quote(word: string): string {
  return `"${word.replaceAll('"', '""')}"`;
}

function anyOf(words: FtsWord[]): string {
  return `${BODY}: (${words.map((w) => quote(w.word)).join(' OR ')})`;
}

/** The MATCH expression, or null when there is no word to search. */
export function buildMatchExpression(words: FtsWord[], rowBudget = MATCH_ROW_BUDGET): string | null {
  if (words.length === 0) return null;
  const byRarity = [...words].sort((a, b) => a.chunkFrequency - b.chunkFrequency);
  const required: FtsWord[] = [];
  let rows = 0;
  for (const w of byRarity) {
    if (required.length > 0 && rows + w.chunkFrequency > rowBudget) break;
    required.push(w);
    rows += w.chunkFrequency;
  }
  const optional = byRarity.slice(required.length);
  if (optional.length === 0) return anyOf(required);
  return `${anyOf(required)} AND (${anyOf(optional)} OR scope: ${SCOPE_TOKEN})`;
}
