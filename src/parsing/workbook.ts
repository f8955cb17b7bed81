import { tableSection } from './sections.js';
import type { ExtractedDocument, Section } from './types.js';

export interface Sheet {
  name: string;
  rows: string[][];
}

/** One table section per non-empty sheet; page = the sheet's 1-based position in the workbook. */
export function workbookDocument(sheets: Sheet[], meta: Record<string, string> = {}): ExtractedDocument {
  const sections = sheets
    .map((sheet, i) => tableSection(sheet.rows, { name: sheet.name, page: i + 1 }))
    .filter((s): s is Section => s !== undefined);
  return { sections, pages: Math.max(sheets.length, 1), meta };
}
