import { get_encoding, type Tiktoken } from 'tiktoken';

let encoder: Tiktoken | undefined;

/** The cl100k_base encoder, created on first use and kept for the life of the process. */
function cl100k(): Tiktoken {
  encoder ??= get_encoding('cl100k_base');
  return encoder;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Number of cl100k_base tokens in `text`. This is the project's only token counter: chunk limits,
 * document token_count and prompt budgets all use it. Special-token markers such as `<|endoftext|>`
 * are counted as ordinary text instead of being rejected.
 */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  return cl100k().encode_ordinary(text).length;
}

/**
 * Cuts `text` into consecutive windows of at most `maxTokens` tokens, the last resort for text with no
 * usable break. Window edges are moved so that no character is cut in half (a CJK character or an emoji
 * can span several tokens); concatenating the result gives back `text`.
 */
export function splitByTokenWindow(text: string, maxTokens: number): string[] {
  if (maxTokens < 1) throw new RangeError('maxTokens must be at least 1');
  const enc = cl100k();
  const tokens = enc.encode_ordinary(text);
  const out: string[] = [];
  let start = 0;
  while (start < tokens.length) {
    let end = Math.min(start + maxTokens, tokens.length);
    let piece = decodeWhole(enc, tokens, start, end);
    // Shrink until the window ends on a character boundary; if even one token is not a whole
    // character, grow instead (the window then exceeds maxTokens by the few tokens of that character).
    while (piece === undefined && end - 1 > start) piece = decodeWhole(enc, tokens, start, --end);
    while (piece === undefined && end < tokens.length) piece = decodeWhole(enc, tokens, start, ++end);
    if (piece === undefined) piece = new TextDecoder().decode(enc.decode(tokens.subarray(start, end)));
    out.push(piece);
    start = end;
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
