import type { ExtractedDocument } from '../parsing/types.js';
import { countTokens } from '../text/tokens.js';
import { chunkDocument, type ChunkDraft, type ChunkMethod } from './index.js';

/** How a document is to be chunked: its chunk method and parser_config. */
export interface ChunkRequest {
  method: ChunkMethod;
  /** The document's parser_config. */
  config: Record<string, unknown>;
}

/** A file extracted and chunked. */
export interface ChunkedFile {
  drafts: ChunkDraft[];
  /** Tokens of all the drafts' contents (the document's token_count). */
  tokens: number;
  pages: number;
  sections: number;
}

/** The extracted document's chunks and their token total (in the parser process, or for older runs in the worker). */
export function chunkFile(doc: ExtractedDocument, { method, config }: ChunkRequest, filename: string): ChunkedFile {
  const drafts = chunkDocument(doc, method, config, { filename });
  return { drafts, tokens: drafts.reduce((n, d) => n + countTokens(d.content), 0), pages: doc.pages, sections: doc.sections.length };
}
