import path from 'node:path';
import type * as XLSX from 'xlsx';
import type { Extractor } from '../extractor.js';
import { loadSheetJS } from '../libraries.js';
import { decodeText } from '../text.js';
import { workbookDocument, type Sheet } from '../workbook.js';

const OLE_MAGIC = [0xd0, 0xcf, 0x11, 0xe0];

function sheetsOf(XLSX: typeof import('xlsx'), workbook: XLSX.WorkBook): Sheet[] {
  return workbook.SheetNames.map((name) => ({
    name,
    rows: XLSX.utils.sheet_to_json<string[]>(workbook.Sheets[name], { header: 1, raw: false, defval: '', blankrows: false }),
  }));
}

/** Binary .xls (BIFF in an OLE container), or the HTML/XML/TSV files that many tools export under that name. */
export const extractXls: Extractor = async (bytes) => {
  const XLSX = await loadSheetJS();
  const isOle = OLE_MAGIC.every((b, i) => bytes[i] === b);
  const workbook = isOle
    ? XLSX.read(bytes, { type: 'array', cellDates: true })
    : XLSX.read(decodeText(bytes), { type: 'string', cellDates: true });
  return workbookDocument(sheetsOf(XLSX, workbook));
};

/** CSV/TSV (separator guessed); cells stay as written, no number or date coercion. The sheet is named after the file. */
export const extractCsv: Extractor = async (bytes, ctx) => {
  const XLSX = await loadSheetJS();
  const workbook = XLSX.read(decodeText(bytes), { type: 'string', raw: true, dense: true });
  const [sheet] = sheetsOf(XLSX, workbook);
  return workbookDocument([{ ...sheet, name: path.parse(ctx.filename).name }]);
};
