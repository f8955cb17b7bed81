import type ExcelJS from 'exceljs';
import type { Extractor } from '../extractor.js';
import { loadExcelJS } from '../libraries.js';
import { workbookDocument } from '../workbook.js';

function dateText(date: Date): string {
  const iso = date.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19).replace('T', ' ');
}

/** Display text of an exceljs cell value (formulas show their cached result). */
function cellText(value: ExcelJS.CellValue | undefined): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return dateText(value);
  if (typeof value !== 'object') return String(value);
  if ('richText' in value) return value.richText.map((run) => run.text).join('');
  if ('formula' in value || 'sharedFormula' in value) return cellText(value.result as ExcelJS.CellValue);
  if ('hyperlink' in value) return cellText(value.text as ExcelJS.CellValue);
  if ('error' in value) return value.error;
  return '';
}

export const extractXlsx: Extractor = async (bytes) => {
  const workbook = new (await loadExcelJS()).Workbook();
  // exceljs's typings predate Buffer being generic; the runtime only needs the bytes.
  await workbook.xlsx.load(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length) as unknown as ExcelJS.Buffer);
  if (workbook.worksheets.length === 0) throw new Error('the package has no worksheets');
  const sheets = workbook.worksheets.map((worksheet) => {
    const rows: string[][] = [];
    worksheet.eachRow({ includeEmpty: true }, (row, rowNumber) => {
      rows[rowNumber - 1] = Array.from((row.values as ExcelJS.CellValue[]).slice(1), cellText);
    });
    return { name: worksheet.name, rows: Array.from(rows, (row) => row ?? []) };
  });
  const meta: Record<string, string> = {};
  if (workbook.title) meta.title = workbook.title;
  if (workbook.creator) meta.author = workbook.creator;
  return workbookDocument(sheets, meta);
};
