import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { loadCanvas } from './libraries.js';

/** 200 dpi reads small print reliably; the cap keeps huge pages (posters, scans at A0) affordable. */
const OCR_DPI = 200;
const MAX_SIDE_PX = 3000;

/** Renders a page to PNG for OCR; `scale` converts image pixels back to PDF points (divide by it). */
export async function renderPage(page: PDFPageProxy): Promise<{ png: Uint8Array; scale: number }> {
  const base = page.getViewport({ scale: 1 });
  const scale = Math.min(OCR_DPI / 72, MAX_SIDE_PX / Math.max(base.width, base.height));
  const viewport = page.getViewport({ scale });
  const { createCanvas } = await loadCanvas();
  const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
  // pdfjs's types name the DOM canvas; @napi-rs/canvas is the implementation pdfjs itself uses on Node.
  await page.render({ canvas: canvas as unknown as HTMLCanvasElement, viewport }).promise;
  return { png: await canvas.encode('png'), scale };
}
