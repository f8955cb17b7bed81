import type { ExtractedDocument, Section } from '../../parsing/types.js';
import type { ChunkDraft } from '../types.js';
import { textOptions } from '../options.js';
import { sectionChunks } from '../sections.js';

/** RAGFlow's email default when the config has no chunk_token_num. */
const FALLBACK_TOKENS = 128;

const HEADERS: ReadonlyArray<[key: string, label: string]> = [
  ['from', 'From'],
  ['to', 'To'],
  ['cc', 'Cc'],
  ['subject', 'Subject'],
  ['date', 'Date'],
];

/**
 * An email: a "From/To/Subject/Date" block followed by the body, merged like naive; every title
 * (the extractor opens each attachment with one) starts a new chunk, so attachments are chunked on
 * their own, tables and images included.
 */
export function chunkEmail(doc: ExtractedDocument, config: Record<string, unknown>): ChunkDraft[] {
  const header = HEADERS.filter(([key]) => doc.meta[key]?.trim())
    .map(([key, label]) => `${label}: ${doc.meta[key]!.trim()}`)
    .join('\n');
  const sections: Section[] = header ? [{ kind: 'text', text: header }, ...doc.sections] : [...doc.sections];
  return sectionChunks(sections, { ...textOptions(config, FALLBACK_TOKENS), headingBreakTokens: 0 });
}
