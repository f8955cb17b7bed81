import type { Checkpoints } from './checkpoint.js';
import type { ParseLimits } from './limits.js';
import type { ExtractedDocument, ProgressFn } from './types.js';

export interface ExtractOptions {
  onProgress?: ProgressFn;
  signal?: AbortSignal;
  /** Size, decompression, nesting and pixel limits; by default DEFAULT_PARSE_LIMITS (the parser pool passes the configured ones). */
  limits?: ParseLimits;
  /** Page ranges of a PDF finished by an earlier attempt, and where to store the ones this attempt finishes. */
  checkpoints?: Checkpoints;
}

/** What every format module receives besides the bytes. */
export interface ExtractContext extends ExtractOptions {
  filename: string;
  limits: ParseLimits;
  /** Parses a file found inside this one (an email attachment) with the full dispatcher. */
  extractEmbedded(bytes: Uint8Array, filename: string): Promise<ExtractedDocument>;
}

export type Extractor = (bytes: Uint8Array, ctx: ExtractContext) => Promise<ExtractedDocument>;

/** Result for formats without pages. */
export const flowing = (sections: ExtractedDocument['sections'], meta: Record<string, string> = {}): ExtractedDocument => ({
  sections,
  pages: 1,
  meta,
});
