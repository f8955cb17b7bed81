/**
 * Builds the FTS5 MATCH expression for a question.
 *
 * FTS5 has no top-k pruning: an OR of all query words scores every chunk containing any of them (most
 * of a 100k-chunk corpus), and bm25() walks the whole posting list of every word in the expression once
 * per query to count its matches. Both costs grow with how common the words are. When the words' chunk
 * counts add up to more than a row budget, they are sorted by how many chunks contain them, and:
 * - words in half the chunks or more are left out (unless every word is that common): FTS5's bm25 gives
 *   them an IDF of ~0, so they cannot change the order of chunks matching any other word;
 * - the rarest words, up to MATCH_ROW_BUDGET matching rows, are *required*: a chunk must contain one;
 * - the next words, up to OPTIONAL_ROW_FACTOR × that budget, are *optional*: they still add to the bm25
 *   score of the chunks that match, through `AND (optional OR scope: all)`, where `scope` is a column
 *   holding the token "all" in every row. Words beyond both budgets are left out.
 * Otherwise (always on small corpora) the expression is a plain OR of all the words. On big corpora the
 * top 10 then mostly, not always, equals exact bm25's, at a lower cost; the in-memory copies (postings-cache.ts)
 * give exact bm25 wherever they fit, and `npx tsx bench/retrieval/run.ts` with CAIRN_CACHE_FULLTEXT_MB=0 times
 * this plan.
 */

/** The body columns searched, in table order; `scope` is the always-matching column. */
export const FTS_COLUMNS = ['title', 'content', 'important_keywords', 'questions', 'scope'] as const;

/**
 * bm25 column weights, RAGFlow's field boosts (title_tks^10, content_ltks^2, important_kwd^30,
 * question_tks^20) halved; `scope` never contributes.
 */
export const FTS_WEIGHTS = [5, 1, 15, 10, 0] as const;

export const SCOPE_TOKEN = 'all';

/** Default number of rows the required words may match. */
export const MATCH_ROW_BUDGET = 10_000;

/** Optional words may have up to this many times the row budget in postings. */
export const OPTIONAL_ROW_FACTOR = 3;

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

/** The longest prefix whose frequencies sum to at most `budget`; at least one word when `atLeastOne`. */
function takeWithin(words: FtsWord[], budget: number, atLeastOne: boolean): FtsWord[] {
  const taken: FtsWord[] = [];
  let rows = 0;
  for (const w of words) {
    if ((taken.length > 0 || !atLeastOne) && rows + w.chunkFrequency > budget) break;
    taken.push(w);
    rows += w.chunkFrequency;
  }
  return taken;
}

/** The MATCH expression, or null when there is no word to search. */
export function buildMatchExpression(words: FtsWord[], chunkCount: number, rowBudget = MATCH_ROW_BUDGET): string | null {
  if (words.length === 0) return null;
  if (words.reduce((rows, w) => rows + w.chunkFrequency, 0) <= rowBudget) return anyOf(words);
  const informative = words.filter((w) => 2 * w.chunkFrequency < chunkCount);
  const byRarity = [...(informative.length > 0 ? informative : words)].sort((a, b) => a.chunkFrequency - b.chunkFrequency);
  const required = takeWithin(byRarity, rowBudget, true);
  const optional = takeWithin(byRarity.slice(required.length), OPTIONAL_ROW_FACTOR * rowBudget, false);
  if (optional.length === 0) return anyOf(required);
  return `${anyOf(required)} AND (${anyOf(optional)} OR scope: ${SCOPE_TOKEN})`;
}
