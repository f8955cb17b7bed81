import type { ExtractedDocument } from '../../parsing/types.js';
import type { ChunkDraft } from '../types.js';
import { rowPairs } from '../pairs.js';

const HEADER_FIRST = /^(content|text|内容)$/i;
const HEADER_SECOND = /^(tags?|labels?|标签)$/i;

/**
 * A tag set: each (content, tags) row becomes a chunk whose tag_kwd are the comma-separated tags,
 * with "." replaced by "_" as RAGFlow stores them. Rows without tags are skipped.
 */
export function chunkTag(doc: ExtractedDocument): ChunkDraft[] {
  const out: ChunkDraft[] = [];
  for (const pair of rowPairs(doc.sections, (a, b) => HEADER_FIRST.test(a) && HEADER_SECOND.test(b))) {
    const tags = [...new Set(pair.second.split(/[,，]/).map((t) => t.trim().replace(/\./g, '_')).filter((t) => t.length > 0))];
    if (tags.length === 0) continue;
    const chunk: ChunkDraft = { content: pair.first, tag_kwd: tags };
    if (pair.positions) chunk.positions = pair.positions;
    out.push(chunk);
  }
  return out;
}
