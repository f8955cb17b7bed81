import { CorruptFileError, OcrEngineError, ParseLimitError, UnsupportedFormatError } from './errors.js';
import type { ExtractContext, ExtractOptions, Extractor } from './extractor.js';
import { extractDocx } from './extractors/docx.js';
import { extractEml } from './extractors/eml.js';
import { extractHtml } from './extractors/html.js';
import { extractImage } from './extractors/image.js';
import { extractJson, extractJsonLines } from './extractors/json.js';
import { extractMarkdown } from './extractors/markdown.js';
import { extractPdf } from './extractors/pdf.js';
import { extractCode, extractText } from './extractors/plaintext.js';
import { extractPptx } from './extractors/pptx.js';
import { extractCsv, extractXls } from './extractors/sheetjs.js';
import { extractXlsx } from './extractors/xlsx.js';
import { extensionOf, FORMAT_LABELS, formatOf, type FormatKind } from './formats.js';
import { guardInput } from './guards.js';
import { DEFAULT_PARSE_LIMITS, type ParseLimits } from './limits.js';
import { resolveFormat } from './sniff.js';
import type { ExtractedDocument } from './types.js';

export type { ExtractedDocument, Section } from './types.js';
export type { ExtractOptions } from './extractor.js';
export { CorruptFileError, ParseLimitError, UnsupportedFormatError } from './errors.js';
export { contentTypeFor, isSupportedFile } from './formats.js';
export { shutdownOcr } from './ocr.js';

const EXTRACTORS: Record<FormatKind, Extractor> = {
  pdf: extractPdf,
  docx: extractDocx,
  xlsx: extractXlsx,
  xls: extractXls,
  csv: extractCsv,
  pptx: extractPptx,
  html: extractHtml,
  markdown: extractMarkdown,
  text: extractText,
  code: extractCode,
  json: extractJson,
  jsonl: extractJsonLines,
  eml: extractEml,
  image: extractImage,
};

/** Emails inside emails inside emails... stop here. */
const MAX_EMBEDDING_DEPTH = 3;

const isAbort = (error: unknown, signal?: AbortSignal): boolean =>
  (signal?.aborted === true && error === signal.reason) || (error as Error)?.name === 'AbortError';

/** Anything a parser library throws becomes a CorruptFileError naming the file and the format. */
function asParsingError(error: unknown, filename: string, kind: FormatKind, signal?: AbortSignal): unknown {
  if (
    error instanceof CorruptFileError ||
    error instanceof UnsupportedFormatError ||
    error instanceof OcrEngineError ||
    error instanceof ParseLimitError ||
    isAbort(error, signal)
  ) {
    return error;
  }
  // Nesting the guards cannot see (inside compressed PDF object streams, XML) ends in a stack overflow.
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return new ParseLimitError(filename, `was refused: its ${FORMAT_LABELS[kind]} structure nests too deeply to parse`);
  }
  const message = error instanceof Error ? error.message : String(error);
  const reason = message.split('\n')[0].trim().slice(0, 300) || 'unknown error';
  return new CorruptFileError(filename, FORMAT_LABELS[kind], reason);
}

async function extractAt(bytes: Uint8Array, filename: string, options: ExtractOptions & { limits: ParseLimits }, depth: number): Promise<ExtractedDocument> {
  const declared = formatOf(filename);
  if (!declared) {
    const ext = extensionOf(filename);
    throw new UnsupportedFormatError(ext ? `.${ext}` : filename);
  }
  options.signal?.throwIfAborted();
  const kind = resolveFormat(declared, bytes);
  const ctx: ExtractContext = {
    ...options,
    filename,
    extractEmbedded: (inner, innerName) => {
      if (depth >= MAX_EMBEDDING_DEPTH) {
        const innerKind = formatOf(innerName) ?? kind;
        return Promise.reject(new CorruptFileError(innerName, FORMAT_LABELS[innerKind], 'nested too deeply'));
      }
      return extractAt(inner, innerName, { signal: options.signal, limits: options.limits }, depth + 1);
    },
  };
  options.onProgress?.(0, `Parsing ${filename}`);
  let doc: ExtractedDocument;
  try {
    await guardInput(kind, bytes, filename, options.limits);
    doc = await EXTRACTORS[kind](bytes, ctx);
  } catch (error) {
    throw asParsingError(error, filename, kind, options.signal);
  }
  options.onProgress?.(1, `Parsed ${filename}: ${doc.sections.length} sections`);
  return doc;
}

/**
 * Parses a file into sections in reading order. The extension picks the parser unless the bytes are
 * clearly another format. Throws UnsupportedFormatError for unknown extensions, CorruptFileError when
 * the bytes cannot be read, ParseLimitError when the file goes over a parsing limit (docs/parsing-limits.md),
 * OcrEngineError when OCR cannot start, and the signal's reason when aborted.
 */
export async function extract(bytes: Uint8Array, filename: string, options: ExtractOptions = {}): Promise<ExtractedDocument> {
  return extractAt(bytes, filename, { ...options, limits: options.limits ?? DEFAULT_PARSE_LIMITS }, 0);
}

