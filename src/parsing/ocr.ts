import { createRequire } from 'node:module';
import path from 'node:path';
import type { Worker } from 'tesseract.js';
import { OcrEngineError } from './errors.js';
import { loadTesseract } from './libraries.js';
import { joinLines } from './text.js';

/** Pixel box of a recognised paragraph in the image it was read from. */
export interface OcrParagraph {
  text: string;
  x0: number;
  x1: number;
  top: number;
  bottom: number;
}

export interface OcrResult {
  text: string;
  paragraphs: OcrParagraph[];
}

const require = createRequire(import.meta.url);
// The LSTM-only integer model: a third of the size of the legacy+LSTM data and as accurate for printed text.
const LANG_PATH = path.join(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');

/** No single image should take this long; past it the worker is presumed stuck. */
const OCR_TIMEOUT_MS = 120_000;

class OcrTimeout extends Error {
  constructor() {
    super(`text recognition gave no result within ${OCR_TIMEOUT_MS / 1000} s`);
  }
}

let worker: Promise<Worker> | undefined;
let queue: Promise<unknown> = Promise.resolve();

function sharedWorker(): Promise<Worker> {
  worker ??= loadTesseract().then(({ createWorker, OEM }) =>
    createWorker('eng', OEM.LSTM_ONLY, {
      langPath: LANG_PATH,
      cacheMethod: 'none',
      gzip: true,
      // Failures reach us as rejected jobs; without a handler tesseract.js also rethrows them asynchronously.
      errorHandler: () => {},
    }),
  ).catch((error: unknown) => {
    worker = undefined;
    throw new OcrEngineError(`OCR engine failed to start: ${(error as Error)?.message ?? error}`);
  });
  return worker;
}

/** Runs jobs one at a time: one Tesseract worker, one image in flight. */
function serialized<T>(job: () => Promise<T>): Promise<T> {
  const run = queue.then(job, job);
  queue = run.catch(() => undefined);
  return run;
}

/**
 * Recognises English text in an image (PNG, JPEG, BMP, GIF, TIFF, WebP). Throws when the bytes are not a
 * readable image. The Tesseract worker is started on first use and reused until `shutdownOcr`.
 */
export function recognize(image: Uint8Array): Promise<OcrResult> {
  return serialized(async () => {
    const w = await sharedWorker();
    let data;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new OcrTimeout()), OCR_TIMEOUT_MS).unref();
    });
    try {
      ({ data } = await Promise.race([w.recognize(Buffer.from(image), {}, { text: true, blocks: true }), timeout]));
    } catch (error) {
      // Undecodable images abort the WebAssembly module and a stuck job never ends: either way,
      // start a fresh worker next time rather than trust this one.
      if (worker) {
        worker = undefined;
        void w.terminate().catch(() => undefined);
      }
      if (error instanceof OcrTimeout) throw error;
      throw new Error('the image data could not be decoded', { cause: error });
    } finally {
      clearTimeout(timer);
    }
    const paragraphs = (data.blocks ?? [])
      .flatMap((block) => block.paragraphs)
      .map((p) => ({
        text: p.lines
          .map((line) => line.text.trim())
          .filter(Boolean)
          .reduce((text, line) => (text ? joinLines(text, line) : line), ''),
        x0: p.bbox.x0,
        x1: p.bbox.x1,
        top: p.bbox.y0,
        bottom: p.bbox.y1,
      }))
      .filter((p) => p.text !== '');
    return { text: paragraphs.map((p) => p.text).join('\n\n'), paragraphs };
  });
}

/** Terminates the shared Tesseract worker so the process can exit; the next OCR call starts a new one. */
export async function shutdownOcr(): Promise<void> {
  const current = worker;
  worker = undefined;
  if (current) await (await current.catch(() => undefined))?.terminate();
}
