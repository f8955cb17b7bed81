/** The parsers Cairn has; several extensions map to one. */
export type FormatKind =
  | 'pdf'
  | 'docx'
  | 'xlsx'
  | 'xls'
  | 'csv'
  | 'pptx'
  | 'html'
  | 'markdown'
  | 'text'
  | 'code'
  | 'json'
  | 'jsonl'
  | 'eml'
  | 'image';

/** How each format is named in error messages ("x.pdf is not a readable PDF: ..."). */
export const FORMAT_LABELS: Record<FormatKind, string> = {
  pdf: 'PDF',
  docx: 'DOCX document',
  xlsx: 'XLSX workbook',
  xls: 'XLS workbook',
  csv: 'CSV file',
  pptx: 'PPTX presentation',
  html: 'HTML document',
  markdown: 'Markdown document',
  text: 'text file',
  code: 'source file',
  json: 'JSON document',
  jsonl: 'JSON Lines file',
  eml: 'email (EML)',
  image: 'image',
};

interface FormatEntry {
  kind: FormatKind;
  mime: string;
}

const code = (mime = 'text/plain'): FormatEntry => ({ kind: 'code', mime });

/** The one table of supported extensions: upload checks, downloads and dispatch all read it. */
const FORMATS: Record<string, FormatEntry> = {
  pdf: { kind: 'pdf', mime: 'application/pdf' },
  docx: { kind: 'docx', mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' },
  xlsx: { kind: 'xlsx', mime: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' },
  xls: { kind: 'xls', mime: 'application/vnd.ms-excel' },
  csv: { kind: 'csv', mime: 'text/csv' },
  tsv: { kind: 'csv', mime: 'text/tab-separated-values' },
  pptx: { kind: 'pptx', mime: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' },
  html: { kind: 'html', mime: 'text/html' },
  htm: { kind: 'html', mime: 'text/html' },
  xhtml: { kind: 'html', mime: 'application/xhtml+xml' },
  md: { kind: 'markdown', mime: 'text/markdown' },
  markdown: { kind: 'markdown', mime: 'text/markdown' },
  txt: { kind: 'text', mime: 'text/plain' },
  text: { kind: 'text', mime: 'text/plain' },
  log: { kind: 'text', mime: 'text/plain' },
  json: { kind: 'json', mime: 'application/json' },
  jsonl: { kind: 'jsonl', mime: 'application/jsonl' },
  ndjson: { kind: 'jsonl', mime: 'application/x-ndjson' },
  eml: { kind: 'eml', mime: 'message/rfc822' },
  png: { kind: 'image', mime: 'image/png' },
  jpg: { kind: 'image', mime: 'image/jpeg' },
  jpeg: { kind: 'image', mime: 'image/jpeg' },
  gif: { kind: 'image', mime: 'image/gif' },
  bmp: { kind: 'image', mime: 'image/bmp' },
  tif: { kind: 'image', mime: 'image/tiff' },
  tiff: { kind: 'image', mime: 'image/tiff' },
  webp: { kind: 'image', mime: 'image/webp' },
  py: code('text/x-python'),
  js: code('text/javascript'),
  mjs: code('text/javascript'),
  cjs: code('text/javascript'),
  jsx: code('text/javascript'),
  ts: code('text/x-typescript'),
  tsx: code('text/x-typescript'),
  java: code('text/x-java'),
  kt: code(),
  kts: code(),
  scala: code(),
  groovy: code(),
  gradle: code(),
  go: code('text/x-go'),
  rs: code('text/x-rust'),
  c: code('text/x-c'),
  h: code('text/x-c'),
  cpp: code('text/x-c++'),
  cc: code('text/x-c++'),
  cxx: code('text/x-c++'),
  hpp: code('text/x-c++'),
  hh: code('text/x-c++'),
  cs: code('text/x-csharp'),
  swift: code(),
  m: code(),
  rb: code('text/x-ruby'),
  php: code('text/x-php'),
  pl: code(),
  pm: code(),
  lua: code(),
  r: code(),
  dart: code(),
  ex: code(),
  exs: code(),
  erl: code(),
  hs: code(),
  ml: code(),
  clj: code(),
  sh: code('application/x-sh'),
  bash: code('application/x-sh'),
  zsh: code(),
  ps1: code(),
  bat: code(),
  sql: code('application/sql'),
  css: code('text/css'),
  scss: code(),
  less: code(),
  vue: code(),
  svelte: code(),
  proto: code(),
  graphql: code(),
  tf: code(),
  yaml: code('application/yaml'),
  yml: code('application/yaml'),
  toml: code('application/toml'),
  ini: code(),
  cfg: code(),
  conf: code(),
  properties: code(),
  xml: code('application/xml'),
};

/** Lowercased extension without the dot ("" when the name has none). */
export function extensionOf(filename: string): string {
  const base = filename.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

function entryFor(filename: string): FormatEntry | undefined {
  const ext = extensionOf(filename);
  return Object.hasOwn(FORMATS, ext) ? FORMATS[ext] : undefined;
}

/** The parser for a file name, or undefined when Cairn cannot parse it. */
export function formatOf(filename: string): FormatKind | undefined {
  return entryFor(filename)?.kind;
}

/** Whether `extract` can parse a file of this name (checked at upload, before storing anything). */
export function isSupportedFile(filename: string): boolean {
  return formatOf(filename) !== undefined;
}

/** MIME type to serve the original file with. */
export function contentTypeFor(filename: string): string {
  return entryFor(filename)?.mime ?? 'application/octet-stream';
}

/** A file extension (with dot) for a MIME type, e.g. to name an attachment that came without a filename. */
export function extensionForContentType(mime: string): string | undefined {
  const wanted = mime.split(';')[0].trim().toLowerCase();
  const ext = Object.keys(FORMATS).find((e) => FORMATS[e].mime === wanted);
  return ext === undefined ? undefined : `.${ext}`;
}
