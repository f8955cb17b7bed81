/**
 * Which of a Parser component's per-format setups reads a file. Pure.
 *
 * A Parser holds one settings object per file format, under `setups` or at the top of its params (both as
 * RAGFlow's templates ship). Each names its file extensions in `suffix`; a format without one reads
 * RAGFlow's default extensions. A file whose extension no setup names is refused by that Parser: the user
 * took that format out of the pipeline.
 */
import { isRecord } from '../records.js';
import { PipelinePlanError } from './plan.js';

/** RAGFlow's formats and the extensions each reads when its setup lists none. */
const DEFAULT_SUFFIXES: Record<string, string[]> = {
  pdf: ['pdf'],
  spreadsheet: ['xls', 'xlsx', 'csv'],
  doc: ['doc'],
  docx: ['docx'],
  word: ['doc', 'docx'],
  slides: ['pptx', 'ppt'],
  html: ['htm', 'html'],
  markdown: ['md', 'markdown', 'mdx'],
  'text&code': ['txt', 'py', 'js', 'java', 'c', 'cpp', 'h', 'php', 'go', 'ts', 'sh', 'cs', 'kt', 'sql', 'json'],
  image: ['jpg', 'jpeg', 'png', 'gif', 'bmp', 'tif', 'tiff', 'webp'],
  email: ['eml', 'msg'],
  epub: ['epub'],
  audio: ['mp3', 'wav', 'aac', 'flac', 'ogg', 'm4a'],
  video: ['mp4', 'avi', 'mkv', 'mov'],
};

export interface ParserSetup {
  format: string;
  settings: Record<string, unknown>;
}

/** The Parser's setups by format, from `setups` or the params' top level. */
function parserSetups(params: Record<string, unknown>): ParserSetup[] {
  const source = isRecord(params.setups) ? params.setups : params;
  return Object.entries(source)
    .filter(([format, settings]) => format in DEFAULT_SUFFIXES && isRecord(settings))
    .map(([format, settings]) => ({ format, settings: settings as Record<string, unknown> }));
}

function suffixes({ format, settings }: ParserSetup): string[] {
  const listed = Array.isArray(settings.suffix) ? settings.suffix.filter((s): s is string => typeof s === 'string') : [];
  return (listed.length ? listed : DEFAULT_SUFFIXES[format]!).map((s) => s.replace(/^\./, '').toLowerCase());
}

/** The setup that reads `filename`, or a PipelinePlanError naming the step, the extension and the formats it has. */
export function setupFor(stepId: string, params: Record<string, unknown>, filename: string): ParserSetup {
  const ext = (filename.includes('.') ? filename.slice(filename.lastIndexOf('.') + 1) : '').toLowerCase();
  const setups = parserSetups(params);
  const found = setups.find((s) => suffixes(s).includes(ext));
  if (found) return found;
  const formats = setups.map((s) => `${s.format} (${suffixes(s).join(', ')})`).join('; ') || 'none';
  throw new PipelinePlanError(`Parser '${stepId}' has no setup for .${ext || '(no extension)'} files: its formats are ${formats}. Add the format to the Parser, or use another pipeline for this file`);
}

/** What a setup asks that Cairn cannot do, refused rather than ignored: audio and video need a speech or vision model. */
export function unsupportedSetup(stepId: string, setup: ParserSetup): string | undefined {
  if (setup.format === 'audio' || setup.format === 'video') {
    return `Parser '${stepId}': ${setup.format} files need a ${setup.format === 'audio' ? 'speech-to-text' : 'vision'} model to transcribe them, which Cairn's pipelines do not call yet`;
  }
  return undefined;
}
