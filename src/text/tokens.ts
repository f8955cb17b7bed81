import { get_encoding, type Tiktoken } from 'tiktoken';

let encoder: Tiktoken | undefined;

/** The cl100k_base encoder, created on first use and kept for the life of the process. */
function cl100k(): Tiktoken {
  encoder ??= get_encoding('cl100k_base');
  return encoder;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * tiktoken's byte-pair merging is quadratic in the length of a run without breaks (a long word, a
 * base64 blob, CJK text without punctuation): 40k such characters take over 20 seconds. Long text is
 * therefore encoded in segments of at most this many characters, cut where the tokenizer itself
 * would break when possible: counts stay exact for ordinary text, and a forced cut inside a run
 * adds about one token (the two halves cannot merge).
 */
const SEGMENT_CHARS = 500;

/** Consecutive slices of `text`, each at most SEGMENT_CHARS long, that join back to `text`. */
function* segments(text: string): Generator<string> {
  let start = 0;
  while (text.length - start > SEGMENT_CHARS) {
    const window = text.slice(start, start + SEGMENT_CHARS);
    let cut = lastBreak(window);
    if (cut <= 0) cut = isLowSurrogate(text.charCodeAt(start + SEGMENT_CHARS)) ? SEGMENT_CHARS - 1 : SEGMENT_CHARS;
    yield text.slice(start, start + cut);
    start += cut;
  }
  yield text.slice(start);
}

const WORD = /[\p{L}\p{N}]/u;

/**
 * Offset of the last place where cl100k's pre-tokenizer starts a new piece anyway, 0 if none: before
 * whitespace after a letter or digit, or before a space after punctuation (punctuation keeps the line
 * breaks that follow it); failing that, before punctuation after a letter or digit (punctuation binds
 * to the letters after it, not before).
 */
function lastBreak(window: string): number {
  for (let i = window.length - 1; i > 0; i--) {
    const c = window[i]!;
    const prev = window[i - 1]!;
    if (/\s/.test(c) && (WORD.test(prev) || (!/[\r\n]/.test(c) && !/\s/.test(prev)))) return i;
  }
  for (let i = window.length - 1; i > 0; i--) {
    if (/[^\p{L}\p{N}\s]/u.test(window[i]!) && WORD.test(window[i - 1]!)) return i;
  }
  return 0;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * Number of cl100k_base tokens in `text`. This is the project's only token counter: chunk limits,
 * document token_count and prompt budgets all use it. Special-token markers such as `<|endoftext|>`
 * are counted as ordinary text instead of being rejected.
 */
export function countTokens(text: string): number {
  const enc = cl100k();
  if (text.length <= SEGMENT_CHARS) return enc.encode_ordinary(text).length;
  let total = 0;
  for (const segment of segments(text)) total += segment ? enc.encode_ordinary(segment).length : 0;
  return total;
}

/**
 * Cuts `text` into consecutive pieces of at most `maxTokens` tokens, the last resort for text with
 * no usable break. Pieces end on whole characters (a CJK character or an emoji can span several
 * tokens); concatenating the result gives back `text`.
 */
export function splitByTokenWindow(text: string, maxTokens: number): string[] {
  if (maxTokens < 1) throw new RangeError('maxTokens must be at least 1');
  const enc = cl100k();
  const out: string[] = [];
  for (const segment of segments(text)) {
    const tokens = enc.encode_ordinary(segment);
    let start = 0;
    while (start < tokens.length) {
      let end = Math.min(start + maxTokens, tokens.length);
      let piece = decodeWhole(enc, tokens, start, end);
      // Shrink until the window ends on a character boundary; if even one token is not a whole
      // character, grow instead (the piece then exceeds maxTokens by the few tokens of that character).
      while (piece === undefined && end - 1 > start) piece = decodeWhole(enc, tokens, start, --end);
      while (piece === undefined && end < tokens.length) piece = decodeWhole(enc, tokens, start, ++end);
      out.push(piece ?? new TextDecoder().decode(enc.decode(tokens.subarray(start, end))));
      start = end;
    }
  }
  return out;
}

function decodeWhole(enc: Tiktoken, tokens: Uint32Array, start: number, end: number): string | undefined {
  try {
    return strictUtf8.decode(enc.decode(tokens.subarray(start, end)));
  } catch {
    return undefined;
  }
}
