/**
 * The benchmark's document: `count` paragraphs of real scientific text (BEIR SciFact abstracts, as
 * bench/quality and bench/retrieval use; Zipf-distributed made-up words without it), one per line, each
 * 70–120 tokens. With `chunk_token_num` 128 and the delimiter `\n` no two lines fit in one chunk, so the
 * document parses into exactly `count` chunks of about the same size: "per 100 chunks" means the same
 * text in every run.
 */
import { beirAvailable, loadBeir } from '../quality/beir.js';
import { prng, textSource } from '../retrieval/synthetic.js';
import { countTokens } from '../../src/text/tokens.js';

export const CHUNK_TOKEN_NUM = 128;
const MIN_TOKENS = 70;
const MAX_TOKENS = 120;

/** Paragraphs: the sentences of each abstract packed, in order, into pieces of MIN..MAX tokens. */
function paragraphs(count: number, texts: Iterable<string>): string[] {
  const out: string[] = [];
  for (const text of texts) {
    let piece: string[] = [];
    let tokens = 0;
    for (const sentence of text.replace(/\s+/g, ' ').split(/(?<=\.)\s+/)) {
      const n = countTokens(sentence) + 1;
      if (n > MAX_TOKENS) continue;
      if (tokens + n > MAX_TOKENS) {
        if (tokens >= MIN_TOKENS) out.push(piece.join(' '));
        piece = [];
        tokens = 0;
      }
      piece.push(sentence);
      tokens += n;
    }
    if (tokens >= MIN_TOKENS) out.push(piece.join(' '));
    if (out.length >= count) return out.slice(0, count);
  }
  throw new Error(`the corpus has fewer than ${count} paragraphs of ${MIN_TOKENS}–${MAX_TOKENS} tokens`);
}

export function corpusName(): string {
  return beirAvailable() ? 'SciFact abstracts' : 'synthetic Zipf words (SciFact not found)';
}

/** The document's text: `count` paragraphs, one per line (one chunk each). */
export function documentText(count: number): string {
  if (beirAvailable()) return paragraphs(count, loadBeir().corpus.map((d) => d.text)).join('\n');
  const source = textSource(prng(7));
  function* synthetic() {
    for (let i = 0; ; i += 12) yield source.sentences.slice(i, i + 12).join(' ');
  }
  return paragraphs(count, synthetic()).join('\n');
}
