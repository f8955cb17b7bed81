import { appendAll } from '../../arrays.js';
import type { ExtractedDocument, Section } from '../../parsing/types.js';
import { countTokens } from '../../text/tokens.js';
import type { ChunkDraft } from '../types.js';
import { mergePieces } from '../merge.js';
import { textOptions } from '../options.js';
import { linePieces, type Piece } from '../pieces.js';
import { unionPositions } from '../positions.js';
import { sectionText } from '../sections.js';

const FALLBACK_TOKENS = 256;

/** Capitalisations a heading keyword is written in: "chapter", "Chapter", "CHAPTER". */
function keyword(...words: string[]): string {
  return `(?:${words.flatMap((w) => [w, w[0]!.toUpperCase() + w.slice(1), w.toUpperCase()]).join('|')})`;
}
const NUMBER_WORDS = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const NUMERAL = `(?:[IVXLCDM]+|\\d+[A-Za-z]?|[A-Z]|${keyword(...NUMBER_WORDS)})`;
const CN = '[一二三四五六七八九十百千零〇两\\d]+';

type Named = 'title' | 'part' | 'chapter' | 'section' | 'article';

const NAMED: ReadonlyArray<[Named, RegExp[]]> = [
  ['title', [new RegExp(`^${keyword('title')}\\s+${NUMERAL}\\b`)]],
  ['part', [new RegExp(`^${keyword('part', 'book', 'division')}\\s+${NUMERAL}\\b`), new RegExp(`^第${CN}[编部]`)]],
  ['chapter', [new RegExp(`^${keyword('chapter')}\\s+${NUMERAL}\\b`), new RegExp(`^第${CN}章`)]],
  [
    'section',
    [new RegExp(`^(?:${keyword('section')}|Sec\\.|SEC\\.)\\s*\\d+[A-Za-z]?\\b`), /^§+\s*\d/, new RegExp(`^第${CN}节`)],
  ],
  ['article', [new RegExp(`^(?:${keyword('article')}\\s+${NUMERAL}|Art\\.\\s*\\d+)\\b`), new RegExp(`^第${CN}条`)]],
];
const NAMED_KINDS: ReadonlySet<string> = new Set(NAMED.map(([kind]) => kind));

/** Numbered clauses, innermost structure; a dotted number's kind carries its depth ("dotted2"). */
const CLAUSES: ReadonlyArray<[kind: (m: RegExpExecArray) => string, pattern: RegExp]> = [
  [(m) => `dotted${m[1]!.split('.').length}`, /^(\d+(?:\.\d+)+)\.?(?:\s|$)/],
  [() => 'num', /^\d{1,3}[.)](?:\s|$)/],
  [() => 'paren-num', /^[(（]\d{1,3}[)）]/],
  [() => 'paren-alpha', /^(?:\([a-z]{1,4}\)|[a-z]\)\s)/],
  [() => 'cjk-num', /^[一二三四五六七八九十]+、/],
  [() => 'cjk-paren', /^[(（][一二三四五六七八九十]+[)）]/],
];

/** The structural kind of a line, or undefined for body text. */
function classify(line: string): string | undefined {
  const text = line.trim();
  for (const [kind, patterns] of NAMED) if (patterns.some((p) => p.test(text))) return kind;
  for (const [kind, pattern] of CLAUSES) {
    const m = pattern.exec(text);
    if (m) return kind(m);
  }
  return undefined;
}

interface Line extends Piece {
  kind?: string;
  /** A caption line was already joined to this heading. */
  captioned?: boolean;
}

/**
 * Nesting of the kinds found in this document, outermost first. Titles, parts and chapters are
 * always outer, in that order.
 * Whether sections hold articles or articles hold sections differs between legal systems (EU
 * regulations vs. the US constitution), so of the two the rarer one is taken as the container.
 * Numbered clauses are innermost, in order of first appearance.
 */
function rankKinds(lines: readonly Line[]): Map<string, number> {
  const count = new Map<string, number>();
  const first = new Map<string, number>();
  lines.forEach((l, i) => {
    if (!l.kind) return;
    count.set(l.kind, (count.get(l.kind) ?? 0) + 1);
    if (!first.has(l.kind)) first.set(l.kind, i);
  });
  const present = (kinds: string[]) => kinds.filter((k) => count.has(k));
  const byFirst = (a: string, b: string) => first.get(a)! - first.get(b)!;
  const middle = present(['section', 'article']).sort((a, b) => count.get(a)! - count.get(b)! || byFirst(a, b));
  const clauses = [...count.keys()].filter((k) => !NAMED_KINDS.has(k)).sort(byFirst);
  return new Map([...present(['title', 'part', 'chapter']), ...middle, ...clauses].map((k, i) => [k, i]));
}

