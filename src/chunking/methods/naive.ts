import type { ExtractedDocument } from '../../parsing/types.js';
import type { ChunkDraft } from '../types.js';
import { textOptions } from '../options.js';
import { sectionChunks } from '../sections.js';

/** RAGFlow's own fallback when a naive config has no chunk_token_num. */
const FALLBACK_TOKENS = 128;

/** General: text merged up to chunk_token_num, split on the delimiters; tables and images apart. */
export function chunkNaive(doc: ExtractedDocument, config: Record<string, unknown>): ChunkDraft[] {
  return sectionChunks(doc.sections, textOptions(config, FALLBACK_TOKENS));
}
