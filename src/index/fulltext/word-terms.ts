/**
 * The words of texts as term numbers, for building posting lists: each distinct normalised word is
 * stemmed once, and the words of 7-bit text are looked up straight from the text's characters in an
 * open-addressing table, without a string per word (a Map look-up of a fresh substring costs several
 * times more, and the build looks up every word of every chunk).
 */
import { indexedWords, stemOf } from '../../retrieval/tokenizer.js';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function isWordCode(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}

export class WordTerms {
  /** Stem → term. */
  readonly terms = new Map<string, number>();
  /** Open addressing, two entries per slot: word number (-1 = empty) and the word's hash. Half empty at most. */
  private slots = new Int32Array(1 << 15).fill(-1);
  private readonly words: string[] = [];
  private readonly hashes: number[] = [];
  private readonly termOfWord: number[] = [];

  /** Calls `onTerm` with the term of every word of the text, in order; returns the number of words. */
  forEachTerm(text: string, onTerm: (term: number) => void): number {
    const n = text.length;
    let count = 0;
    let start = -1;
    let h = FNV_OFFSET;
    for (let i = 0; i <= n; i++) {
      let c = i < n ? text.charCodeAt(i) : 32;
      if (c >= 128) {
        // A stretch with other characters, up to the next ASCII separator (a separator for both tokenizers):
        // split and folded as the tokenizer does for any script (FTS5 unicode61's rules: tokenizer.ts).
        const from = start >= 0 ? start : i;
        let to = i + 1;
        while (to < n) {
          const d = text.charCodeAt(to);
          if (d < 128 && !isWordCode(d < 65 || d > 90 ? d : d + 32)) break;
          to++;
        }
        for (const word of indexedWords(text.slice(from, to))) {
          let wh = FNV_OFFSET;
          for (let k = 0; k < word.length; k++) wh = Math.imul(wh ^ word.charCodeAt(k), FNV_PRIME);
          onTerm(this.termAt(word, 0, word.length, wh));
          count++;
        }
        start = -1;
        i = to - 1;
        continue;
      }
      if (c >= 65 && c <= 90) c += 32;
      if (isWordCode(c)) {
        if (start < 0) {
          start = i;
          h = FNV_OFFSET;
        }
        h = Math.imul(h ^ c, FNV_PRIME);
      } else if (start >= 0) {
        onTerm(this.termAt(text, start, i, h));
        count++;
        start = -1;
      }
    }
    return count;
  }

  /** The term of the word s[start..end) (ASCII letters compared lowercased) whose hash is `h`, adding the word when new. */
  private termAt(s: string, start: number, end: number, h: number): number {
    const { slots } = this;
    const mask = (slots.length >>> 1) - 1;
    const length = end - start;
    for (let at = h & mask; ; at = (at + 1) & mask) {
      const w = slots[2 * at]!;
      if (w < 0) break;
      if (slots[2 * at + 1] !== h) continue;
      const word = this.words[w]!;
      if (word.length !== length) continue;
      let same = true;
      for (let i = 0; i < length; i++) {
        const c = s.charCodeAt(start + i);
        if (word.charCodeAt(i) !== (c >= 65 && c <= 90 ? c + 32 : c)) {
          same = false;
          break;
        }
      }
      if (same) return this.termOfWord[w]!;
    }
    const word = s.slice(start, end).toLowerCase();
    const stem = stemOf(word);
    let term = this.terms.get(stem);
    if (term === undefined) {
      term = this.terms.size;
      this.terms.set(stem, term);
    }
    this.words.push(word);
    this.hashes.push(h);
    this.termOfWord.push(term);
    if (4 * this.words.length > this.slots.length) this.rehash();
    else this.place(this.words.length - 1);
    return term;
  }

  private place(w: number): void {
    const mask = (this.slots.length >>> 1) - 1;
    let at = this.hashes[w]! & mask;
    while (this.slots[2 * at]! >= 0) at = (at + 1) & mask;
    this.slots[2 * at] = w;
    this.slots[2 * at + 1] = this.hashes[w]!;
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2).fill(-1);
    for (let w = 0; w < this.words.length; w++) this.place(w);
  }
}
