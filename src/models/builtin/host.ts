import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../threads.js';
import type { EncoderConfig, WorkerRequest, WorkerResponse } from './worker.js';

/*
 * One embedding worker per process, started on first use and never terminated: onnxruntime-node's
 * native binding cannot be loaded again by a second worker once one has gone ("Module did not
 * self-register", or heap corruption). The worker is unref'd while idle so it never keeps the process
 * alive, and it hosts every encoder configuration the process asks for.
 */

function startWorker(): Worker {
  return startModuleWorker(new URL('./worker.ts', import.meta.url));
}

interface Pending {
  resolve: (vectors: Float32Array) => void;
  reject: (err: Error) => void;
}

let worker: Worker | undefined;
const pending = new Map<number, Pending>();
let nextId = 1;

function failAll(dead: Worker, message: string): void {
  if (worker !== dead) return;
  worker = undefined;
  for (const call of pending.values()) call.reject(new Error(message));
  pending.clear();
}

function ensureWorker(): Worker {
  if (worker) return worker;
  const started = startWorker();
  started.unref();
  started.on('message', (msg: WorkerResponse) => {
    const call = pending.get(msg.id);
    if (!call) return;
    pending.delete(msg.id);
    if (pending.size === 0) started.unref();
    if (msg.ok) call.resolve(msg.vectors);
    else call.reject(new Error(msg.message));
  });
  started.on('error', (err) => failAll(started, `embedding worker crashed: ${err.message}`));
  started.on('exit', (code) => failAll(started, `embedding worker exited (code ${code})`));
  worker = started;
  return started;
}

/** Whether the embedding worker is running, and how many batches it has been sent and not yet answered. */
export function embeddingWorkerStatus(): { running: boolean; pending: number } {
  return { running: worker !== undefined, pending: pending.size };
}

/** Embeds texts with the given encoder configuration in the shared worker; texts.length * dims floats. */
export function embedInWorker(config: EncoderConfig, texts: string[]): Promise<Float32Array> {
  const target = ensureWorker();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    target.ref();
    target.postMessage({ id, config, texts } satisfies WorkerRequest);
  });
}
