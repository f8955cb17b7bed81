import type { ChunkIndex } from '../../index/chunks/chunk-index.js';

/** Chunks per list page and per upsert. */
const PAGE = 256;

export interface CopiedChunks {
  documents: number;
  chunks: number;
  /** Chunks per document in the source, for the verification. */
  perDocument: Map<string, number>;
}

/**
 * Copies the chunks of every document through the ChunkIndex port: the source's `list`, page by page
 * in its reading order, then `upsert` into the target (ids kept, so a rerun overwrites instead of
 * duplicating). Embeddings are copied, not recomputed.
 */
export async function copyChunks(source: ChunkIndex, target: ChunkIndex, documentIds: string[], progress: (done: CopiedChunks) => void): Promise<CopiedChunks> {
  const state: CopiedChunks = { documents: 0, chunks: 0, perDocument: new Map() };
  for (const documentId of documentIds) {
    let total = 0;
    for (let page = 1; ; page++) {
      const { total: listed, chunks } = await source.list(documentId, { page, pageSize: PAGE });
      total = listed;
      if (chunks.length) await target.upsert(chunks);
      state.chunks += chunks.length;
      if (chunks.length < PAGE) break;
    }
    state.perDocument.set(documentId, total);
    state.documents++;
    progress(state);
  }
  return state;
}

/** Documents whose chunk count in the target differs from the source's, described. */
export async function chunkMismatches(target: ChunkIndex, perDocument: Map<string, number>): Promise<string[]> {
  const wrong: string[] = [];
  for (const [documentId, expected] of perDocument) {
    const n = await target.countByDocument(documentId);
    if (n !== expected) wrong.push(`document ${documentId}: ${n} chunks in the target, ${expected} in the source`);
  }
  return wrong;
}
