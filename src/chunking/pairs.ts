import type { Position, Section } from '../parsing/types.js';
import { tableRows } from './tables.js';

/** Two leading fields of a row (question/answer, content/tags) and where they came from. */
export interface Pair {
  first: string;
  second: string;
  positions?: Position[];
  /** Index of the section the pair came from, to keep document order across sources. */
  order: number;
}

/** True when the two cells are column titles rather than data. */
export type HeaderTest = (first: string, second: string) => boolean;

/**
 * Pairs from table rows (the first two non-empty cells) and/or tab-separated lines of text sections,
 * skipping a first row that `isHeader` recognises as column titles. Rows with fewer than two fields
 * are skipped, as RAGFlow does.
 */
export function rowPairs(
  sections: readonly Section[],
  isHeader: HeaderTest,
  from: ReadonlyArray<'table' | 'text'> = ['table', 'text'],
): Pair[] {
  const out: Pair[] = [];
  sections.forEach((section, order) => {
    let rows: string[][];
    if (section.kind === 'table' && from.includes('table')) rows = tableRows(section);
    else if (section.kind === 'text' && from.includes('text')) {
      rows = section.text
        .split('\n')
        .filter((l) => l.includes('\t'))
        .map((l) => l.split('\t'));
    } else return;
    rows.forEach((row, i) => {
      const [first, second] = row.map((c) => c.trim()).filter((c) => c.length > 0);
      if (!first || !second) return;
      if (i === 0 && isHeader(first, second)) return;
      out.push({ first, second, positions: section.positions, order });
    });
  });
  return out;
}
