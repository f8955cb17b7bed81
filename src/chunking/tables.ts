import type { Section } from '../parsing/types.js';
import type { ChunkDraft } from './types.js';
import { mergePieces } from './merge.js';
import type { Piece } from './pieces.js';

/** Cells of a table section: its rows, or its " | "-rendered text read back when rows are absent. */
export function tableRows(section: Section): string[][] {
  const rows = section.rows?.length
    ? section.rows
    : section.text
        .split('\n')
        .filter((line) => line.trim().length > 0)
        .map((line) => line.split(' | '));
  return rows.map((row) => row.map((cell) => (cell ?? '').trim())).filter((row) => row.some((c) => c.length > 0));
}

/** One line per row, cells joined by " | " (the extractors' rendering). */
export function tableText(section: Section): string {
  const rows = tableRows(section);
  return rows.length > 0 ? rows.map((r) => r.join(' | ')).join('\n') : section.text.trim();
}

export interface TableChunkOptions {
  maxTokens: number;
  /** HTML `<table>` chunks instead of " | " lines (parser_config.html4excel). */
  html: boolean;
  /** Lines above the table in every chunk, e.g. the heading path. */
  prefix?: readonly string[];
}

/**
 * A table becomes chunks of its own: rows packed up to the token limit, each chunk repeating the
 * table name and the header row so that it reads on its own.
 */
export function tableChunks(section: Section, options: TableChunkOptions): ChunkDraft[] {
  const rows = tableRows(section);
  if (rows.length === 0) return [];
  const header = rows.length > 1 ? rows[0] : undefined;
  const body = header ? rows.slice(1) : rows;
  const prefix = [...(options.prefix ?? []), section.name ?? ''];
  const piece = (text: string): Piece => ({ text, positions: section.positions, joiner: options.html ? '' : '\n' });

  if (!options.html) {
    return mergePieces(
      body.map((r) => piece(r.join(' | '))),
      { maxTokens: options.maxTokens, prefix: header ? [...prefix, header.join(' | ')] : prefix },
    );
  }
  const caption = section.name ? `<caption>${escapeHtml(section.name)}</caption>` : '';
  const head = header ? htmlRow(header, 'th') : '';
  return mergePieces(
    body.map((r) => piece(htmlRow(r, 'td'))),
    { maxTokens: options.maxTokens, prefix: options.prefix, wrap: { open: `<table>${caption}${head}`, close: '</table>' } },
  );
}

function htmlRow(cells: readonly string[], tag: 'th' | 'td'): string {
  return `<tr>${cells.map((c) => `<${tag}>${escapeHtml(c)}</${tag}>`).join('')}</tr>`;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
