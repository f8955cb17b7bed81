/**
 * Short lists of offenders for error messages: a request may name 10,000 ids, and an answer that
 * repeats every one of them is a body of hundreds of kilobytes nobody reads.
 */

/** How many items an error message names before it only counts the rest. */
export const SHOWN_ITEMS = 5;

/** "a; b; c … and 19,995 more": the first `shown` items, then how many were left out. */
export function summarize(items: readonly string[], separator = '; ', shown = SHOWN_ITEMS): string {
  if (items.length <= shown) return items.join(separator);
  return `${items.slice(0, shown).join(separator)} … and ${(items.length - shown).toLocaleString('en-US')} more`;
}

/** The first `shown` items, with a last entry "… and N more" when some were left out (for lists of errors in `data`). */
export function firstFew(items: readonly string[], shown = SHOWN_ITEMS): string[] {
  if (items.length <= shown) return [...items];
  return [...items.slice(0, shown), `… and ${(items.length - shown).toLocaleString('en-US')} more`];
}

/** `text` cut to at most `max` characters, saying how much was cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = ` … (cut: ${text.length.toLocaleString('en-US')} characters in all)`;
  return text.slice(0, Math.max(0, max - note.length)) + note;
}
