import type { ExtractedDocument } from '../parsing/types.js';
import type { ChunkDraft } from './types.js';
import { CHUNK_METHODS, isChunkMethod, type ChunkMethod } from './methods.js';
import { childrenDelimiters } from './options.js';
import { splitIntoChildren } from './parent-child.js';
import { chunkBook } from './methods/book.js';
import { chunkEmail } from './methods/email.js';
import { chunkLaws } from './methods/laws.js';
import { chunkManual } from './methods/manual.js';
import { chunkNaive } from './methods/naive.js';
import { chunkOne } from './methods/one.js';
import { chunkPaper } from './methods/paper.js';
import { chunkPicture } from './methods/picture.js';
import { chunkPresentation } from './methods/presentation.js';
import { chunkQa } from './methods/qa.js';
import { chunkTable } from './methods/table.js';
import { chunkTag } from './methods/tag.js';

export { CHUNK_METHODS, isChunkMethod, type ChunkMethod };
export type { ChunkDraft };

export interface ChunkContext {
  /** The document's file name; the picture method names images without text after it. */
  filename: string;
}

type Chunker = (doc: ExtractedDocument, config: Record<string, unknown>, context: ChunkContext) => ChunkDraft[];

const CHUNKERS: Record<ChunkMethod, Chunker> = {
  naive: chunkNaive,
  qa: chunkQa,
  table: chunkTable,
  one: chunkOne,
  manual: chunkManual,
  paper: chunkPaper,
  book: chunkBook,
  laws: chunkLaws,
  presentation: chunkPresentation,
  picture: (doc, _config, context) => chunkPicture(doc, context),
  email: chunkEmail,
  tag: chunkTag,
};

/** Methods whose chunks are runs of prose, the ones parent_child can cut into children. */
const PROSE_METHODS: ReadonlySet<ChunkMethod> = new Set(['naive', 'one', 'manual', 'paper', 'book', 'laws', 'email']);

/**
 * Cuts an extracted document into chunks with the given method and parser_config (already merged
 * with the method's defaults by the caller; missing keys fall back to the method's own defaults).
 * An empty document gives no chunks; no chunk ever has blank content.
 */
export function chunkDocument(
  doc: ExtractedDocument,
  method: ChunkMethod,
  parserConfig: Record<string, unknown>,
  context: ChunkContext,
): ChunkDraft[] {
  if (!isChunkMethod(method)) throw new Error(`unknown chunk method: ${String(method)}`);
  let chunks = CHUNKERS[method](doc, parserConfig, context);
  const children = PROSE_METHODS.has(method) ? childrenDelimiters(parserConfig) : undefined;
  if (children) chunks = splitIntoChildren(chunks, children);
  return chunks.filter((c) => c.content.trim().length > 0);
}
