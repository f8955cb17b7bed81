/**
 * The large parser libraries, each imported when a file first needs it: a parser process then holds only
 * the libraries of the formats it has parsed (SheetJS, mailparser, ExcelJS, pdfjs with @napi-rs/canvas,
 * mammoth, tesseract.js; the parser process's memory is measured by bench/ingest/run.ts: docs/operations.md, "Memory").
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

/**
 * pdfjs and its worker, the worker run on this thread (pdfjs's "fake worker" finds it on `globalThis.pdfjsWorker`).
 * The legacy build, the one for Node, carries core-js, which on Node 20 replaces `Array.prototype.push` and
 * `JSON.stringify` / `JSON.parse` for the whole process with JavaScript versions (for spec corner cases: an array
 * whose length is not writable, `JSON.rawJSON`): every push of every module in the process, the chunker's included,
 * then ran ~10× slower. The natives are put back once both modules are loaded; what core-js adds (e.g.
 * `Promise.withResolvers`, `Map.prototype.getOrInsertComputed`) stays, pdfjs needs it.
 */
export const loadPdfjs = once(async () => {
  const natives = { push: Array.prototype.push, stringify: JSON.stringify, parse: JSON.parse };
  try {
    const [pdfjs, worker] = await Promise.all([import('pdfjs-dist/legacy/build/pdf.mjs'), import('pdfjs-dist/legacy/build/pdf.worker.mjs')]);
    (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = worker;
    return pdfjs;
  } finally {
    Object.defineProperty(Array.prototype, 'push', { value: natives.push });
    Object.defineProperty(JSON, 'stringify', { value: natives.stringify });
    Object.defineProperty(JSON, 'parse', { value: natives.parse });
  }
});
export const loadCanvas = once(() => import('@napi-rs/canvas'));
export const loadMammoth = once(async () => (await import('mammoth')).default);
export const loadJSZip = once(async () => (await import('jszip')).default);
export const loadMailparser = once(() => import('mailparser'));
export const loadSheetJS = once(() => import('xlsx'));
export const loadExcelJS = once(async () => (await import('exceljs')).default);
export const loadTesseract = once(() => import('tesseract.js'));
