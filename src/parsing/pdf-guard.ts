import { ParseLimitError } from './errors.js';
import { inflatedSize } from './inflate.js';
import { formatBytes, LIMIT_VARIABLES, type ParseLimits } from './limits.js';

type PdfLimits = Pick<ParseLimits, 'nestingDepth' | 'inflateTotalBytes' | 'inflateEntryBytes'>;

const c = (ch: string): number => ch.charCodeAt(0);
const WHITESPACE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIMITERS = new Set([...'()<>[]{}/%'].map(c));
const isBoundary = (byte: number | undefined): boolean => byte === undefined || WHITESPACE.has(byte) || DELIMITERS.has(byte);

function keywordAt(bytes: Buffer, at: number, word: string): boolean {
  for (let i = 0; i < word.length; i++) if (bytes[at + i] !== word.charCodeAt(i)) return false;
  return isBoundary(bytes[at - 1]) && isBoundary(bytes[at + word.length]);
}

/** End (exclusive) of a literal string starting at `at` ("(" ... ")", nested parentheses and escapes). */
function skipLiteralString(bytes: Buffer, at: number): number {
  let depth = 0;
  for (let i = at; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === c('\\')) i++;
    else if (b === c('(')) depth++;
    else if (b === c(')') && --depth === 0) return i + 1;
  }
  return bytes.length;
}

/** How far before a stream's data its dictionary is looked for. */
const MAX_DICTIONARY = 4096;

interface Stream {
  dictionary: string;
  data: Buffer;
}

/**
 * Refuses a PDF before pdfjs reads it when its arrays and dictionaries nest deeper than the limit (pdfjs
 * parses objects recursively and overflows its stack), or when a compressed (FlateDecode) stream other
 * than an image inflates past the per-stream or total limit (pdfjs keeps a decoded stream whole in
 * memory). Images are bounded by pdfjs's own pixel limit instead. Streams inside object streams and
 * streams with other filters in front of Flate are not measured here: the process's memory ceiling
 * remains their bound.
 */
export async function guardPdf(bytes: Uint8Array, filename: string, limits: PdfLimits): Promise<void> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const streams = scanObjects(buffer, filename, limits.nestingDepth);
  let total = 0;
  for (const stream of streams) {
    if (!/\/FlateDecode\b/.test(stream.dictionary) || /\/Subtype\s*\/Image\b/.test(stream.dictionary)) continue;
    const remaining = limits.inflateTotalBytes - total;
    const cap = Math.min(limits.inflateEntryBytes, remaining);
    const { bytes: inflated, over } = await inflatedSize(stream.data, 'zlib', cap);
    if (over && cap === limits.inflateEntryBytes && cap < remaining) {
      throw new ParseLimitError(
        filename,
        `was refused: a compressed PDF stream inflates to more than ${formatBytes(cap)} (limit ${formatBytes(cap)} per part, ${LIMIT_VARIABLES.inflateEntryBytes})`,
      );
    }
    if (over) {
      throw new ParseLimitError(
        filename,
        `was refused: its compressed PDF streams inflate to more than ${formatBytes(limits.inflateTotalBytes)} (limit ${formatBytes(limits.inflateTotalBytes)} in total, ${LIMIT_VARIABLES.inflateTotalBytes})`,
      );
    }
    total += inflated;
  }
}

/** One pass over the file's objects: nesting depth checked as it goes, streams collected with their dictionaries. */
function scanObjects(bytes: Buffer, filename: string, maxDepth: number): Stream[] {
  const streams: Stream[] = [];
  let depth = 0;
  let objectStart = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === c('%')) {
      while (i < bytes.length && bytes[i] !== 0x0a && bytes[i] !== 0x0d) i++;
    } else if (b === c('(')) {
      i = skipLiteralString(bytes, i) - 1;
    } else if (b === c('<')) {
      if (bytes[i + 1] === c('<')) {
        depth++;
        i++;
      } else {
        const end = bytes.indexOf(c('>'), i + 1);
        i = end < 0 ? bytes.length : end;
      }
    } else if (b === c('>') && bytes[i + 1] === c('>')) {
      depth = Math.max(0, depth - 1);
      i++;
    } else if (b === c('[')) {
      depth++;
    } else if (b === c(']')) {
      depth = Math.max(0, depth - 1);
    } else if (b === c('o') && keywordAt(bytes, i, 'obj')) {
      objectStart = i;
    } else if (b === c('e') && keywordAt(bytes, i, 'endobj')) {
      depth = 0; // nothing nests across objects
    } else if (b === c('s') && keywordAt(bytes, i, 'stream')) {
      let start = i + 'stream'.length;
      if (bytes[start] === 0x0d) start++;
      if (bytes[start] === 0x0a) start++;
      const end = bytes.indexOf('endstream', start, 'latin1');
      const stop = end < 0 ? bytes.length : end;
      streams.push({ dictionary: bytes.toString('latin1', Math.max(objectStart, i - MAX_DICTIONARY), i), data: bytes.subarray(start, stop) });
      i = stop + 'endstream'.length - 1;
      depth = 0;
    }
    if (depth > maxDepth) {
      throw new ParseLimitError(filename, `was refused: its PDF objects nest deeper than ${maxDepth} levels (limit ${maxDepth}, ${LIMIT_VARIABLES.nestingDepth})`);
    }
  }
  return streams;
}
