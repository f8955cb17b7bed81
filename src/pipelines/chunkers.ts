/**
 * The pipeline's chunkers over a parsed document: TokenChunker (RAGFlow's token chunker, old name Splitter)
 * and TitleChunker (by heading, old name HierarchicalMerger). Pure.
 */
import type { ExtractedDocument, Section } from '../parsing/types.js';
import type { ChunkDraft } from '../chunking/types.js';
import { chunkDocument } from '../chunking/index.js';
import { sectionText } from '../chunking/sections.js';
import { unionPositions } from '../chunking/positions.js';
import { countTokens, splitByTokenWindow } from '../text/tokens.js';
import { PipelinePlanError } from './plan.js';

const strings = (value: unknown): string[] => (typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.length > 0) : []);

/** RAGFlow's delimiter string from a list: one character stands alone, a longer one is wrapped in backticks. */
function delimiterSpec(list: string[]): string {
  return list.map((d) => ([...d].length === 1 ? d : `\`${d}\``)).join('');
}

/**
 * TokenChunker: the General (naive) chunk method with the component's settings: chunk_token_size tokens per
 * chunk, cut at the delimiters (none given: at new lines, as General); children_delimiters cut each chunk into
 * searched children that return their parent (General's parent_child); overlapped_percent starts each chunk
 * with that share of the previous chunk's end; delimiter_mode "one" keeps the document as one chunk.
 */
export function tokenChunk(doc: ExtractedDocument, params: Record<string, unknown>, filename: string): ChunkDraft[] {
  if (params.delimiter_mode === 'one') return chunkDocument(doc, 'one', {}, { filename });
  const delimiters = strings(params.delimiters);
  const children = strings(params.children_delimiters);
  const size = typeof params.chunk_token_size === 'number' ? params.chunk_token_size : 512;
  const config: Record<string, unknown> = {
    chunk_token_num: size,
    delimiter: delimiters.length ? delimiterSpec(delimiters) : '\n',
    table_context_size: params.table_context_size ?? 0,
    image_context_size: params.image_context_size ?? 0,
    ...(children.length ? { parent_child: { use_parent_child: true, children_delimiter: delimiterSpec(children) } } : {}),
  };
  const drafts = chunkDocument(doc, 'naive', config, { filename });
  const overlap = typeof params.overlapped_percent === 'number' ? params.overlapped_percent : 0;
  return overlap > 0 ? withOverlap(drafts, overlap, size) : drafts;
}

/** Each chunk after the first starts with the last `share` of the previous chunk's tokens (at most `size`). */
function withOverlap(drafts: ChunkDraft[], share: number, size: number): ChunkDraft[] {
  return drafts.map((d, i) => {
    const prev = i > 0 ? drafts[i - 1]! : undefined;
    if (!prev || d.image || prev.image) return d;
    const take = Math.min(size, Math.floor(countTokens(prev.content) * share));
    if (take <= 0) return d;
    const pieces = splitByTokenWindow(prev.content, Math.max(1, Math.ceil(countTokens(prev.content) - take)));
    const tail = pieces.length > 1 ? pieces.slice(1).join('') : '';
    return tail ? { ...d, content: `${tail}${d.content}` } : d;
  });
}

/** A section's heading level under the chosen patterns: 1 for the first pattern, ...; 0 for body text. */
type Leveled = { section: Section; level: number };

/**
 * The pattern group (one list of `levels`) matching the most section first lines, RAGFlow's choice when a
 * document has no outline; a heading the parser recognised (a title section) counts at its own level.
 */
function levelSections(sections: Section[], groups: string[][]): Leveled[] {
  const compiled = groups.map((group, g) =>
    group.map((pattern, i) => {
      try {
        return new RegExp(pattern);
      } catch (err) {
        throw new PipelinePlanError(`TitleChunker levels[${g}][${i}] '${pattern}' is not a regular expression: ${(err as Error).message}`);
      }
    }),
  );
  const firstLine = (s: Section) => sectionText(s).trimStart().split('\n', 1)[0] ?? '';
  const levelIn = (patterns: RegExp[], s: Section) => {
    if (s.kind === 'table' || s.kind === 'image') return 0;
    const i = patterns.findIndex((re) => re.test(firstLine(s)));
    return i < 0 ? 0 : i + 1;
  };
  let best = compiled[0] ?? [];
  let bestHits = -1;
  for (const patterns of compiled) {
    const hits = sections.filter((s) => levelIn(patterns, s) > 0).length;
    if (hits > bestHits) [best, bestHits] = [patterns, hits];
  }
  return sections.map((section) => {
    const matched = levelIn(best, section);
    return { section, level: matched || (section.kind === 'title' && section.level ? section.level : 0) };
  });
}

