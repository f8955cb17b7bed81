import { parentPort } from 'node:worker_threads';
import { extract } from './index.js';

/** Worker-thread side of the extraction pool: one file at a time, progress messages, then the result or the error. */
const port = parentPort!;

port.on('message', async ({ id, bytes, filename }: { id: number; bytes: Uint8Array; filename: string }) => {
  try {
    const doc = await extract(bytes, filename, { onProgress: (fraction, message) => port.postMessage({ id, type: 'progress', fraction, message }) });
    port.postMessage({ id, type: 'done', doc });
  } catch (err) {
    const e = err as Error;
    port.postMessage({ id, type: 'error', name: e.name, message: e.message });
  }
});
