import type { ExtractedDocument } from '../../parsing/types.js';
import type { ChunkDraft } from '../types.js';
import { chunkByHeadings } from '../headings.js';
import { textOptions } from '../options.js';

const FALLBACK_TOKENS = 256;

/** Split by the heading hierarchy; every chunk starts with its heading path, one title per line. */
export function chunkManual(doc: ExtractedDocument, config: Record<string, unknown>): ChunkDraft[] {
  return chunkByHeadings(doc.sections, textOptions(config, FALLBACK_TOKENS));
}
