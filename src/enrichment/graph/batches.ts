/**
 * How a graph job cuts a dataset's chunks into batches (one activity each). Pure and deterministic, so
 * the workflow computes the batches itself from the plan: the plan carries one line per document, not
 * one per batch.
 */

/** A document of the plan: its id and how many chunks it has, in dataset order. */
export interface PlannedDocument {
  id: string;
  chunks: number;
}

/** Consecutive chunks of one document: positions [offset, offset + count) in its chunk order. */
export interface ChunkSegment {
  documentId: string;
  offset: number;
  count: number;
}

/** Fewest chunks per batch; a dataset of more than MAX_BATCHES × this gets bigger batches. */
export const MIN_BATCH_CHUNKS = 32;
/** Batches per job at most, so the workflow's history stays small whatever the dataset's size. */
export const MAX_BATCHES = 1000;

/** Communities reported on per activity. */
export const COMMUNITIES_PER_BATCH = 8;

export function chunksPerBatch(totalChunks: number): number {
  return Math.max(MIN_BATCH_CHUNKS, Math.ceil(totalChunks / MAX_BATCHES));
}

export function batchCount(totalChunks: number, perBatch: number): number {
  return Math.ceil(totalChunks / perBatch);
}

/** The segments of batch `b`: the dataset's chunks [b × perBatch, (b + 1) × perBatch) in document order. */
export function batchSegments(documents: PlannedDocument[], perBatch: number, b: number): ChunkSegment[] {
  const from = b * perBatch;
  const to = from + perBatch;
  const segments: ChunkSegment[] = [];
  let start = 0;
  for (const doc of documents) {
    const end = start + doc.chunks;
    const lo = Math.max(from, start);
    const hi = Math.min(to, end);
    if (lo < hi) segments.push({ documentId: doc.id, offset: lo - start, count: hi - lo });
    start = end;
    if (start >= to) break;
  }
  return segments;
}
