import type { Position } from '../parsing/types.js';

/** A chunk as produced by a chunk method, before embedding and indexing. */
export interface ChunkDraft {
  content: string;
  positions?: Position[];
  important_keywords?: string[];
  questions?: string[];
  tag_kwd?: string[];
  /** Image bytes attached to the chunk (picture method, slides, OCR'd pages). */
  image?: Uint8Array;
  /** parent_child: the parent text returned to readers when this child chunk matches. */
  parent_content?: string;
}
