import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../threads.js';
import { SharedVectorRegistry, type VectorSync } from '../vectors/shared-vector-registry.js';
import type { SqliteChunkIndexOptions } from './sqlite-index.js';
import type { CacheSize, ChunkIndex } from './chunk-index.js';
import { DEFAULT_VECTORS_BYTES, type DatasetVectors } from '../vectors/vector-copies.js';

/** The ChunkIndex reads a reader thread serves. */
type Reads = Pick<ChunkIndex, 'fullText' | 'vectorSearch' | 'cosineSimilarities' | 'getMany' | 'list' | 'countByDocument'>;
export type ReadMethod = keyof Reads;

export type ReadRequest = { [M in ReadMethod]: { id: number; method: M; args: Parameters<Reads[M]> } }[ReadMethod];
/** A read as sent to a thread: with the shared vector copies it must adopt or drop first, if any changed. */
export type ReadMessage = ReadRequest & { vectors?: VectorSync };
export type ReadReply =
  | { id: number; ok: true; result: unknown; caches: CacheSize[]; vectorsUsed: string[] }
  | { id: number; ok: false; name: string; message: string };
/** What a thread posts: answers to reads, and the vector copies it built (after a read, on its own). */
export type ReaderMessage = ReadReply | { built: DatasetVectors };

/** What a reader thread is started with. */
export interface ReaderData {
  file: string;
  options: SqliteChunkIndexOptions;
}

interface Job {
  request: ReadRequest;
  resolve(result: unknown): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  job?: Job;
  /** The thread's caches as of its last answer. */
  caches?: CacheSize[];
}

/**
 * A few worker threads, each with its own read-only connection to the index database (WAL lets them read
 * while the owner's connection writes), running the index's searches off the caller's event loop. Reads
 * wait in one queue and go to whichever thread is free, so a slow read never holds up the ones behind it
 * while another thread is idle. Threads are started at once (a query never waits for one to boot), do not
 * keep the process alive while idle, and a thread that dies is replaced on the next read.
 */
export class SqliteReadPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  /** One thread at a time builds an in-memory full-text copy (postings-cache.ts): holder's thread id + 1, or 0. */
  private readonly postingsBuildLock = new Int32Array(new SharedArrayBuffer(4));
  /** The same for the vector copies, which the threads share (shared-vector-registry.ts). */
  private readonly vectorsBuildLock = new Int32Array(new SharedArrayBuffer(4));
  private readonly vectors: SharedVectorRegistry;

  constructor(
    private readonly file: string,
    readonly size: number,
    private readonly options: SqliteChunkIndexOptions = {},
  ) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`SqliteReadPool needs at least one thread (got ${size})`);
    this.vectors = new SharedVectorRegistry(options.vectorsCacheBytes ?? DEFAULT_VECTORS_BYTES);
    for (let i = 0; i < size; i++) this.spawn();
  }

  run<M extends ReadMethod>(method: M, args: Parameters<Reads[M]>): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the index reader pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ request: { id: this.nextId++, method, args } as ReadRequest, resolve, reject });
      this.dispatch();
    });
  }

  /** The threads' caches (as of their last answers), summed per cache; the shared vector copies once. */
  cacheSizes(): CacheSize[] {
    const byName = new Map<string, CacheSize>();
    const vectors = this.vectors.size();
    byName.set('vectors', { name: 'vectors', entries: vectors.vectors, bytes: vectors.bytes });
    for (const size of this.slots.flatMap((s) => s.caches ?? [])) {
      if (size.name === 'vectors') continue;
      const sum = byName.get(size.name) ?? { name: size.name, entries: 0 };
      sum.entries += size.entries;
      if (size.bytes !== undefined) sum.bytes = (sum.bytes ?? 0) + size.bytes;
      byName.set(size.name, sum);
    }
    return [...byName.values()];
  }

  /** The vector copies the threads share now (one per dataset; their memory is the threads' memory). */
  sharedVectors(): DatasetVectors[] {
    return this.vectors.copies();
  }

  /** Reads running and waiting now. */
  load(): { running: number; queued: number } {
    return { running: this.slots.filter((s) => s.job).length, queued: this.queue.length };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the index reader pool is closed'));
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      const slot = this.slots.find((s) => !s.job) ?? (this.slots.length < this.size ? this.spawn() : undefined);
      if (!slot) return;
      const job = this.queue.shift()!;
      slot.job = job;
      slot.worker.ref();
      const message: ReadMessage = { ...job.request, vectors: this.vectors.syncFor(slot) };
      slot.worker.postMessage(message);
    }
  }

  private spawn(): Slot {
    const data: ReaderData = {
      file: this.file,
      options: { ...this.options, postingsBuildLock: this.postingsBuildLock, vectorsBuildLock: this.vectorsBuildLock },
    };
    const slot: Slot = { worker: startModuleWorker(new URL('./sqlite-read-worker.ts', import.meta.url), { workerData: data }) };
    const threadId = slot.worker.threadId;
    slot.worker.unref();
    slot.worker.on('message', (reply: ReaderMessage) => {
      if ('built' in reply) {
        this.vectors.register(reply.built, slot);
        return;
      }
      const job = slot.job;
      if (!job || job.request.id !== reply.id) return;
      slot.job = undefined;
      slot.worker.unref();
      if (reply.ok) {
        slot.caches = reply.caches;
        this.vectors.used(reply.vectorsUsed);
        job.resolve(reply.result);
      }
      else job.reject(Object.assign(new Error(reply.message), { name: reply.name }));
      this.dispatch();
    });
    const lost = (why: string) => {
      // A thread that died while building leaves the lock to the others.
      Atomics.compareExchange(this.postingsBuildLock, 0, threadId + 1, 0);
      Atomics.compareExchange(this.vectorsBuildLock, 0, threadId + 1, 0);
      this.vectors.forget(slot);
      const i = this.slots.indexOf(slot);
      if (i < 0) return;
      this.slots.splice(i, 1);
      const job = slot.job;
      slot.job = undefined;
      job?.reject(new Error(this.closed ? 'the index reader pool is closed' : `index reader thread ${why} during ${job.request.method}`));
      this.dispatch();
    };
    slot.worker.on('error', (err) => lost(`failed (${err.message})`));
    slot.worker.on('exit', (code) => lost(`exited (code ${code})`));
    this.slots.push(slot);
    return slot;
  }
}
