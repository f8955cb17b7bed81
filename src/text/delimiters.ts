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
  const set = new Set(single);
  const chars = Array.from(text);
  const out: string[] = [];
  let piece = '';
  for (let i = 0; i < chars.length; i++) {
    piece += chars[i];
    if (set.has(chars[i]!) && !set.has(chars[i + 1] ?? '')) {
      out.push(piece);
      piece = '';
    }
  }
  if (piece) out.push(piece);
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
