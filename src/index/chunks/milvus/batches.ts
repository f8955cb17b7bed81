/** Splitting requests to Milvus into batches of bounded size. */

/** Bytes of row data per insert request, far below Milvus's gRPC and insert size limits. */
const BYTES_PER_WRITE = 8 * 1024 * 1024;

/** Consecutive batches whose weights add up to at most `max` (a heavier item alone). */
export function batchesOfWeight<T>(items: T[], weight: (item: T) => number, max: number): T[][] {
  const batches: T[][] = [];
  let batch: T[] = [];
  let total = 0;
  for (const item of items) {
    if (batch.length > 0 && total + weight(item) > max) {
      batches.push(batch);
      batch = [];
      total = 0;
    }
    batch.push(item);
    total += weight(item);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** Rows in batches of at most BYTES_PER_WRITE (by the size of their strings and vectors). */
export function writeBatches<T extends object>(rows: T[]): T[][] {
  const size = (row: T) => Object.values(row).reduce<number>((n, value) =>
    n + (typeof value === 'string' ? Buffer.byteLength(value) : Array.isArray(value) ? 4 * value.length : 8), 64);
  return batchesOfWeight(rows, size, BYTES_PER_WRITE);
}
