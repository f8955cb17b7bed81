import type { Position } from '../parsing/types.js';
import { countTokens } from '../text/tokens.js';
import { splitToFit } from '../text/split.js';
import type { ChunkDraft } from './types.js';
import type { Piece } from './pieces.js';
import { unionPositions } from './positions.js';

export interface MergeOptions {
  /** Upper bound on the tokens of each chunk's content, prefix and wrapper included. */
  maxTokens: number;
  /** Lines repeated at the top of every chunk (heading path, table caption and header). */
  prefix?: readonly string[];
  /** Text placed around each chunk's body, after the prefix (an HTML table's open and close tags). */
  wrap?: { open: string; close: string };
  /**
   * Heading-aware merging: before a heading piece, start a new chunk once the current one holds at
   * least this many tokens of non-heading text. Undefined means headings are ordinary pieces.
   */
  headingBreakTokens?: number;
}

interface Sized extends Piece {
  tokens: number;
}

/**
 * The project's one merge routine: packs pieces in order into chunks of at most `maxTokens` tokens,
 * starting a new chunk at boundaries (and at headings when asked). A piece too big for any chunk is
 * first cut at sentences, then words (see splitToFit). Chunks carry the union of their pieces'
 * positions; blank chunks are never produced.
 */
export function mergePieces(pieces: readonly Piece[], options: MergeOptions): ChunkDraft[] {
  const wrap = options.wrap ?? { open: '', close: '' };
  const prefix = fitPrefix(options.prefix ?? [], wrap, options.maxTokens);
  const head = prefix ? `${prefix}\n` : '';
  const budget = Math.max(1, options.maxTokens - countTokens(head + wrap.open + wrap.close));

  const out: ChunkDraft[] = [];
  let text = '';
  let tokens = 0;
  let bodyTokens = 0;
  let positions: Array<Position[] | undefined> = [];

  const flush = () => {
    const body = text.trim();
    if (body) out.push(withPositions(head + wrap.open + body + wrap.close, unionPositions(positions)));
    text = '';
    tokens = 0;
    bodyTokens = 0;
    positions = [];
  };

  const joinerFor = (piece: Sized) => (text && piece.joiner && !text.endsWith('\n') ? piece.joiner : '');
  for (const piece of sized(pieces, budget)) {
    const headingBreak =
      piece.heading === true &&
      options.headingBreakTokens !== undefined &&
      bodyTokens > 0 &&
      bodyTokens >= options.headingBreakTokens;
    const cost = piece.tokens + (joinerFor(piece) ? 1 : 0);
    if (text && (piece.boundary || headingBreak || tokens + cost > budget)) flush();
    const joiner = joinerFor(piece);
    text += joiner + piece.text;
    tokens += piece.tokens + (joiner ? 1 : 0);
    if (!piece.heading) bodyTokens += piece.tokens;
    positions.push(piece.positions);
  }
  flush();
  return out;
}

/** Measures pieces, cuts the oversized ones, drops blank ones (passing their boundary on). */
function* sized(pieces: readonly Piece[], budget: number): Generator<Sized> {
  let boundary = false;
  for (const piece of pieces) {
    boundary ||= piece.boundary === true;
    if (!piece.text.trim()) continue;
    const tokens = countTokens(piece.text);
    const parts = tokens <= budget ? [piece.text] : splitToFit(piece.text, budget);
    for (let i = 0; i < parts.length; i++) {
      const first = i === 0;
      yield {
        ...piece,
        text: parts[i]!,
        joiner: first ? piece.joiner : '',
        boundary: first ? boundary : false,
        tokens: parts.length === 1 ? tokens : countTokens(parts[i]!),
      };
    }
    boundary = false;
  }
}

/**
 * Joins the prefix lines, dropping the outermost ones while the prefix would take more than half of
 * a chunk, so that every chunk keeps room for its own text.
 */
function fitPrefix(lines: readonly string[], wrap: { open: string; close: string }, maxTokens: number): string {
  let kept = lines.map((l) => l.trim()).filter((l) => l.length > 0);
  const wrapTokens = countTokens(wrap.open + wrap.close);
  while (kept.length > 0 && countTokens(kept.join('\n') + '\n') + wrapTokens > maxTokens / 2) kept = kept.slice(1);
  return kept.join('\n');
}

function withPositions(content: string, positions: Position[] | undefined): ChunkDraft {
  return positions ? { content, positions } : { content };
}
