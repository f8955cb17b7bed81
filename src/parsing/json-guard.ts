import { ParseLimitError } from './errors.js';
import { LIMIT_VARIABLES } from './limits.js';

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Refuses JSON (or JSON Lines) text whose arrays and objects nest deeper than `maxDepth`, before it is
 * parsed: JSON.parse copes with any depth, but everything that walks the value afterwards recurses.
 * A linear scan that skips string contents; malformed text is left for JSON.parse to report.
 */
export function guardJsonDepth(text: string, filename: string, maxDepth: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > maxDepth) {
        throw new ParseLimitError(filename, `was refused: its JSON nests deeper than ${maxDepth} levels (limit ${maxDepth}, ${LIMIT_VARIABLES.nestingDepth})`);
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth = Math.max(0, depth - 1);
    }
  }
}
