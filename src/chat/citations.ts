/**
 * Citation markers `[ID:n]` inserted into a streamed answer, where n is the index of a reference chunk.
 *
 * A sentence cites the chunk whose text shares the largest part of the sentence's content words
 * (stemmed, stopwords dropped, as retrieval's term similarity does), when that share reaches
 * MIN_OVERLAP; ties cite each tied chunk, and a chunk is cited once per answer (as RAGFlow does).
 * Term overlap keeps the result deterministic and costs no model call on the request path.
 *
 * The marker goes before the sentence's closing punctuation ("… blue [ID:0]. Next …"). Text is released
 * as it arrives except a trailing run of sentence punctuation, held until the next character shows
 * whether the sentence ended, so the visible answer only ever grows at its end.
 */
import { queryTerms, tokenize } from '../retrieval/tokenizer.js';

export const MIN_OVERLAP = 0.5;
/** Sentences with fewer content words are not cited. */
export const MIN_TERMS = 2;
const MAX_CITES_PER_SENTENCE = 4;

const TERMINATORS = new Set(['.', '!', '?', ';']);
/** CJK sentence ends need no following space. */
const CJK_TERMINATORS = new Set(['。', '！', '？', '；']);
const EXISTING_MARKER = /\[ID:\d+\]/;
const FENCE = '```';

export class CitationInserter {
  private readonly chunkTerms: Set<string>[];
  private readonly cited = new Set<number>();
  private sentence = '';
  /** A run of sentence punctuation at the end of the text so far, not released yet. */
  private held = '';
  private inCode = false;
  private backticks = 0;

  constructor(chunks: { content: string }[]) {
    this.chunkTerms = chunks.map((c) => new Set(tokenize(c.content).map((t) => t.stem)));
  }

  /** Indices of the chunks cited so far, ascending. */
  citedIndices(): number[] {
    return [...this.cited].sort((a, b) => a - b);
  }

  /** Takes the next piece of the model's answer; returns the text to append to the visible answer. */
  push(text: string): string {
    const buf = this.held + text;
    this.held = '';
    let out = '';
    for (let i = 0; i < buf.length; ) {
      const c = buf[i]!;
      if (TERMINATORS.has(c) && !this.inCode) {
        let j = i;
        while (j < buf.length && TERMINATORS.has(buf[j]!)) j++;
        const run = buf.slice(i, j);
        if (j === buf.length) {
          this.held = run;
          return out;
        }
        if (/\s/.test(buf[j]!)) out += this.closeSentence() + run;
        else {
          out += run;
          this.sentence += run;
        }
        i = j;
        continue;
      }
      this.trackFence(c);
      if (!this.inCode && (CJK_TERMINATORS.has(c) || c === '\n')) out += this.closeSentence() + c;
      else {
        out += c;
        this.sentence += c;
      }
      i++;
    }
    return out;
  }

  /** The end of the answer closes its last sentence. */
  end(): string {
    const out = this.closeSentence() + this.held;
    this.held = '';
    return out;
  }

  private trackFence(c: string): void {
    this.backticks = c === '`' ? this.backticks + 1 : 0;
    if (this.backticks === FENCE.length) {
      this.inCode = !this.inCode;
      this.backticks = 0;
      this.sentence = '';
    }
  }

  /** The markers for the sentence just ended; starts a new sentence. */
  private closeSentence(): string {
    const sentence = this.sentence;
    this.sentence = '';
    if (this.inCode || EXISTING_MARKER.test(sentence)) return '';
    const terms = queryTerms(sentence).map((t) => t.stem);
    if (terms.length < MIN_TERMS) return '';
    const scores = this.chunkTerms.map((chunk) => terms.filter((t) => chunk.has(t)).length / terms.length);
    const best = Math.max(0, ...scores);
    if (best < MIN_OVERLAP) return '';
    const cites = scores
      .map((score, index) => ({ score, index }))
      .filter((s) => s.score === best && !this.cited.has(s.index))
      .slice(0, MAX_CITES_PER_SENTENCE)
      .map((s) => s.index);
    for (const i of cites) this.cited.add(i);
    return cites.map((i) => ` [ID:${i}]`).join('');
  }
}

/** Citation markers for a whole answer at once. */
export function insertCitations(answer: string, chunks: { content: string }[]): { answer: string; cited: number[] } {
  const inserter = new CitationInserter(chunks);
  const text = inserter.push(answer) + inserter.end();
  return { answer: text, cited: inserter.citedIndices() };
}
