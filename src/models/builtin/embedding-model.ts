import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ModelError, type EmbeddingModel } from '../types.js';
import { locateModelFiles, type ModelFiles } from './locate.js';
import { BUILTIN_FACTORY, MINILM_L6_V2, type BuiltinModelSpec } from './spec.js';
import type { WorkerData, WorkerRequest, WorkerResponse } from './worker.js';

export interface BuiltinEmbeddingOptions {
  spec?: BuiltinModelSpec;
  /** Model files; located with locateModelFiles() when omitted. */
  files?: ModelFiles;
  /** Texts per ONNX run (default 32). */
  batchSize?: number;
  /** Padded tokens per ONNX run (default 2048): bounds how long a query waits behind a running batch. */
  batchTokens?: number;
  /** ONNX Runtime threads (default $CAIRN_EMBED_THREADS or the number of CPUs). */
  threads?: number;
}

interface Pending {
  resolve: (vectors: number[][]) => void;
  reject: (err: Error) => void;
  count: number;
  worker: Worker;
}

/**
 * URL of tsx's ESM `register()` API. Resolved through tsx's export map by hand because this module may be
 * compiled as CommonJS (mocha), where import.meta.resolve is missing and require.resolve picks the CJS build.
 */
function tsxEsmApiUrl(): string {
  const pkgPath = createRequire(import.meta.url).resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
  return pathToFileURL(join(dirname(pkgPath), pkg.exports['./esm/api']!.import.default)).href;
}

function startWorker(workerData: WorkerData): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./worker.js', import.meta.url), { workerData });
  // Running from TypeScript sources under tsx: on Node 20 the parent's loader hooks do not reach a
  // worker's entry module, so the worker loads tsx itself before importing worker.ts.
  const entry = new URL('./worker.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(tsxEsmApiUrl())}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true, workerData });
}

function defaultThreads(): number {
  const fromEnv = Number(process.env.CAIRN_EMBED_THREADS);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : availableParallelism();
}

/**
 * The built-in, offline embedding model. Inference runs in a worker thread so the API's event loop never
 * stalls; the worker and the model are loaded on first use, and the worker does not keep the process
 * alive while idle.
 */
export class BuiltinEmbeddingModel implements EmbeddingModel {
  readonly id: string;
  readonly dims: number;
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private readonly spec: BuiltinModelSpec;

  constructor(private readonly options: BuiltinEmbeddingOptions = {}) {
    this.spec = options.spec ?? MINILM_L6_V2;
    this.id = `${this.spec.name}@${BUILTIN_FACTORY}`;
    this.dims = this.spec.dims;
  }

  embed(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return Promise.resolve([]);
    let worker: Worker;
    try {
      worker = this.ensureWorker();
    } catch (err) {
      return Promise.reject(err);
    }
    const id = this.nextId++;
    return new Promise<number[][]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, count: texts.length, worker });
      worker.ref();
      worker.postMessage({ id, texts } satisfies WorkerRequest);
    });
  }

  async verify(): Promise<void> {
    await this.embed(['ping']);
  }

  /** Stops the worker (pending calls fail); the next embed() starts a new one. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const workerData: WorkerData = {
      files: this.options.files ?? locateModelFiles(this.spec),
      spec: this.spec,
      threads: this.options.threads ?? defaultThreads(),
      limits: { maxTexts: this.options.batchSize ?? 32, maxTokens: this.options.batchTokens ?? 2048 },
    };
    const worker = startWorker(workerData);
    worker.unref();
    worker.on('message', (msg: WorkerResponse) => this.settle(worker, msg));
    worker.on('error', (err) => this.failAll(worker, `embedding worker crashed: ${err.message}`));
    worker.on('exit', (code) => this.failAll(worker, `embedding worker exited (code ${code})`));
    this.worker = worker;
    return worker;
  }

  private settle(worker: Worker, msg: WorkerResponse): void {
    const call = this.pending.get(msg.id);
    if (!call) return;
    this.pending.delete(msg.id);
    if (!this.hasPending(worker)) worker.unref();
    if (!msg.ok) {
      call.reject(new ModelError(`${BUILTIN_FACTORY}: ${msg.message}`, BUILTIN_FACTORY, 500));
      return;
    }
    const vectors: number[][] = [];
    for (let i = 0; i < call.count; i++) {
      vectors.push(Array.from(msg.vectors.subarray(i * this.dims, (i + 1) * this.dims)));
    }
    call.resolve(vectors);
  }

  private failAll(worker: Worker, message: string): void {
    if (this.worker === worker) this.worker = undefined;
    for (const [id, call] of this.pending) {
      if (call.worker !== worker) continue;
      this.pending.delete(id);
      call.reject(new ModelError(`${BUILTIN_FACTORY}: ${message}`, BUILTIN_FACTORY, 500));
    }
  }

  private hasPending(worker: Worker): boolean {
    for (const call of this.pending.values()) if (call.worker === worker) return true;
    return false;
  }
}

const shared = new Map<string, BuiltinEmbeddingModel>();

/** The process-wide instance of a built-in model (one worker and one loaded model per process). */
export function builtinEmbeddingModel(spec: BuiltinModelSpec = MINILM_L6_V2): BuiltinEmbeddingModel {
  let model = shared.get(spec.name);
  if (!model) {
    model = new BuiltinEmbeddingModel({ spec });
    shared.set(spec.name, model);
  }
  return model;
}