/** The `hierarchy`-th heading level present in the document (RAGFlow's target level), or none when it has no heading. */
function targetLevel(leveled: Leveled[], hierarchy: number): number | undefined {
  const levels = [...new Set(leveled.map((l) => l.level).filter((l) => l > 0))].sort((a, b) => a - b);
  return levels.length ? levels[Math.min(Math.max(1, hierarchy), levels.length) - 1] : undefined;
}

interface HeadingNode {
  level: number;
  heading?: Section;
  body: Section[];
  children: HeadingNode[];
}

/** Tables and images are chunks of their own; the text between them is chunked by its headings. */
function textRuns(leveled: Leveled[]): (Leveled[] | Section)[] {
  const runs: (Leveled[] | Section)[] = [];
  for (const item of leveled) {
    if (item.section.kind === 'table' || item.section.kind === 'image') runs.push(item.section);
    else if (Array.isArray(runs[runs.length - 1])) (runs[runs.length - 1] as Leveled[]).push(item);
    else runs.push([item]);
  }
  return runs;
}

/**
 * TitleChunker. Headings are the section first lines matching `levels` (or sections the parser read as titles).
 * Method "hierarchy": headings down to the `hierarchy`-th level present make a tree; with
 * `include_heading_content` false (RAGFlow's default) each deepest heading is a chunk holding the headings and
 * text above it, else each heading with text is a chunk of its heading path and its own text. Method "group":
 * the text is cut where a heading at or above that level starts, a group under 32 tokens joining the next.
 * `chunk_token_cap` (not 0 or null) cuts a longer chunk into pieces of at most that many tokens.
 */
export function titleChunk(doc: ExtractedDocument, params: Record<string, unknown>): ChunkDraft[] {
  const groups = Array.isArray(params.levels) ? params.levels.map(strings) : [];
  const hierarchy = typeof params.hierarchy === 'number' ? params.hierarchy : 1;
  const cap = typeof params.chunk_token_cap === 'number' && params.chunk_token_cap > 0 ? params.chunk_token_cap : undefined;
  const out: Section[][] = [];
  for (const run of textRuns(levelSections(doc.sections, groups))) {
    if (!Array.isArray(run)) out.push([run]);
    else if (params.method === 'group') out.push(...groupRun(run, targetLevel(run, hierarchy)));
    else out.push(...hierarchyRun(run, targetLevel(run, hierarchy), params.include_heading_content === true));
  }
  return out.flatMap((sections) => draftsOf(sections, cap)).filter((d) => d.content.trim().length > 0);
}

function hierarchyRun(run: Leveled[], depth: number | undefined, includeHeadingContent: boolean): Section[][] {
  if (depth === undefined) return [run.map((l) => l.section)];
  const root: HeadingNode = { level: 0, body: [], children: [] };
  const stack = [root];
  for (const { section, level } of run) {
    if (level === 0 || level > depth) {
      stack[stack.length - 1]!.body.push(section);
      continue;
    }
    while (stack.length > 1 && level <= stack[stack.length - 1]!.level) stack.pop();
    const node: HeadingNode = { level, heading: section, body: [], children: [] };
    stack[stack.length - 1]!.children.push(node);
    stack.push(node);
  }
  const chunks: Section[][] = [];
  if (root.body.length) chunks.push(root.body);
  const visit = (node: HeadingNode, above: Section[]) => {
    const own = [...above, node.heading!];
    let passed: Section[];
    if (includeHeadingContent) {
      if (node.body.length) chunks.push([...own, ...node.body]);
      else if (!node.children.length) chunks.push(own);
      passed = own;
    } else {
      passed = [...own, ...node.body];
      if (!node.children.length) chunks.push(passed);
    }
    for (const child of node.children) visit(child, passed);
  };
  for (const child of root.children) visit(child, []);
  return chunks;
}

const MIN_GROUP_TOKENS = 32;

function groupRun(run: Leveled[], target: number | undefined): Section[][] {
  const chunks: Section[][] = [];
  let tokens = 0;
  for (const [i, { section, level }] of run.entries()) {
    const startsSection = target !== undefined && level > 0 && level <= target && i > 0;
    if (chunks.length && (!startsSection || tokens < MIN_GROUP_TOKENS)) {
      chunks[chunks.length - 1]!.push(section);
      tokens += countTokens(section.text);
    } else {
      chunks.push([section]);
      tokens = countTokens(section.text);
    }
  }
  return chunks;
}

function draftsOf(sections: Section[], cap: number | undefined): ChunkDraft[] {
  const image = sections.length === 1 ? sections[0]!.image : undefined;
  const content = sections.map(sectionText).join('\n').trim();
  const positions = unionPositions(sections.map((s) => s.positions));
  const pieces = cap && countTokens(content) > cap ? splitByTokenWindow(content, cap) : [content];
  return pieces.map((piece) => ({ content: piece, ...(positions ? { positions } : {}), ...(image ? { image } : {}) }));
}
