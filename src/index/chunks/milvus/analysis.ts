/**
 * What Milvus's BM25 function sees: the chunk's words already analysed by Cairn (lowercased, Latin
 * diacritics removed, English stopwords dropped, Porter-stemmed: src/retrieval/tokenizer.ts), separated
 * by spaces, so that Milvus's `standard` tokenizer only splits them again. The same analysis runs on the
 * question. Why not Milvus's own English analyzer (stemmer + stop filter): milvus-lite, which the tests and
 * development run on, has no stemmer (it accepts and ignores the filter), so the two would match different
 * words; with the analysis done here both engines, and the embedded index, match the same words
 * (measured on SciFact by `npx tsx bench/quality/run.ts --profile embedded|scale-out`, docs/scale-out.md "Milvus index").
 *
 * The embedded index weighs fields in bm25 (title 5, keywords 15, questions 10, content 1); Milvus has one
 * BM25 field, so the name, keywords and questions are repeated that many times before the content.
 */
import { isStopword, queryTerms, tokenize } from '../../../retrieval/tokenizer.js';
import type { IndexedChunk } from '../chunk-index.js';
import { truncateUtf8 } from './utf8.js';

export const FIELD_REPEATS = { name: 5, keywords: 15, questions: 10, content: 1 } as const;

/**
 * The version of the analysis written to `text` fields, kept as the collection property ANALYSIS_PROPERTY
 * (reanalysis.ts). 1 (or no property): the tokenizer before 2026-11-24, which stripped the combining marks
 * of every script; 2: FTS5 unicode61's terms for every script. Raise it when the analysis of stored text
 * changes, and say in reanalysis.ts which rows change with it.
 */
export const ANALYSIS_VERSION = 2;
export const ANALYSIS_PROPERTY = 'cairn.analysis_version';

/** Milvus's limit on a VARCHAR value, in UTF-8 bytes. */
export const VARCHAR_MAX_BYTES = 65_535;

/** The text's words as the BM25 field holds them: Porter stems without stopwords, separated by spaces. */
export function stems(text: string): string {
  return tokenize(text).filter((t) => !isStopword(t.word)).map((t) => t.stem).join(' ');
}

/** The analysed text cut to one VARCHAR, never ending on half a stem (the partial word after the last separator is dropped). */
export function fitVarchar(text: string): string {
  const cut = truncateUtf8(text, VARCHAR_MAX_BYTES);
  return cut.length === text.length ? text : cut.slice(0, Math.max(0, cut.search(/\s\S*$/)));
}

function repeated(text: string, times: number): string[] {
  return text ? Array.from({ length: times }, () => text) : [];
}

/**
 * The text of the chunk's BM25 field. Boosted fields come first, so that a chunk too long for one
 * VARCHAR loses the end of its content (its full text stays in the record; see rows.ts).
 */
export function bm25Text(chunk: Pick<IndexedChunk, 'document_name' | 'content' | 'important_keywords' | 'questions'>): string {
  const text = [
    ...repeated(stems(chunk.document_name), FIELD_REPEATS.name),
    ...repeated(stems(chunk.important_keywords.join('\n')), FIELD_REPEATS.keywords),
    ...repeated(stems(chunk.questions.join('\n')), FIELD_REPEATS.questions),
    stems(chunk.content),
  ].filter(Boolean).join('\n');
  return fitVarchar(text);
}

/** The question as the BM25 field's words: distinct stems, stopwords removed; '' when none is left. */
export function bm25Query(question: string): string {
  return queryTerms(question).map((t) => t.stem).join(' ');
}
