/** Worker-thread side of the index reader pool (sqlite-read-pool.ts): one read at a time on its own connection. */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { cosinesInOrder, packHits, transferablesOf } from './hit-wire.js';
import { openIndexReader } from '../sqlite-database.js';
import { SqliteChunkIndex } from './sqlite-index.js';
import type { ReaderData, ReaderMessage, ReadMessage, ReadReply, ReadRequest } from './sqlite-read-pool.js';

const READER_NICENESS = 5;

/**
 * Searches yield the CPU to the event loop: when the process has more runnable threads than CPUs, the
 * thread that answers healthz and light routes runs first. Linux gives each thread its own nice value;
 * elsewhere (no /proc/thread-self) the thread keeps the process's priority.
 */
function yieldToEventLoop(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    setPriority(tid, Math.min(19, getPriority(tid) + READER_NICENESS));
  } catch {
    // Not Linux, or not allowed: same priority as the event loop.
  }
}

const port = parentPort!;
const { file, options } = workerData as ReaderData;
yieldToEventLoop();
// The vector copies this thread builds go to the pool, which shares them with the other threads.
const index = new SqliteChunkIndex(openIndexReader(file), {
  ...options,
  readOnly: true,
  vectorsPublish: (copy) => port.postMessage({ built: copy } satisfies ReaderMessage),
});

async function answer(req: ReadRequest): Promise<{ result: unknown; transfer: ArrayBuffer[] }> {
  switch (req.method) {
    case 'fullText':
    case 'vectorSearch': {
      const [query, filter, limit] = req.args;
      const rows = req.method === 'fullText'
        ? index.fullTextHits(query as string, filter, limit)
        : index.vectorSearchHits(query as number[], filter, limit);
      const packed = packHits(rows);
      return { result: packed, transfer: transferablesOf(packed) };
    }
    case 'cosineSimilarities': {
      const [ids, vector] = req.args;
      const cosines = cosinesInOrder(ids, index.cosineSimilaritiesNow(ids, vector));
      return { result: cosines, transfer: [cosines.buffer as ArrayBuffer] };
    }
    case 'getMany':
      return { result: await index.getMany(...req.args), transfer: [] };
    case 'list':
      return { result: await index.list(...req.args), transfer: [] };
    case 'countByDocument':
      return { result: await index.countByDocument(...req.args), transfer: [] };
  }
}

port.on('message', async (req: ReadMessage) => {
  try {
    if (req.vectors) index.syncVectors(req.vectors);
    const { result, transfer } = await answer(req);
    const reply: ReadReply = { id: req.id, ok: true, result, caches: await index.cacheSizes(), vectorsUsed: index.takeVectorsUsed() };
    port.postMessage(reply, transfer);
  } catch (err) {
    const e = err as Error;
    port.postMessage({ id: req.id, ok: false, name: e.name, message: e.message } satisfies ReadReply);
  }
});
