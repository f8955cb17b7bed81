import type { ChunkRequest } from '../chunking/chunk-file.js';
import type { PageRange } from './checkpoint.js';
import type { ParseLimits } from './limits.js';

// Under tsx, source maps are on, and Node then keeps a parsed map of every module tsx transformed:
// for pdfjs alone, a large part of this process. Error messages, not stack traces, leave this process.
process.setSourceMapsEnabled(false);
const { extract } = await import('./index.js');
const { chunkFile, encodeChunks } = await import('../chunking/chunk-file.js');

/**
 * Child-process side of the parser pool: one file at a time, progress messages, then the result (the
 * extracted document, or its chunks, encoded, when the job asks for them) or the error. The parent enforces the
 * memory and time ceilings by killing this process.
 */
interface Job {
  type: 'job';
  id: number;
  bytes: Uint8Array;
  filename: string;
  chunking?: ChunkRequest;
  limits: ParseLimits;
  /** Page ranges an earlier attempt finished (absent: none). */
  resume?: PageRange[];
}

const send = (message: unknown): void => void process.send?.(message);

process.on('message', async ({ id, bytes, filename, chunking, limits, resume }: Job) => {
  try {
    const doc = await extract(bytes, filename, {
      limits,
      onProgress: (fraction, message) => send({ id, type: 'progress', fraction, message }),
      checkpoints: { done: resume ?? [], save: (range) => send({ id, type: 'checkpoint', range }) },
    });
    if (!chunking) return send({ id, type: 'done', result: doc });
    send({ id, type: 'done', result: encodeChunks(chunkFile(doc, chunking, filename)) });
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    send({ id, type: 'error', name: e.name, message: e.message });
  }
});

// The parent went away (it exited or was killed): nothing will ever be asked of this process again.
process.on('disconnect', () => process.exit(0));

send({ type: 'ready' });
