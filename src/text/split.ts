import { countTokens, splitByTokenWindow } from './tokens.js';

/**
 * Sentences with their closing punctuation and trailing whitespace. Latin stops count only when
 * followed by whitespace (so "3.14" and "e.g.x" stay whole); CJK stops and line breaks always end one.
 */
export function splitSentences(text: string): string[] {
  return text.match(/[^]*?(?:[.!?;]+(?=\s)|[。！？；…]+|\n|$)\s*/g)?.filter((s) => s.length > 0) ?? [];
}

/** Words with their trailing whitespace; joining them gives back the text. */
export function splitWords(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? (text ? [text] : []);
}

const LEVELS = [splitSentences, splitWords];

/**
 * Cuts `text` into consecutive pieces of at most `maxTokens` tokens each, breaking at sentence ends
 * first, then between words, and only as a last resort inside a word. Pieces are as fine as the level
 * that was needed; callers pack them back into chunks. Joining the pieces gives back `text`.
 */
export function splitToFit(text: string, maxTokens: number): string[] {
  return fit(text, maxTokens, 0);
}

function fit(text: string, maxTokens: number, level: number): string[] {
  if (countTokens(text) <= maxTokens) return [text];
  for (let l = level; l < LEVELS.length; l++) {
    const parts = LEVELS[l]!(text);
    if (parts.length > 1) return parts.flatMap((p) => fit(p, maxTokens, l + 1));
  }
  return splitByTokenWindow(text, maxTokens);
}

/** Lower-cased words and numbers separated by single spaces: texts compared for the same words, punctuation aside. */
export function normaliseWords(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}
