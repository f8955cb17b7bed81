/**
 * Spots a generation that has fallen into a loop: the same piece of text over and over at its end
 * ("The answer is: The hut sleeps twelve. The answer is: The hut sleeps twelve. …", "11:11, 11:11, …",
 * "9999…"). A tiny model that starts such a loop never leaves it; without this it runs on to max_tokens
 * (1,024 tokens at the generation speed bench/llm/run.ts measures), so the built-in chat engine stops the generation when it is seen.
 */

/** Longest repeated piece looked for, in characters (a loop of two long sentences still fits). */
const MAX_PERIOD = 300;
/** A loop is the piece at least this many times in a row… */
const MIN_REPEATS = 3;
/** …over at least this many characters (short runs, such as "| --- | --- |" or "...", are fine). */
const MIN_SPAN = 100;

/**
 * Whether `text` ends with one piece repeated MIN_REPEATS times or more, spanning MIN_SPAN characters
 * or more: for some period p, every character of the last span equals the one p characters before it.
 */
export function endsInLoop(text: string): boolean {
  const n = text.length;
  for (let p = 1; p <= MAX_PERIOD && p * MIN_REPEATS <= n; p++) {
    const span = Math.max(p * MIN_REPEATS, MIN_SPAN);
    if (span > n) break;
    let i = n - 1;
    while (i >= n - span + p && text.charCodeAt(i) === text.charCodeAt(i - p)) i--;
    if (i < n - span + p) return true;
  }
  return false;
}

/** Follows a generation chunk by chunk; `push` tells when it has fallen into a loop. */
export class RepetitionGuard {
  private text = '';

  /** Adds generated text; true once the text ends in a loop. */
  push(chunk: string): boolean {
    this.text += chunk;
    // Only the tail matters: a loop is at most MAX_PERIOD x MIN_REPEATS characters long to be seen.
    const keep = Math.max(MAX_PERIOD * MIN_REPEATS, MIN_SPAN);
    if (this.text.length > 2 * keep) this.text = this.text.slice(-keep);
    return endsInLoop(this.text);
  }
}
