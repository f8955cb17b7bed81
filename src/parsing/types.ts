/** A page-relative box, RAGFlow style: [page, x0, x1, top, bottom] (page is 1-based). */
export type Position = [number, number, number, number, number];

/** One structural piece of an extracted file, in reading order. */
export interface Section {
  kind: 'text' | 'title' | 'table' | 'image' | 'code';
  /** Plain text. For tables a readable rendering (one row per line, cells joined by " | "). */
  text: string;
  /** Heading level for titles (1 = top). */
  level?: number;
  /** 1-based page (PDF), slide (PPTX) or sheet number (spreadsheets) the section comes from. */
  page?: number;
  positions?: Position[];
  /** Table cells, first row is the header when the source has one. */
  rows?: string[][];
  /** Sheet or table name where the source has one. */
  name?: string;
  /** PNG/JPEG bytes for image sections (pictures, OCR'd pages). */
  image?: Uint8Array;
}

/** What an extractor returns for one file. */
export interface ExtractedDocument {
  sections: Section[];
  /** Number of pages (PDF), slides (PPTX) or sheets; 1 for flowing text. */
  pages: number;
  /** Format-level facts: title, author, email headers (from, to, subject, date)... */
  meta: Record<string, string>;
}

/** Reports progress in 0..1 with a readable message; extractors call it for long files. */
export type ProgressFn = (fraction: number, message: string) => void;
