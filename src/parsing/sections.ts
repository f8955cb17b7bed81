import type { Section } from './types.js';

/** Trims cells, drops empty rows and empty trailing columns, and pads rows to one width. */
export function normalizeRows(rows: string[][]): string[][] {
  const kept = rows.map((row) => row.map((cell) => cell.trim())).filter((row) => row.some((cell) => cell !== ''));
  let width = 0;
  for (const row of kept) {
    for (let i = row.length - 1; i >= width; i--) {
      if (row[i] !== '') {
        width = i + 1;
        break;
      }
    }
  }
  return kept.map((row) => Array.from({ length: width }, (_, i) => row[i] ?? ''));
}

/** A table section; `text` is one row per line with cells joined by " | ". */
export function tableSection(rows: string[][], extra: Partial<Section> = {}): Section | undefined {
  const clean = normalizeRows(rows);
  if (clean.length === 0) return undefined;
  return { kind: 'table', text: clean.map((row) => row.join(' | ')).join('\n'), rows: clean, ...extra };
}
