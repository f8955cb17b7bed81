import { toJsonWithBytes } from '../blobs/json-with-bytes.js';
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
  return { drafts, tokens: draftTokens(drafts), pages: doc.pages, sections: doc.sections.length };
}

/** Tokens of all the drafts' contents: a document's token_count. */
export function draftTokens(drafts: ChunkDraft[]): number {
  return drafts.reduce((n, d) => n + countTokens(d.content), 0);
}

/**
 * A chunked file as the parser process hands it over: the drafts already as the text of their work file. One
 * string crosses the process boundary and goes to the file as it is; as objects, a book's 145,000 drafts took
 * ~0.7 s to deserialize and ~0.6 s to turn into JSON, each an uninterrupted hold of the worker's event loop
 * (bench/ingest/large-document.ts --paragraphs 290000).
 */
export interface EncodedChunks extends Omit<ChunkedFile, 'drafts'> {
  /** The drafts as JSON (src/blobs/json-with-bytes.ts). */
  draftsJson: string;
  chunks: number;
}

export function encodeChunks({ drafts, tokens, pages, sections }: ChunkedFile): EncodedChunks {
  return { draftsJson: toJsonWithBytes(drafts), chunks: drafts.length, tokens, pages, sections };
}
