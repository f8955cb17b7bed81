/**
 * The ingest benchmark's corpus: deterministic PDFs and DOCX files from the test fixture generators, each
 * with its own seed so no two documents have the same text.
 */
import { makeDocx, makePdf, paragraphText } from '../../test/fixtures/generate.js';

export interface CorpusOptions {
  pdfs: number;
  docx: number;
  /** Pages per PDF. */
  pages: number;
  /** Body paragraphs per PDF page (each ~40 words at 8 per page). */
  paragraphsPerPage: number;
  /** Body paragraphs per DOCX (40 words each). */
  docxParagraphs: number;
}

export interface CorpusFile {
  name: string;
  bytes: Uint8Array;
  kind: 'pdf' | 'docx';
}

export async function generateCorpus(opts: CorpusOptions): Promise<CorpusFile[]> {
  const files: CorpusFile[] = [];
  for (let i = 0; i < opts.pdfs; i++) {
    const bytes = await makePdf({ pages: opts.pages, paragraphsPerPage: opts.paragraphsPerPage, title: `Field report ${i + 1}`, seed: i + 1 });
    files.push({ name: `report-${String(i + 1).padStart(4, '0')}.pdf`, bytes, kind: 'pdf' });
  }
  for (let i = 0; i < opts.docx; i++) {
    const seed = 100_000 + i;
    const paragraphs = Array.from({ length: opts.docxParagraphs }, (_, k) => paragraphText(1 + Math.floor(k / 10), 1 + (k % 10), 40, seed));
    const bytes = await makeDocx({ title: `Quarterly memo ${i + 1}`, paragraphs });
    files.push({ name: `memo-${String(i + 1).padStart(4, '0')}.docx`, bytes, kind: 'docx' });
  }
  return files;
}
