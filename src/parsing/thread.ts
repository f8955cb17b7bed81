import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { ExtractOptions } from './extractor.js';
import type { ExtractedDocument } from './types.js';
import { startModuleWorker } from '../threads.js';

type Reply =
  | { id: number; type: 'progress'; fraction: number; message: string }
  | { id: number; type: 'done'; doc: ExtractedDocument }
  | { id: number; type: 'error'; name: string; message: string };

interface Job {
  id: number;
  bytes: Uint8Array;
  filename: string;
  options: ExtractOptions;
  resolve(doc: ExtractedDocument): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker;
  job?: Job;
}

/** Parser threads per process ($CAIRN_PARSE_THREADS, default the CPUs up to 4): each costs ~250 MB. */
const POOL_SIZE = Number(process.env.CAIRN_PARSE_THREADS) || Math.max(1, Math.min(4, availableParallelism()));

const slots: Slot[] = [];
const queue: Job[] = [];
let nextId = 1;

/**
 * Runs `extract` on a small pool of worker threads: parsing never blocks the event loop of the process
 * (the API, when the worker is embedded), the parsers' global polyfills stay in those threads, and a
 * cancel terminates the thread at once (a fresh one takes its place). Errors keep their name
 * (UnsupportedFormatError, CorruptFileError). Extra requests wait in a queue.
 */
export function extractInThread(bytes: Uint8Array, filename: string, options: ExtractOptions = {}): Promise<ExtractedDocument> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(options.signal.reason);
    const job: Job = { id: nextId++, bytes, filename, options, resolve, reject };
    options.signal?.addEventListener('abort', () => cancel(job), { once: true });
    queue.push(job);
    dispatch();
  });
}

function dispatch(): void {
  while (queue.length > 0) {
    let slot = slots.find((s) => !s.job);
    if (!slot && slots.length < POOL_SIZE) slot = spawn();
    if (!slot) return;
    const job = queue.shift()!;
    slot.job = job;
    slot.worker.ref();
    const copy = new Uint8Array(job.bytes);
    slot.worker.postMessage({ id: job.id, bytes: copy, filename: job.filename }, [copy.buffer]);
  }
}

function spawn(): Slot {
  const slot: Slot = { worker: startModuleWorker(new URL('./thread-worker.ts', import.meta.url)) };
  slot.worker.on('message', (msg: Reply) => {
    const job = slot.job;
    if (!job || job.id !== msg.id) return;
    if (msg.type === 'progress') return job.options.onProgress?.(msg.fraction, msg.message);
    release(slot);
    if (msg.type === 'done') job.resolve(msg.doc);
    else job.reject(Object.assign(new Error(msg.message), { name: msg.name }));
  });
  const lost = (why: string) => {
    remove(slot);
    slot.job?.reject(new Error(`the parser thread for ${slot.job.filename} ${why}`));
    dispatch();
  };
  slot.worker.on('error', (err) => lost(`failed: ${err.message}`));
  slot.worker.on('exit', (code) => lost(`exited (code ${code})`));
  slots.push(slot);
  return slot;
}

function release(slot: Slot): void {
  slot.job = undefined;
  slot.worker.unref();
  dispatch();
}

function remove(slot: Slot): void {
  const i = slots.indexOf(slot);
  if (i >= 0) slots.splice(i, 1);
}

function cancel(job: Job): void {
  const queued = queue.indexOf(job);
  if (queued >= 0) queue.splice(queued, 1);
  const slot = slots.find((s) => s.job === job);
  if (slot) {
    // The only way to stop a parser mid-file: end its thread; dispatch() starts a fresh one when needed.
    slot.job = undefined;
    remove(slot);
    void slot.worker.terminate();
  }
  job.reject(job.options.signal!.reason);
  dispatch();
}
