import { createRequire } from 'node:module';
import path from 'node:path';
import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { TextItem } from 'pdfjs-dist/types/src/display/api.js';
import { rangeOf, type PageRange } from '../checkpoint.js';
import { OcrEngineError, ParseLimitError } from '../errors.js';
import type { Extractor } from '../extractor.js';
import { loadPdfjs } from '../libraries.js';
import { LIMIT_VARIABLES } from '../limits.js';
import { recognize } from '../ocr.js';
import { groupBlocks, groupLines, titleLevels, type Block, type TextRun } from '../pdf-layout.js';
import { renderPage } from '../pdf-render.js';
import type { Position, Section } from '../types.js';

const require = createRequire(import.meta.url);
const PDFJS_DIR = path.dirname(require.resolve('pdfjs-dist/package.json'));
// pdfjs on Node reads these with fs: the 14 standard fonts, CJK CMaps and the JPX/JBIG2 decoders.
const PDFJS_ASSETS = {
  standardFontDataUrl: path.join(PDFJS_DIR, 'standard_fonts') + path.sep,
  cMapUrl: path.join(PDFJS_DIR, 'cmaps') + path.sep,
  cMapPacked: true,
  wasmUrl: path.join(PDFJS_DIR, 'wasm') + path.sep,
};

/** Fewer visible characters than this on a page with pictures means a scan: OCR it. */
const MIN_TEXT_CHARS = 10;
type Pdfjs = Awaited<ReturnType<typeof loadPdfjs>>;

const imageOps = ({ OPS }: Pdfjs): Set<number> =>
  new Set([
    OPS.paintImageXObject,
    OPS.paintInlineImageXObject,
    OPS.paintImageMaskXObject,
    OPS.paintImageXObjectRepeat,
    OPS.paintInlineImageXObjectGroup,
    OPS.paintImageMaskXObjectRepeat,
  ]);

async function textRuns({ Util }: Pdfjs, page: PDFPageProxy): Promise<TextRun[]> {
  const viewport = page.getViewport({ scale: 1 });
  const content = await page.getTextContent();
  return content.items
    .filter((item): item is TextItem => 'str' in item)
    .map((item) => {
      const m = Util.transform(viewport.transform, item.transform) as number[];
      return { text: item.str, x: m[4], baseline: m[5], width: item.width, size: Math.hypot(m[2], m[3]), eol: item.hasEOL };
    });
}

async function hasImages(page: PDFPageProxy, ops: Set<number>): Promise<boolean> {
  const { fnArray } = await page.getOperatorList();
  return fnArray.some((fn) => ops.has(fn));
}

/** OCR paragraphs as blocks in PDF points; size 0 keeps them out of font-size title detection. */
async function ocrBlocks(page: PDFPageProxy): Promise<Block[]> {
  const { png, scale } = await renderPage(page);
  const { paragraphs } = await recognize(png);
  return paragraphs.map((p) => ({
    text: p.text,
    x0: p.x0 / scale,
    x1: p.x1 / scale,
    top: p.top / scale,
    bottom: p.bottom / scale,
    size: 0,
    lines: 1,
  }));
}

const round = (n: number): number => Math.round(n * 10) / 10;

export const extractPdf: Extractor = async (bytes, ctx) => {
  // A plain copy: pdfjs rejects Buffers and may transfer (detach) the array it is given.
  // maxImageSize: pdfjs skips (rather than decodes) pictures over the image pixel limit.
  const pdfjs = await loadPdfjs();
  const task = pdfjs.getDocument({ data: new Uint8Array(bytes), ...PDFJS_ASSETS, verbosity: 0, isEvalSupported: false, maxImageSize: ctx.limits.imagePixels });
  const doc = await task.promise.catch(async (error: unknown) => {
    await task.destroy();
    throw error;
  });
  try {
    const meta: Record<string, string> = {};
    const info = ((await doc.getMetadata().catch(() => undefined))?.info ?? {}) as Record<string, unknown>;
    if (typeof info.Title === 'string' && info.Title.trim()) meta.title = info.Title.trim();
    if (typeof info.Author === 'string' && info.Author.trim()) meta.author = info.Author.trim();

    // The page count comes from the page tree's root (/Count) before any page is read: a file listing
    // 300,000 pages fails here in a second instead of holding a parser for the time ceiling.
    const pages = doc.numPages;
    if (pages > ctx.limits.pages) {
      throw new ParseLimitError(ctx.filename, `was refused: it has ${pages} pages, more than the limit of ${ctx.limits.pages} pages (${LIMIT_VARIABLES.pages})`);
    }
    const ops = imageOps(pdfjs);
    const placed: { page: number; block: Block }[] = [];
    const unreadable: number[] = [];
    let firstError: unknown;
    // Ranges an earlier attempt finished are taken as stored; the others are parsed and stored as each ends.
    const size = ctx.limits.checkpointPages;
    const finished = new Map((ctx.checkpoints?.done ?? []).map((r) => [r.from, r]));
    let range: PageRange | undefined;
    for (let n = 1; n <= pages; n++) {
      const stored = finished.get(n);
      if (stored && stored.to === rangeOf(n, size, pages).to) {
        placed.push(...stored.blocks);
        unreadable.push(...stored.unreadable);
        n = stored.to;
        continue;
      }
      range ??= { ...rangeOf(n, size, pages), blocks: [], unreadable: [] };
      ctx.signal?.throwIfAborted();
      ctx.onProgress?.((n - 1) / pages, `Reading page ${n} of ${pages}`);
      let page: PDFPageProxy | undefined;
      try {
        page = await doc.getPage(n);
        let blocks = groupBlocks(groupLines(await textRuns(pdfjs, page)));
        const visibleChars = blocks.reduce((sum, b) => sum + b.text.replace(/\s/g, '').length, 0);
        if (visibleChars < MIN_TEXT_CHARS && (await hasImages(page, ops))) {
          ctx.onProgress?.((n - 1) / pages, `Recognising text on page ${n} of ${pages}`);
          const recognised = await ocrBlocks(page);
          if (recognised.length > 0) blocks = recognised;
        }
        for (const block of blocks) range.blocks.push({ page: n, block });
      } catch (error) {
        if (ctx.signal?.aborted || error instanceof OcrEngineError) throw error;
        // One damaged page should not cost the whole document; it is listed in meta instead.
        firstError ??= error;
        range.unreadable.push(n);
      } finally {
        page?.cleanup();
      }
      if (n === range.to) {
        placed.push(...range.blocks);
        unreadable.push(...range.unreadable);
        // A one-range document has nothing to resume: only longer ones are checkpointed.
        if (pages > size) ctx.checkpoints?.save(range);
        range = undefined;
      }
    }
    if (pages > 0 && unreadable.length === pages) throw firstError ?? new Error('no page could be read');
    if (unreadable.length > 0) meta.unreadable_pages = unreadable.join(',');

    const levels = titleLevels(placed.map((p) => p.block));
    const sections: Section[] = placed.map(({ page, block }, i) => {
      const position: Position = [page, round(block.x0), round(block.x1), round(block.top), round(block.bottom)];
      const level = levels[i];
      return level
        ? { kind: 'title', text: block.text, level, page, positions: [position] }
        : { kind: 'text', text: block.text, page, positions: [position] };
    });
    return { sections, pages, meta };
  } finally {
    await doc.destroy();
  }
};
