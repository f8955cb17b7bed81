import type { ExtractedDocument } from '../../parsing/types.js';
import type { ChunkDraft } from '../types.js';
import { unionPositions } from '../positions.js';
import { joinSectionTexts } from '../sections.js';

/** The whole document as a single chunk, whatever its size. */
export function chunkOne(doc: ExtractedDocument): ChunkDraft[] {
  const content = joinSectionTexts(doc.sections);
  if (!content) return [];
  const positions = unionPositions(doc.sections.map((s) => s.positions));
  return [positions ? { content, positions } : { content }];
}
