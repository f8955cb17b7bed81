/**
 * The owner of a reader pool's shared vector copies (vector-copies.ts): the one place that holds every
 * copy the pool's threads built, keeps their total within the bound by dropping the least recently
 * searched datasets, and tells each thread which copies to adopt and which to forget with its next read.
 * Memory is freed once no thread holds a dropped copy any more, i.e. after each thread's next read.
 */
import type { DatasetVectors } from './vector-copies.js';

/** What a reader thread is told with a read: copies to take, and copies to let go of. */
export interface VectorSync {
  adopt: DatasetVectors[];
  drop: [datasetId: string, generation: number][];
}

export class SharedVectorRegistry {
  /** Least recently searched first. */
  private readonly held = new Map<string, DatasetVectors>();
  /** Per thread, the copies it was last told about. */
  private readonly told = new Map<unknown, Map<string, DatasetVectors>>();

  constructor(private readonly maxBytes: number) {}

  /**
   * A copy `thread` built: kept unless one as new of the dataset is held; then the bound is enforced. The
   * thread holds it already, so it will be told to drop it when it is dropped.
   */
  register(copy: DatasetVectors, thread: unknown): void {
    const current = this.held.get(copy.datasetId);
    if (current && current.generation >= copy.generation) return;
    this.held.delete(copy.datasetId);
    this.held.set(copy.datasetId, copy);
    this.toldOf(thread).set(copy.datasetId, copy);
    this.evict(new Set([copy.datasetId]));
  }

  private toldOf(thread: unknown): Map<string, DatasetVectors> {
    let told = this.told.get(thread);
    if (!told) this.told.set(thread, (told = new Map()));
    return told;
  }

  /** Datasets a thread searched: they move to the most recently searched end. */
  used(datasetIds: string[]): void {
    for (const id of datasetIds) {
      const copy = this.held.get(id);
      if (!copy) continue;
      this.held.delete(id);
      this.held.set(id, copy);
    }
  }

  /** What `thread` must adopt and drop to hold what the registry holds; undefined when nothing changed. */
  syncFor(thread: unknown): VectorSync | undefined {
    const told = this.toldOf(thread);
    const adopt = [...this.held.values()].filter((copy) => told.get(copy.datasetId) !== copy);
    const drop: VectorSync['drop'] = [...told.values()]
      .filter((copy) => this.held.get(copy.datasetId) !== copy)
      .map((copy) => [copy.datasetId, copy.generation]);
    if (adopt.length === 0 && drop.length === 0) return undefined;
    for (const [id] of drop) told.delete(id);
    for (const copy of adopt) told.set(copy.datasetId, copy);
    return { adopt, drop };
  }

  /** A thread that is gone. */
  forget(thread: unknown): void {
    this.told.delete(thread);
  }

  copies(): DatasetVectors[] {
    return [...this.held.values()];
  }

  size(): { datasets: number; vectors: number; bytes: number } {
    let vectors = 0;
    let bytes = 0;
    for (const copy of this.held.values()) {
      for (const g of copy.groups) vectors += g.rows.length;
      bytes += copy.bytes;
    }
    return { datasets: this.held.size, vectors, bytes };
  }

  private evict(keep: Set<string>): void {
    let bytes = this.size().bytes;
    for (const [id, copy] of this.held) {
      if (bytes <= this.maxBytes) return;
      if (keep.has(id)) continue;
      bytes -= copy.bytes;
      this.held.delete(id);
    }
  }
}
