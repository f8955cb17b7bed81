import { appendAll } from '../arrays.js';
import type { Position, Section } from '../parsing/types.js';
import type { ChunkDraft } from './types.js';
import { unionPositions } from './positions.js';
import { sectionChunks, type SectionChunkOptions } from './sections.js';

/** Sections under one heading, with the titles above it from the top level down. */
export interface HeadingGroup {
  path: string[];
  /** Where the group's own heading is, so that the group's first chunk points at it too. */
  headingPositions?: Position[];
  body: Section[];
}

/**
 * Heading level: the title's own level, else the depth of a leading "1.2.3" numbering, else 1.
 */
export function headingLevel(section: Section): number {
  if (section.level !== undefined && section.level >= 1) return section.level;
  const numbering = /^\s*(\d+(?:\.\d+)*)\.?\s+\S/.exec(section.text);
  return numbering ? numbering[1]!.split('.').length : 1;
}

/** Groups sections by the heading hierarchy: every title opens a group under its ancestors. */
export function groupByHeadings(sections: readonly Section[]): HeadingGroup[] {
  const stack: Array<{ level: number; text: string }> = [];
  const groups: HeadingGroup[] = [{ path: [], body: [] }];
  for (const section of sections) {
    const text = section.text.trim();
    if (section.kind !== 'title' || !text) {
      groups[groups.length - 1]!.body.push(section);
      continue;
    }
    const level = headingLevel(section);
    while (stack.length > 0 && stack[stack.length - 1]!.level >= level) stack.pop();
    stack.push({ level, text });
    groups.push({ path: stack.map((h) => h.text), headingPositions: section.positions, body: [] });
  }
  return groups;
}

/**
 * Chunks each heading group on its own with its heading path on top of every chunk. A heading with
 * no text of its own becomes a chunk only when no subheading follows it, so no title is lost and
 * none is repeated needlessly.
 */
export function chunkByHeadings(sections: readonly Section[], options: SectionChunkOptions): ChunkDraft[] {
  const groups = groupByHeadings(sections);
  const out: ChunkDraft[] = [];
  groups.forEach((group, i) => {
    const chunks = sectionChunks(group.body, { ...options, prefix: [...(options.prefix ?? []), ...group.path] });
    if (chunks.length === 0) {
      const next = groups[i + 1];
      const extended = next && next.path.length > group.path.length && group.path.every((t, k) => next.path[k] === t);
      if (group.path.length > 0 && !extended) {
        const content = [...(options.prefix ?? []), ...group.path].join('\n');
        out.push(group.headingPositions ? { content, positions: group.headingPositions } : { content });
      }
      return;
    }
    const first = chunks[0]!;
    const positions = unionPositions([group.headingPositions, first.positions]);
    if (positions) first.positions = positions;
    appendAll(out, chunks);
  });
  return out;
}
