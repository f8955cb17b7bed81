/**
 * RAGFlow delimiter strings: every character is a delimiter on its own, except text wrapped in
 * backticks, which is one multi-character delimiter. "\n!?;。；！？`##`" means newline, !, ?, ;, the CJK
 * stops, and "##".
 */
export interface Delimiters {
  /** Single-character delimiters; they stay attached to the text before them. */
  single: string[];
  /** Backtick-quoted delimiters; they are hard boundaries and are removed from the text. */
  custom: string[];
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\' };

/**
 * Parses a delimiter string. Escape sequences typed literally in a form (`\n`, `\t`, `\r`, `\\`) mean the
 * control character, as RAGFlow's text parser decodes them.
 */
export function parseDelimiters(spec: string): Delimiters {
  const single = new Set<string>();
  const custom = new Set<string>();
  let rest = '';
  let last = 0;
  for (const m of spec.matchAll(/`([^`]+)`/g)) {
    rest += spec.slice(last, m.index);
    custom.add(unescape(m[1]!));
    last = m.index + m[0].length;
  }
  rest += spec.slice(last);
  for (const ch of unescape(rest)) single.add(ch);
  return {
    single: [...single],
    // Longest first, so that "###" wins over "##" at the same place.
    custom: [...custom].filter((d) => d.length > 0).sort((a, b) => b.length - a.length),
  };
}

function unescape(text: string): string {
  return text.replace(/\\([ntr\\])/g, (_, c: string) => ESCAPES[c]!);
}

/**
 * Splits on single-character delimiters, keeping each delimiter at the end of the piece it closes, so
 * that joining the pieces gives back `text`. Runs of delimiters ("?!", "\n\n") stay together.
 */
export function splitKeepingDelimiters(text: string, single: readonly string[]): string[] {
  if (text.length === 0) return [];
  // Code points, not UTF-16 units; each piece is one slice of `text`. (Adding a piece up a character at a time
  // kept every piece as a chain of one-character strings, ~35 bytes of heap per byte of text.)
  const delimiter = new Set(single.filter((d) => d.length > 0 && d.length === String.fromCodePoint(d.codePointAt(0)!).length).map((d) => d.codePointAt(0)!));
  const isDelimiterAt = (i: number) => i < text.length && delimiter.has(text.codePointAt(i)!);
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; ) {
    const next = i + (text.codePointAt(i)! > 0xffff ? 2 : 1);
    if (isDelimiterAt(i) && !isDelimiterAt(next)) {
      out.push(text.slice(start, next));
      start = next;
    }
    i = next;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

/** Splits on multi-character delimiters, dropping them: the segments between are what remains. */
export function splitOnCustomDelimiters(text: string, custom: readonly string[]): string[] {
  if (custom.length === 0) return [text];
  const pattern = new RegExp(custom.map(escapeRegExp).join('|'), 'g');
  return text.split(pattern);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
