import type { ExtractOptions } from './extractor.js';
import type { ExtractedDocument } from './types.js';
import { startModuleWorker } from '../threads.js';

type Message =
  | { type: 'progress'; fraction: number; message: string }
  | { type: 'done'; doc: ExtractedDocument }
  | { type: 'error'; name: string; message: string };

/**
 * Runs `extract` in a worker thread of its own: parsing a large file never blocks the event loop of the
 * process (the API, when the worker is embedded), the parsers' global polyfills stay in that thread, and
 * a cancel terminates the thread at once. Errors keep their name (UnsupportedFormatError, CorruptFileError).
 */
export function extractInThread(bytes: Uint8Array, filename: string, options: ExtractOptions = {}): Promise<ExtractedDocument> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(options.signal.reason);
    const copy = new Uint8Array(bytes);
    const worker = startModuleWorker(new URL('./thread-worker.ts', import.meta.url), { workerData: { bytes: copy, filename }, transferList: [copy.buffer] });
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      fn();
    };
    const onAbort = () => finish(() => reject(options.signal!.reason));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (msg: Message) => {
      if (msg.type === 'progress') options.onProgress?.(msg.fraction, msg.message);
      else if (msg.type === 'done') finish(() => resolve(msg.doc));
      else finish(() => reject(Object.assign(new Error(msg.message), { name: msg.name })));
    });
    worker.on('error', (err) => finish(() => reject(err)));
    worker.on('exit', (code) => finish(() => reject(new Error(`the parser thread for ${filename} exited (code ${code})`))));
  });
}
