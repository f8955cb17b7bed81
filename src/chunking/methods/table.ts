import type { ExtractedDocument, Position, Section } from '../../parsing/types.js';
import type { ChunkDraft } from '../types.js';
import { tableRows } from '../tables.js';

interface Row {
  cells: string[];
  positions?: Position[];
}

/**
 * Spreadsheets and CSV: one chunk per data row, "header: value; header: value", empty cells left out.
 * The first row of each table is its header. A document without table sections is read as
 * tab-separated text whose first line is the header, as RAGFlow reads .txt files.
 */
export function chunkTable(doc: ExtractedDocument): ChunkDraft[] {
  const tables = doc.sections.filter((s) => s.kind === 'table');
  const sources: Row[][] =
    tables.length > 0
      ? tables.map((s) => tableRows(s).map((cells) => ({ cells, positions: s.positions })))
      : [textRows(doc.sections)];
  const out: ChunkDraft[] = [];
  for (const [header, ...data] of sources) {
    for (const row of data) {
      const fields = row.cells
        .map((value, j) => [header!.cells[j]?.trim() || `column_${j + 1}`, value.trim()] as const)
        .filter(([, value]) => value.length > 0)
        .map(([name, value]) => `${name}: ${value}`);
      if (fields.length === 0) continue;
      const chunk: ChunkDraft = { content: fields.join('; ') };
      if (row.positions) chunk.positions = row.positions;
      out.push(chunk);
    }
  }
  return out;
}

function textRows(sections: readonly Section[]): Row[] {
  const rows = sections
    .filter((s) => s.kind === 'text' || s.kind === 'title')
    .flatMap((s) =>
      s.text
        .split('\n')
        .filter((line) => line.trim().length > 0)
        .map((line) => ({ cells: line.split('\t'), positions: s.positions })),
    );
  // Lines with another number of fields than the header are dropped, as RAGFlow does.
  const width = rows[0]?.cells.length ?? 0;
  return rows.filter((r) => r.cells.length === width);
}
