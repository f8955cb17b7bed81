import type { ExtractedDocument, Section } from '../../parsing/types.js';
import type { ChunkDraft } from '../types.js';
import { chunkByHeadings } from '../headings.js';
import { textOptions } from '../options.js';
import { unionPositions } from '../positions.js';
import { sectionChunks } from '../sections.js';

const FALLBACK_TOKENS = 256;

const ABSTRACT_TITLE = /^\s*abstract\s*[:.]?\s*$/i;
const ABSTRACT_INLINE = /^\s*abstract\b/i;

/**
 * A paper: the front matter (title, authors, abstract) is one unit with the title on top of each of
 * its chunks; the body is then split by section titles like a manual.
 */
export function chunkPaper(doc: ExtractedDocument, config: Record<string, unknown>): ChunkDraft[] {
  const options = textOptions(config, FALLBACK_TOKENS);
  const sections = doc.sections;
  const titleIndex = sections[0]?.kind === 'title' && !isAbstract(sections[0]) ? 0 : -1;
  const title = (titleIndex === 0 ? sections[0]!.text : doc.meta.title ?? '').trim();
  const abstractIndex = sections.findIndex(isAbstract);
  const frontEnd = nextTitle(sections, abstractIndex >= 0 ? abstractIndex : titleIndex);

  const frontBody = sections.slice(titleIndex + 1, frontEnd);
  const front = sectionChunks(frontBody, { ...options, prefix: title ? [title] : [] });
  if (front.length === 0 && title) {
    const positions = titleIndex === 0 ? sections[0]!.positions : undefined;
    front.push(positions ? { content: title, positions } : { content: title });
  } else if (front[0] && titleIndex === 0 && sections[0]!.positions) {
    front[0].positions = unionPositions([sections[0]!.positions, front[0].positions]);
  }
  return [...front, ...chunkByHeadings(sections.slice(frontEnd), options)];
}

function isAbstract(section: Section): boolean {
  return section.kind === 'title' ? ABSTRACT_TITLE.test(section.text) : section.kind === 'text' && ABSTRACT_INLINE.test(section.text);
}

/** Index of the first title after `from` that is not the abstract heading; the length if none. */
function nextTitle(sections: readonly Section[], from: number): number {
  for (let i = from + 1; i < sections.length; i++) {
    if (sections[i]!.kind === 'title' && !isAbstract(sections[i]!)) return i;
  }
  return sections.length;
}
