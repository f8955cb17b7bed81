import { CorruptFileError, ParseLimitError } from './errors.js';
import { formatOf, type FormatKind } from './formats.js';
import { imageFormat, imageSize } from './image-size.js';
import { formatBytes, LIMIT_VARIABLES, type ParseLimits } from './limits.js';
import { guardPdf } from './pdf-guard.js';
import { resolveFormat } from './sniff.js';
import { guardZip, hasZipDirectory } from './zip-guard.js';

/** Formats read whole as one string: their size is their cost. */
const TEXT_KINDS = new Set<FormatKind>(['text', 'code', 'markdown', 'html', 'json', 'jsonl', 'csv']);

/** Formats whose libraries unzip the bytes (sheetjs opens zip-based workbooks whatever their name). */
const ZIP_KINDS = new Set<FormatKind>(['docx', 'xlsx', 'pptx', 'xls']);

/** Refuses a text-like file over the text limit; cheap, so the parser pool checks it before handing the bytes over. */
export function guardTextSize(kind: FormatKind, size: number, filename: string, limits: ParseLimits): void {
  if (TEXT_KINDS.has(kind) && size > limits.textBytes) {
    throw new ParseLimitError(
      filename,
      `was refused: ${formatBytes(size)} of text is more than the limit of ${formatBytes(limits.textBytes)} (${LIMIT_VARIABLES.textBytes})`,
    );
  }
}

const megapixels = (n: number) => `${Math.round(n / 1e5) / 10} megapixels`;

/**
 * An image is decoded only when its header gives its size and that size is within the pixel limit. A header
 * that gives no size (random bytes behind valid magic bytes) is refused at once: its decoded size cannot be
 * checked, and such data has held an OCR decoder for minutes.
 */
function guardImage(bytes: Uint8Array, filename: string, limits: ParseLimits): void {
  // Bytes that announce no image format are not an image at all: corrupt, not over a limit.
  if (!imageFormat(bytes)) throw new CorruptFileError(filename, 'image', 'its first bytes are not those of a PNG, JPEG, GIF, BMP, TIFF or WebP image');
  const size = imageSize(bytes);
  if (!size || size.width === 0 || size.height === 0) {
    throw new ParseLimitError(
      filename,
      `was refused: its image header gives no size, so its decoded size cannot be checked against the limit of ${megapixels(limits.imagePixels)} (${LIMIT_VARIABLES.imagePixels})`,
    );
  }
  if (size.width * size.height > limits.imagePixels) {
    throw new ParseLimitError(
      filename,
      `was refused: the image is ${size.width} × ${size.height} pixels (${megapixels(size.width * size.height)}), ` +
        `more than the limit of ${megapixels(limits.imagePixels)} (${LIMIT_VARIABLES.imagePixels})`,
    );
  }
}

/**
 * The checks a file passes before its parser library sees it: size for text, the zip guard for
 * zip-based formats, nesting and stream sizes for PDFs, pixel count for images. Each refusal is a
 * ParseLimitError naming the limit and its setting. (JSON nesting is checked once the text is decoded.)
 */
export async function guardInput(kind: FormatKind, bytes: Uint8Array, filename: string, limits: ParseLimits): Promise<void> {
  guardTextSize(kind, bytes.length, filename, limits);
  if (ZIP_KINDS.has(kind) && hasZipDirectory(bytes)) await guardZip(bytes, filename, limits);
  if (kind === 'pdf') await guardPdf(bytes, filename, limits);
  if (kind === 'image') guardImage(bytes, filename, limits);
}

/**
 * The refusals that need no parsing (a text file over the text limit), for callers that would otherwise
 * copy the bytes somewhere first; `extract` makes the same checks and more. This module loads no parser
 * library (pdfjs alone replaces Array.prototype.push and JSON.stringify process-wide), so the process
 * that hands files to the parsers can import it.
 */
export function refuseBeforeParsing(bytes: Uint8Array, filename: string, limits: ParseLimits): void {
  const declared = formatOf(filename);
  if (declared) guardTextSize(resolveFormat(declared, bytes), bytes.length, filename, limits);
}
