import type { ExtractedDocument } from '../../parsing/types.js';
import type { ChunkDraft } from '../types.js';
import { textOptions } from '../options.js';
import { sectionChunks } from '../sections.js';

const FALLBACK_TOKENS = 256;

/**
 * Like naive, but a title starts a new chunk once the current one is a quarter full, so chapters and
 * sections open chunks without leaving a crumb of a chunk after every short section.
 */
export function chunkBook(doc: ExtractedDocument, config: Record<string, unknown>): ChunkDraft[] {
  const options = textOptions(config, FALLBACK_TOKENS);
  return sectionChunks(doc.sections, { ...options, headingBreakTokens: Math.floor(options.maxTokens / 4) });
}
