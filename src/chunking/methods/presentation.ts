import type { ExtractedDocument, Position, Section } from '../../parsing/types.js';
import type { ChunkDraft } from '../types.js';
import { unionPositions } from '../positions.js';
import { joinSectionTexts } from '../sections.js';

/**
 * One chunk per slide (or page): its text in reading order, the slide image when the extractor
 * rendered one. Sections without a page belong to the slide before them.
 */
export function chunkPresentation(doc: ExtractedDocument): ChunkDraft[] {
  const slides = new Map<number, Section[]>();
  let page = 1;
  for (const section of doc.sections) {
    page = section.page ?? page;
    const list = slides.get(page) ?? [];
    list.push(section);
    slides.set(page, list);
  }
  const out: ChunkDraft[] = [];
  for (const [pageNo, sections] of slides) {
    const content = joinSectionTexts(sections);
    if (!content) continue;
    // Like RAGFlow, a slide without boxes still points at its page.
    const whole: Position = [pageNo, 0, 0, 0, 0];
    const chunk: ChunkDraft = { content, positions: unionPositions(sections.map((s) => s.positions)) ?? [whole] };
    const image = sections.find((s) => s.image)?.image;
    if (image) chunk.image = image;
    out.push(chunk);
  }
  return out;
}
