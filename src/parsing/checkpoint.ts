import type { Block } from './pdf-layout.js';

/**
 * One finished range of a PDF's pages (1-based, inclusive): the blocks its pages gave and the pages that could
 * not be read. A long parse stores each range as it finishes, so an attempt that ends early (a restart, a killed
 * parser process) is resumed by the next one after its last finished range rather than from page 1.
 */
export interface PageRange {
  from: number;
  to: number;
  blocks: { page: number; block: Block }[];
  unreadable: number[];
}

/** The ranges an earlier attempt finished, and where to send each range this attempt finishes. */
export interface Checkpoints {
  done: readonly PageRange[];
  save(range: PageRange): void;
}

/** The range of `size` pages that page `n` falls in (ranges are aligned, so attempts agree on them). */
export function rangeOf(n: number, size: number, pages: number): { from: number; to: number } {
  const from = Math.floor((n - 1) / size) * size + 1;
  return { from, to: Math.min(pages, from + size - 1) };
}
