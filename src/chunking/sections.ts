import { appendAll } from '../arrays.js';
import type { Section } from '../parsing/types.js';
import type { ChunkDraft } from './types.js';
import { mergePieces } from './merge.js';
import type { TextOptions } from './options.js';
import { textPieces, type Piece } from './pieces.js';
import { tableChunks, tableText } from './tables.js';

export interface SectionChunkOptions extends TextOptions {
  /** Lines repeated at the top of every chunk (a heading path). */
  prefix?: readonly string[];
  /** See MergeOptions.headingBreakTokens. */
  headingBreakTokens?: number;
}

/**
 * The section walker shared by naive, book, manual, paper and email: text, titles and code are split
 * on the delimiters and merged by tokens; each table and each image becomes chunks of its own, in
 * document order.
 */
export function sectionChunks(sections: readonly Section[], options: SectionChunkOptions): ChunkDraft[] {
  const merge = { maxTokens: options.maxTokens, prefix: options.prefix, headingBreakTokens: options.headingBreakTokens };
  const out: ChunkDraft[] = [];
  let pending: Piece[] = [];
  const flush = () => {
    appendAll(out, mergePieces(pending, merge));
    pending = [];
  };

  for (const section of sections) {
    switch (section.kind) {
      case 'table':
        flush();
        appendAll(out, tableChunks(section, { maxTokens: options.maxTokens, html: options.html4excel, prefix: options.prefix }));
        break;
      case 'image': {
        flush();
        const chunks = mergePieces(textPieces(section.text, section.positions, options.delimiters), merge);
        if (chunks[0] && section.image) chunks[0].image = section.image;
        appendAll(out, chunks);
        break;
      }
      case 'code':
        // Code is kept whole where it fits; delimiters meant for prose would cut statements apart.
        pending.push({ text: section.text, positions: section.positions, joiner: '\n' });
        break;
      case 'title':
      case 'text':
        appendAll(pending, textPieces(section.text, section.positions, options.delimiters, section.kind === 'title'));
        break;
    }
  }
  flush();
  return out;
}

/** Plain text of any section: tables as " | " lines, everything else as is. */
export function sectionText(section: Section): string {
  return section.kind === 'table' ? tableText(section) : section.text;
}

/** The non-blank texts of the sections, one per line. */
export function joinSectionTexts(sections: readonly Section[]): string {
  return sections
    .map((s) => sectionText(s).trim())
    .filter((t) => t.length > 0)
    .join('\n');
}
