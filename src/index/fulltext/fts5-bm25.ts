/**
 * FTS5's bm25() (sqlite3.c, fts5Bm25Function), reproduced so that an in-memory search scores exactly as
 * `bm25(chunk_fts, 5, 1, 15, 10, 0)` does:
 *
 *   score = Σ over query words: idf · f·(k1+1) / (f + k1·(1 − b + b·D/avgdl))
 *   idf   = ln((N − n + 0.5) / (n + 0.5)), at least 1e-6
 *
 * with f the word's occurrences in the row weighted by column, D the row's tokens in all columns, N the
 * table's rows, avgdl its tokens per row and n the rows containing the word. N, avgdl and n are the whole
 * table's (every dataset), as FTS5 computes them: N and avgdl are read from FTS5's totals record at each
 * search, n from the in-memory copies when they hold the whole table, else from fts5vocab.
 */
export const K1 = 1.2;
export const B = 0.75;
const MIN_IDF = 1e-6;

/** bm25's k1·(1 − b + b·D/avgdl) for a row of D tokens, as FTS5 computes it. */
export function lengthTerm(tokens: number, averageLength: number): number {
  return K1 * (1 - B + (B * tokens) / averageLength);
}

/**
 * idf from its logarithm ln((N − n + 0.5) / (n + 0.5)). The index computes the logarithm with SQLite's ln()
 * (the C library's log, as FTS5 does): V8's Math.log may differ in the last bit, and so would the scores.
 */
export function idfOf(logRatio: number): number {
  return logRatio <= 0 ? MIN_IDF : logRatio;
}

/** The table-wide figures bm25() uses: rows and average tokens per row. */
export interface TableTotals {
  rowCount: number;
  averageLength: number;
}

/** SQLite's varint (FTS5 uses the same): 7 bits per byte, big-endian; the ninth byte carries 8. */
function readVarint(bytes: Uint8Array, at: number): [value: number, next: number] {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const byte = bytes[at + i]!;
    value = value * 128 + (byte & 0x7f);
    if (byte < 0x80) return [value, at + i + 1];
  }
  return [value * 256 + bytes[at + 8]!, at + 9];
}

/**
 * Decodes FTS5's averages record (the %_data row with id 1): the row count, then the total tokens of each
 * column. Undefined when the table is empty (no record yet).
 */
export function decodeTotals(record: Uint8Array | undefined, columns: number): TableTotals | undefined {
  if (!record || record.length === 0) return undefined;
  let [rowCount, at] = readVarint(record, 0);
  let tokens = 0;
  for (let c = 0; c < columns && at < record.length; c++) {
    const [size, next] = readVarint(record, at);
    tokens += size;
    at = next;
  }
  return rowCount > 0 ? { rowCount, averageLength: tokens / rowCount } : undefined;
}
