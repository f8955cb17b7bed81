import type { FormatKind } from './formats.js';

type Signature = 'pdf' | 'image' | 'zip' | 'ole';

const startsWith = (bytes: Uint8Array, magic: number[], offset = 0): boolean =>
  bytes.length >= offset + magic.length && magic.every((b, i) => bytes[offset + i] === b);

const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));

function signatureOf(bytes: Uint8Array): Signature | undefined {
  if (startsWith(bytes, ascii('%PDF-'))) return 'pdf';
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) return 'zip';
  if (startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return 'ole';
  const image =
    startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) ||
    startsWith(bytes, [0xff, 0xd8, 0xff]) ||
    startsWith(bytes, ascii('GIF87a')) ||
    startsWith(bytes, ascii('GIF89a')) ||
    (startsWith(bytes, ascii('BM')) && startsWith(bytes, [0, 0, 0, 0], 6)) ||
    startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) ||
    startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a]) ||
    (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8));
  return image ? 'image' : undefined;
}

/** Whether the bytes start like one of the image formats OCR can read. */
export const isImage = (bytes: Uint8Array): boolean => signatureOf(bytes) === 'image';

/** The main part each OOXML package must contain; its name is stored uncompressed in the zip. */
const OOXML_MARKERS: [FormatKind, string][] = [
  ['docx', 'word/document.xml'],
  ['xlsx', 'xl/workbook.xml'],
  ['pptx', 'ppt/presentation.xml'],
];

const SPREADSHEETS: FormatKind[] = ['xlsx', 'xls', 'csv'];

/**
 * The format to parse with: the one the extension names, unless the bytes clearly are something
 * else (a PDF saved as .docx, an .xlsx renamed .xls, a JPEG named .png...).
 */
export function resolveFormat(declared: FormatKind, bytes: Uint8Array): FormatKind {
  const signature = signatureOf(bytes);
  switch (signature) {
    case undefined:
      return declared;
    case 'pdf':
    case 'image':
      return signature;
    case 'ole':
      // Legacy Office container: only the spreadsheet flavour (.xls) is supported.
      return SPREADSHEETS.includes(declared) ? 'xls' : declared;
    case 'zip': {
      const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
      const present = OOXML_MARKERS.filter(([, marker]) => buffer.includes(marker)).map(([kind]) => kind);
      if (present.includes(declared)) return declared;
      return present[0] ?? declared;
    }
  }
}
