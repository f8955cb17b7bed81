import type { Position } from '../parsing/types.js';
import { splitKeepingDelimiters, splitOnCustomDelimiters, type Delimiters } from '../text/delimiters.js';

/** A unit of text the merger packs into chunks. */
export interface Piece {
  text: string;
  positions?: Position[];
  /** Put between this piece and the previous one when both land in the same chunk. */
  joiner: string;
  /** Start a new chunk here: a backtick delimiter stood before this piece. */
  boundary?: boolean;
  /** A heading; heading-aware merging prefers to start a chunk with it. */
  heading?: boolean;
}

/**
 * Splits one section's text on the configured delimiters. The first piece is joined to the previous
 * section by a newline; later pieces follow their neighbour directly, since each keeps its own
 * delimiter. After a backtick delimiter the next piece starts a new chunk.
 */
export function textPieces(
  text: string,
  positions: Position[] | undefined,
  delimiters: Delimiters,
  heading = false,
): Piece[] {
  const out: Piece[] = [];
  splitOnCustomDelimiters(text, delimiters.custom).forEach((segment, i) => {
    let first = true;
    for (const part of splitKeepingDelimiters(segment, delimiters.single)) {
      out.push({
        text: part,
        positions,
        joiner: out.length === 0 ? '\n' : '',
        boundary: i > 0 && first ? true : undefined,
        heading: heading || undefined,
      });
      first = false;
    }
    // A boundary with nothing after it in this segment still separates what comes before from after.
    if (i > 0 && first) out.push({ text: '', positions, joiner: '', boundary: true });
  });
  return out;
}

/** Each line of `text` as a piece joined by newlines; used where lines, not sentences, are the unit. */
export function linePieces(text: string, positions: Position[] | undefined): Piece[] {
  return text
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => ({ text: line, positions, joiner: '\n' }));
}