/**
 * Laws and regulations: the document is cut into its smallest named units (articles, sections, §;
 * or top-level numbered clauses when there are none), each chunk headed by its titles, parts and chapters
 * and its own heading line. Clauses stay inside their unit; a unit longer than chunk_token_num is
 * split at line ends and keeps its heading on every piece.
 */
export function chunkLaws(doc: ExtractedDocument, config: Record<string, unknown>): ChunkDraft[] {
  const { maxTokens } = textOptions(config, FALLBACK_TOKENS);
  const lines = toLines(doc.sections);
  const rank = rankKinds(lines);
  const namedRanks = [...rank].filter(([k]) => NAMED_KINDS.has(k)).map(([, r]) => r);
  const unitRank = namedRanks.length > 0 ? Math.max(...namedRanks) : rank.size > 0 ? 0 : Infinity;

  const out: ChunkDraft[] = [];
  const path: Line[] = [];
  let pathShown = true;
  let unit: { prefix: string[]; body: Piece[]; heading?: Line } | undefined;

  const flush = () => {
    if (!unit) return;
    const chunks = mergePieces(unit.body, { maxTokens, prefix: unit.prefix });
    if (chunks.length === 0 && unit.prefix.length > 0) chunks.push({ content: unit.prefix.join('\n') });
    const first = chunks[0];
    const positions = first && unionPositions([unit.heading?.positions, first.positions]);
    if (first && positions) first.positions = positions;
    if (chunks.length > 0) pathShown = true;
    appendAll(out, chunks);
    unit = undefined;
  };
  // A part or chapter with no unit under it (say, a repealed chapter) still becomes a chunk.
  const showPath = () => {
    const last = path[path.length - 1];
    if (!pathShown && last) {
      const content = path.map((l) => l.text.trim()).join('\n');
      out.push(last.positions ? { content, positions: last.positions } : { content });
    }
    pathShown = true;
  };

  for (const line of lines) {
    const r = line.kind === undefined ? undefined : rank.get(line.kind)!;
    if (r !== undefined && r < unitRank) {
      flush();
      const last = path[path.length - 1];
      // Only a heading that replaces the unshown one needs it shown; a subheading extends it.
      if (last && rank.get(last.kind!)! >= r) showPath();
      while (path.length > 0 && rank.get(path[path.length - 1]!.kind!)! >= r) path.pop();
      path.push(line);
      pathShown = false;
    } else if (r === unitRank) {
      flush();
      // Heading and text often share a line ("第一条 为了…", "Section 1. All legislative Powers…");
      // such a long line is body, only a short heading is repeated on every piece.
      const short = countTokens(line.text) <= maxTokens / 4;
      const prefix = path.map((l) => l.text);
      unit = short ? { prefix: [...prefix, line.text], body: [], heading: line } : { prefix, body: [line] };
    } else {
      unit ??= { prefix: path.map((l) => l.text), body: [] };
      unit.body.push(line);
    }
  }
  flush();
  showPath();
  return out;
}

/** Every non-blank line with its kind; tables stay whole as body text. */
function toLines(sections: readonly Section[]): Line[] {
  const lines = sections.flatMap((section): Line[] => {
    if (section.kind === 'table') {
      const text = sectionText(section).trim();
      return text ? [{ text, positions: section.positions, joiner: '\n' }] : [];
    }
    return linePieces(section.text, section.positions).map((p) => ({ ...p, kind: classify(p.text) }));
  });
  return attachCaptions(lines);
}

const CAPTION_MAX_CHARS = 100;

/**
 * "CHAPTER I" / "General provisions", "Article 5" / "Principles relating to…": a short line without
 * closing punctuation right under a named heading is its caption and becomes part of the heading.
 */
function attachCaptions(lines: readonly Line[]): Line[] {
  const out: Line[] = [];
  for (const line of lines) {
    const prev = out[out.length - 1];
    const text = line.text.trim();
    const caption =
      prev !== undefined &&
      line.kind === undefined &&
      NAMED_KINDS.has(prev.kind ?? '') &&
      !prev.captioned &&
      text.length <= CAPTION_MAX_CHARS &&
      !/[.;:,，。；：]$/.test(text);
    if (caption) {
      out[out.length - 1] = {
        ...prev,
        text: `${prev.text}\n${line.text}`,
        positions: unionPositions([prev.positions, line.positions]),
        captioned: true,
      };
    } else out.push(line);
  }
  return out;
}
