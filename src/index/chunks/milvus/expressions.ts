/**
 * Milvus boolean expressions built from values that come from users (ids, keywords). milvus-lite has no
 * expression templates (`exprValues`), so values are written as string literals, escaped for both
 * parsers: Milvus's (C-style escapes) and milvus-lite's (which knows \" \' \\ \n \r \t only).
 */
import type { ChunkFilter } from '../chunk-index.js';

const ESCAPES: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A double-quoted string literal holding `value` exactly. */
export function literal(value: string): string {
  return `"${value.replace(/[\\"\n\r\t]/g, (c) => ESCAPES[c]!)}"`;
}

export function equals(field: string, value: string): string {
  return `${field} == ${literal(value)}`;
}

export function isIn(field: string, values: Iterable<string>): string {
  return `${field} in [${[...new Set(values)].map(literal).join(', ')}]`;
}

/** `field in [1, 2, …]` on an Int64 field. */
export function isInIntegers(field: string, values: Iterable<number>): string {
  const written = [...new Set(values)].map((value) => {
    if (!Number.isSafeInteger(value)) throw new Error(`${field}: ${value} is not an integer`);
    return String(value);
  });
  return `${field} in [${written.join(', ')}]`;
}

export function and(...terms: (string | undefined | false)[]): string {
  const kept = terms.filter((t): t is string => Boolean(t));
  return kept.length === 1 ? kept[0]! : kept.map((t) => `(${t})`).join(' && ');
}

/**
 * The search filter of a ChunkFilter, on collections that have `dataset_id` (the partition key, so Milvus
 * searches only the partitions of those datasets), `document_id` and `available`.
 */
export function chunkFilter(filter: ChunkFilter): string {
  return and(
    isIn('dataset_id', filter.datasetIds),
    filter.documentIds && isIn('document_id', filter.documentIds),
    filter.availableOnly && 'available == true',
  );
}

/**
 * A LIKE pattern that matches every text containing `needle` (and possibly more): the LIKE
 * metacharacters `%`, `_` and the escape character `\` are where the pattern falls back to `%`, because
 * Milvus versions and milvus-lite disagree on escaping them. Callers re-check the matches exactly.
 */
export function containsPattern(needle: string): string {
  const pieces = needle.split(/[%_\\]+/).filter(Boolean);
  return `%${pieces.join('%')}%`.replace(/%%+/g, '%');
}
