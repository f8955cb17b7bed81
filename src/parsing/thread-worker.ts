import { parentPort, workerData } from 'node:worker_threads';
import { extract, shutdownOcr } from './index.js';

/** Worker-thread side of extractInThread: one file, progress messages, then the result or the error. */
const { bytes, filename } = workerData as { bytes: Uint8Array; filename: string };
const port = parentPort!;

try {
  const doc = await extract(bytes, filename, { onProgress: (fraction, message) => port.postMessage({ type: 'progress', fraction, message }) });
  port.postMessage({ type: 'done', doc });
} catch (err) {
  const e = err as Error;
  port.postMessage({ type: 'error', name: e.name, message: e.message });
} finally {
  await shutdownOcr();
}
