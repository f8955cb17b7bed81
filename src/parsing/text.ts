const SAMPLE = 8192;

// Windows-1252 differs from Latin-1 only in 0x80-0x9F (Node's TextDecoder treats the two as one).
const CP1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

function decodeWindows1252(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte >= 0x80 && byte <= 0x9f ? CP1252_HIGH[byte - 0x80] : String.fromCharCode(byte);
  return out;
}

/**
 * Bytes of a text file as a string: BOM-aware, UTF-8 when valid, else Windows-1252 (the usual
 * encoding of legacy exports). Throws on binary content so it is reported as a bad file.
 */
export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  if (bytes.subarray(0, SAMPLE).includes(0)) throw new Error('the file holds binary data, not text');
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return decodeWindows1252(bytes);
  }
}

/** Blocks separated by blank lines, trimmed, empty ones dropped. */
export function splitParagraphs(text: string): string[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((p) => p.replace(/[ \t]+$/gm, '').trim())
    .filter((p) => p.length > 0);
}

/** Collapses runs of whitespace (including non-breaking spaces) to one space. */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Joins a wrapped line to the text before it, undoing end-of-line hyphenation ("infor-" + "mation"). */
export function joinLines(previous: string, next: string): string {
  if (/\p{L}-$/u.test(previous) && /^\p{Ll}/u.test(next)) return previous.slice(0, -1) + next;
  return `${previous} ${next}`;
}
