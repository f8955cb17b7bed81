import type { IndexedChunk } from '../../index/chunks/chunk-index.js';

/**
 * How a RAPTOR summary shows itself in the chunk wire format (chunk lists, retrieval): RAGFlow's
 * `raptor_kwd: "raptor"` and the summary's level. Other chunks get neither field.
 */
export function raptorMark(chunk: Pick<IndexedChunk, 'raptor_layer'>): { raptor_kwd?: 'raptor'; raptor_layer?: number } {
  return chunk.raptor_layer ? { raptor_kwd: 'raptor', raptor_layer: chunk.raptor_layer } : {};
}
