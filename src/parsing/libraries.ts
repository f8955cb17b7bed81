/**
 * The large parser libraries, each imported when a file first needs it: a parser process then holds only
 * the libraries of the formats it has parsed (SheetJS ~33 MB, mailparser ~27, ExcelJS ~26, pdfjs with
 * @napi-rs/canvas ~39, mammoth ~13, tesseract.js ~8 when imported alone; docs/operations.md, "Memory").
 * The libraries are loaded lazily, not our extractor modules: under mocha's tsx a TypeScript module
 * imported with import() is a second copy beside the statically imported one, and `instanceof` of the
 * parsing errors would fail across the two.
 */

/** A loader that imports once and hands out the same module afterwards; a failed import is tried again next time. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
}

export const loadPdfjs = once(() => import('pdfjs-dist/legacy/build/pdf.mjs'));
export const loadCanvas = once(() => import('@napi-rs/canvas'));
export const loadMammoth = once(async () => (await import('mammoth')).default);
export const loadJSZip = once(async () => (await import('jszip')).default);
export const loadMailparser = once(() => import('mailparser'));
export const loadSheetJS = once(() => import('xlsx'));
export const loadExcelJS = once(async () => (await import('exceljs')).default);
export const loadTesseract = once(() => import('tesseract.js'));
