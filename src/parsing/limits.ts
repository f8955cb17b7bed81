import { availableParallelism } from 'node:os';
import { readSetting, type SettingsEnv } from '../config-schema.js';

/** What one file may cost before any parser library reads it; checked inside the parser process. */
export interface ParseLimits {
  /** Largest text-like file (plain text, code, Markdown, HTML, JSON, CSV), in bytes. */
  textBytes: number;
  /** Most entries in a zip-based file (DOCX, XLSX, PPTX, any zip). */
  zipEntries: number;
  /** Most bytes all compressed parts of one file may inflate to (zip entries, PDF streams). */
  inflateTotalBytes: number;
  /** Most bytes one zip entry or one PDF stream may inflate to. */
  inflateEntryBytes: number;
  /** Largest inflated / compressed ratio of a zip entry (checked once the entry passes RATIO_GRACE_BYTES). */
  inflateRatio: number;
  /** Most pixels of an image (read from its header before decoding; also the PDF image limit). */
  imagePixels: number;
  /** Deepest nesting of JSON values and PDF arrays/dictionaries. */
  nestingDepth: number;
  /** Most pages of a PDF, read from its page tree before any page is parsed. */
  pages: number;
  /** Pages of a PDF per checkpoint: each finished range's blocks are stored, and a retried parse resumes after the last one. */
  checkpointPages: number;
}

/** The parser processes: how many, and the memory and time each file may take. */
export interface ParserCeilings {
  processes: number;
  memoryMb: number;
  timeoutSec: number;
  /** An idle parser process exits after this many seconds, giving its memory back; the next file starts a fresh one. */
  idleSec: number;
  /** Time one page of a PDF (or one image) may take; a process silent for longer on a page is killed. */
  pageTimeoutSec: number;
  /** Files per worker process that may wait for a parser (extraction task slots beyond the processes). */
  waitingFiles: number;
}

const MB = 1024 * 1024;

/** Small entries may compress extremely well (a page of spaces); the ratio only matters past this size. */
export const RATIO_GRACE_BYTES = MB;

/** The environment variable behind each limit, named in every refusal so an operator knows what to raise. */
export const LIMIT_VARIABLES = {
  textBytes: 'CAIRN_PARSE_TEXT_MAX_MB',
  zipEntries: 'CAIRN_PARSE_ZIP_MAX_ENTRIES',
  inflateTotalBytes: 'CAIRN_PARSE_INFLATE_MAX_MB',
  inflateEntryBytes: 'CAIRN_PARSE_INFLATE_ENTRY_MAX_MB',
  inflateRatio: 'CAIRN_PARSE_INFLATE_MAX_RATIO',
  imagePixels: 'CAIRN_PARSE_IMAGE_MAX_MEGAPIXELS',
  nestingDepth: 'CAIRN_PARSE_MAX_DEPTH',
  pages: 'CAIRN_PARSE_MAX_PAGES',
  checkpointPages: 'CAIRN_PARSE_CHECKPOINT_PAGES',
  pageTimeoutSec: 'CAIRN_PARSE_PAGE_TIMEOUT_SEC',
  waitingFiles: 'CAIRN_PARSE_WAITING_FILES',
  memoryMb: 'CAIRN_PARSE_MEMORY_MB',
  timeoutSec: 'CAIRN_PARSE_TIMEOUT_SEC',
  processes: 'CAIRN_PARSE_PROCESSES',
  idleSec: 'CAIRN_PARSE_IDLE_SEC',
} as const;

export const DEFAULT_PARSE_LIMITS: ParseLimits = {
  textBytes: 50 * MB,
  zipEntries: 10_000,
  inflateTotalBytes: 512 * MB,
  inflateEntryBytes: 256 * MB,
  inflateRatio: 200,
  imagePixels: 64_000_000,
  nestingDepth: 256,
  pages: 10_000,
  checkpointPages: 100,
};

/** The limits CAIRN_PARSE_* set in `env` (read by loadConfig; each value by its declared parser). */
export function parseLimitsFrom(env: SettingsEnv): ParseLimits {
  const d = DEFAULT_PARSE_LIMITS;
  const v = LIMIT_VARIABLES;
  return {
    textBytes: Math.round((readSetting(env, v.textBytes) ?? d.textBytes / MB) * MB),
    zipEntries: readSetting(env, v.zipEntries) ?? d.zipEntries,
    inflateTotalBytes: Math.round((readSetting(env, v.inflateTotalBytes) ?? d.inflateTotalBytes / MB) * MB),
    inflateEntryBytes: Math.round((readSetting(env, v.inflateEntryBytes) ?? d.inflateEntryBytes / MB) * MB),
    inflateRatio: readSetting(env, v.inflateRatio) ?? d.inflateRatio,
    imagePixels: Math.round((readSetting(env, v.imagePixels) ?? d.imagePixels / 1e6) * 1e6),
    nestingDepth: readSetting(env, v.nestingDepth) ?? d.nestingDepth,
    pages: readSetting(env, v.pages) ?? d.pages,
    checkpointPages: readSetting(env, v.checkpointPages) ?? d.checkpointPages,
  };
}

/** The parser processes CAIRN_PARSE_* set in `env`; CAIRN_PARSE_THREADS is the pool size's name from when parsers ran on threads. */
export function parserCeilingsFrom(env: SettingsEnv): ParserCeilings {
  // Half the CPUs: the embedding model uses them all and takes ~10x the CPU of extraction, and each
  // parser process holds its memory while it lives (bench/ingest/run.ts measures it; docs/operations.md, "Memory").
  const defaultProcesses = Math.max(1, Math.min(4, Math.floor(availableParallelism() / 2)));
  return {
    processes: readSetting(env, 'CAIRN_PARSE_PROCESSES') ?? defaultProcesses,
    memoryMb: readSetting(env, 'CAIRN_PARSE_MEMORY_MB') ?? 1024,
    timeoutSec: readSetting(env, 'CAIRN_PARSE_TIMEOUT_SEC') ?? 600,
    idleSec: readSetting(env, 'CAIRN_PARSE_IDLE_SEC') ?? 30,
    pageTimeoutSec: readSetting(env, 'CAIRN_PARSE_PAGE_TIMEOUT_SEC') ?? 120,
    waitingFiles: readSetting(env, 'CAIRN_PARSE_WAITING_FILES') ?? 200,
  };
}

/** "512 MB", "1.5 GB": sizes in refusals. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * MB) return `${(bytes / (1024 * MB)).toFixed(1)} GB`;
  if (bytes >= MB) return `${Math.round((bytes / MB) * 10) / 10} MB`;
  return `${Math.ceil(bytes / 1024)} KB`;
}
