import type { ExtractedDocument, Section } from '../../parsing/types.js';
import type { ChunkDraft } from '../types.js';
import { unionPositions } from '../positions.js';
import { joinSectionTexts } from '../sections.js';

/**
 * One chunk per image with the image attached; its content is the OCR text plus any text sections
 * that follow it (captions). An image without text is named by its section name or the file name, so
 * that the picture stays findable.
 */
export function chunkPicture(doc: ExtractedDocument, context: { filename: string }): ChunkDraft[] {
  const groups: Array<{ image?: Section; texts: Section[] }> = [];
  for (const section of doc.sections) {
    if (section.kind === 'image' || groups.length === 0) groups.push({ texts: [] });
    const group = groups[groups.length - 1]!;
    if (section.kind === 'image' && !group.image) group.image = section;
    else group.texts.push(section);
  }
  const out: ChunkDraft[] = [];
  for (const { image, texts } of groups) {
    const members = image ? [image, ...texts] : texts;
    let content = joinSectionTexts(members);
    if (!content && image?.image) content = (image.name ?? context.filename).trim();
    if (!content) continue;
    const chunk: ChunkDraft = { content };
    const positions = unionPositions(members.map((s) => s.positions));
    if (positions) chunk.positions = positions;
    if (image?.image) chunk.image = image.image;
    out.push(chunk);
  }
  return out;
}
