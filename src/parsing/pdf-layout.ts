import { joinLines } from './text.js';

/**
 * Turns positioned text runs of one PDF page into lines and paragraphs. Coordinates are PDF points with
 * y growing downwards from the top of the page. Pure geometry: no pdfjs types here.
 */

/** One text run as the PDF draws it. */
export interface TextRun {
  text: string;
  x: number;
  baseline: number;
  width: number;
  /** Font size in points (0 for runs recognised by OCR). */
  size: number;
  /** The producer ended the line after this run. */
  eol: boolean;
}

export interface Box {
  x0: number;
  x1: number;
  top: number;
  bottom: number;
}

export interface Line extends Box {
  text: string;
  size: number;
}

export interface Block extends Box {
  text: string;
  size: number;
  lines: number;
}

// Typical Latin font metrics: glyph boxes span 0.8 em above the baseline and 0.2 em below.
const ASCENT = 0.8;
const DESCENT = 0.2;

/** Runs on (about) the same baseline and moving right form a line; pdfjs's end-of-line marks close one. */
export function groupLines(runs: TextRun[]): Line[] {
  const lines: Line[] = [];
  let current: (Line & { baseline: number; spaceDue: boolean }) | undefined;
  const close = (): void => {
    if (current && current.text.trim() !== '') lines.push({ ...current, text: current.text.trim() });
    current = undefined;
  };

  for (const run of runs) {
    if (run.text.trim() === '') {
      if (current) current.spaceDue = true;
      if (run.eol) close();
      continue;
    }
    const tolerance = 0.5 * Math.max(run.size, current?.size ?? 0);
    const sameLine =
      current !== undefined &&
      Math.abs(run.baseline - current.baseline) <= tolerance &&
      run.x >= current.x1 - tolerance;
    if (current && sameLine) {
      const gap = run.x - current.x1;
      const needsSpace = current.spaceDue || gap > 0.15 * Math.min(run.size, current.size);
      if (needsSpace && !/\s$/.test(current.text) && !/^\s/.test(run.text)) current.text += ' ';
      current.text += run.text;
      current.x1 = Math.max(current.x1, run.x + run.width);
      current.top = Math.min(current.top, run.baseline - ASCENT * run.size);
      current.bottom = Math.max(current.bottom, run.baseline + DESCENT * run.size);
      current.size = Math.max(current.size, run.size);
      current.spaceDue = false;
    } else {
      close();
      current = {
        text: run.text,
        x0: run.x,
        x1: run.x + run.width,
        top: run.baseline - ASCENT * run.size,
        bottom: run.baseline + DESCENT * run.size,
        size: run.size,
        baseline: run.baseline,
        spaceDue: false,
      };
    }
    if (run.eol) close();
  }
  close();
  return lines;
}

/**
 * Consecutive lines form a paragraph while the font size stays the same, each line sits just below the
 * previous one (gap under 0.6 em) and they overlap horizontally.
 */
export function groupBlocks(lines: Line[]): Block[] {
  const blocks: Block[] = [];
  let last: Line | undefined;
  for (const line of lines) {
    const block = blocks[blocks.length - 1];
    const continues =
      block !== undefined &&
      last !== undefined &&
      Math.abs(line.size - last.size) <= 0.15 * Math.max(line.size, last.size) &&
      line.top > last.top &&
      line.top - last.bottom <= 0.6 * last.size &&
      line.x0 < block.x1 &&
      line.x1 > block.x0;
    if (continues) {
      block.text = joinLines(block.text, line.text);
      block.x0 = Math.min(block.x0, line.x0);
      block.x1 = Math.max(block.x1, line.x1);
      block.bottom = Math.max(block.bottom, line.bottom);
      block.lines += 1;
    } else {
      blocks.push({ text: line.text, x0: line.x0, x1: line.x1, top: line.top, bottom: line.bottom, size: line.size, lines: 1 });
    }
    last = line;
  }
  return blocks;
}

const sizeKey = (size: number): number => Math.round(size * 2) / 2;

/** The font size carrying most characters: the body text size of the document. */
export function bodySize(blocks: Block[]): number {
  const chars = new Map<number, number>();
  for (const b of blocks) if (b.size > 0) chars.set(sizeKey(b.size), (chars.get(sizeKey(b.size)) ?? 0) + b.text.length);
  let best = 0;
  let bestChars = -1;
  for (const [size, count] of chars) {
    if (count > bestChars) [best, bestChars] = [size, count];
  }
  return best;
}

const MAX_TITLE_CHARS = 150;

/**
 * Heading level per block (undefined for body text): short blocks set at least 1.2x the body size are
 * titles, the largest size being level 1.
 */
export function titleLevels(blocks: Block[]): (number | undefined)[] {
  const body = bodySize(blocks);
  const isTitle = (b: Block): boolean =>
    body > 0 && b.size >= body * 1.2 && b.lines <= 3 && b.text.length <= MAX_TITLE_CHARS && /\p{L}/u.test(b.text);
  const sizes = [...new Set(blocks.filter(isTitle).map((b) => sizeKey(b.size)))].sort((a, b) => b - a);
  return blocks.map((b) => (isTitle(b) ? Math.min(sizes.indexOf(sizeKey(b.size)) + 1, 6) : undefined));
}
