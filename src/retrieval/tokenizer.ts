/**
 * The one text analyser of retrieval: used to build full-text queries, to compute the term sets of
 * chunks and queries for term similarity, and to highlight matches. It mirrors FTS5's
 * `porter unicode61` tokenizer (words are runs of letters and digits, lowercased, Latin diacritics
 * removed, Porter-stemmed) so that its stems are the terms FTS5 indexes; on top of that it drops
 * English stopwords.
 */
import { porterStem } from './porter.js';
import { STOPWORDS } from './stopwords.js';

export interface Token {
  /** Normalised (lowercased, diacritics removed) word. */
  word: string;
  stem: string;
  /** Offsets of the word in the original text. */
  start: number;
  end: number;
}

export interface QueryTerm {
  /** The normalised word as typed; FTS5 stems it itself when it is used in a MATCH expression. */
  word: string;
  stem: string;
}

const WORD = /[\p{L}\p{N}\p{Co}][\p{L}\p{N}\p{M}\p{Co}]*/gu;
const ASCII = /^[\x20-\x7e]*$/;
const MARKS = /\p{M}+/gu;
/** Any 7-bit text (line breaks included): lowercasing it leaves word boundaries where they were. */
const SEVEN_BIT = /^[\x00-\x7f]*$/;

/** Lowercase letters that Unicode case folding (and so FTS5) maps to another letter; toLowerCase keeps them. */
const FOLDS: Record<string, string> = {
  '\u00b5': '\u03bc', '\u017f': 's', '\u03c2': '\u03c3', '\u03d0': '\u03b2', '\u03d1': '\u03b8',
  '\u03d5': '\u03c6', '\u03d6': '\u03c0', '\u03f0': '\u03ba', '\u03f1': '\u03c1', '\u03f5': '\u03b5',
};
const FOLDABLE = new RegExp(`[${Object.keys(FOLDS).join('')}]`, 'gu');

function normalise(raw: string): string {
  const lower = raw.toLowerCase();
  if (ASCII.test(lower)) return lower;
  return lower.replace(FOLDABLE, (c) => FOLDS[c]!).normalize('NFD').replace(MARKS, '');
}

const STEM_CACHE_LIMIT = 200_000;
const stemCache = new Map<string, string>();

/** Words whose stems are memoised now (for /metrics). */
export function stemCacheSize(): number {
  return stemCache.size;
}

function stemOf(word: string): string {
  let stem = stemCache.get(word);
  if (stem === undefined) {
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
    stem = porterStem(word);
    stemCache.set(word, stem);
  }
  return stem;
}

/** Every word of the text, stopwords included, with its position. */
export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  for (const match of text.matchAll(WORD)) {
    const word = normalise(match[0]);
    if (word) out.push({ word, stem: stemOf(word), start: match.index, end: match.index + match[0].length });
  }
  return out;
}

const SEVEN_BIT_WORD = /[a-z0-9]+/g;

/**
 * The normalised words of the text, stopwords included, in order: the words of `tokenize` without their
 * stems and offsets, for indexing (memory-postings stems each distinct word once). 7-bit text (the usual
 * case) is lowercased once and split with a plain regex, several times faster than word by word.
 */
export function indexedWords(text: string): string[] {
  if (SEVEN_BIT.test(text)) return text.toLowerCase().match(SEVEN_BIT_WORD) ?? [];
  const words = text.match(WORD) ?? [];
  let kept = 0;
  for (const raw of words) {
    const word = normalise(raw);
    if (word) words[kept++] = word;
  }
  words.length = kept;
  return words;
}

/** The Porter stem of a normalised word (memoised). */
export { stemOf };

export function isStopword(word: string): boolean {
  return STOPWORDS.has(word);
}

/** The query's terms: stopwords removed, one per distinct stem, in order of first appearance. */
export function queryTerms(text: string): QueryTerm[] {
  const seen = new Set<string>();
  const terms: QueryTerm[] = [];
  for (const { word, stem } of tokenize(text)) {
    if (isStopword(word) || seen.has(stem)) continue;
    seen.add(stem);
    terms.push({ word, stem });
  }
  return terms;
}
