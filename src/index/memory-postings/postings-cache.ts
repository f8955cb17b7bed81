/**
 * The in-memory full-text copies (dataset-postings.ts) of the datasets a connection searches, built
 * lazily and bounded in bytes.
 *
 * A copy is exact for the generation of its dataset it was built at (chunk_generations, bumped by every
 * write transaction in any process). Rebuilding costs seconds at 100k chunks, so a dataset being written
 * is not rebuilt after every write: a copy is (re)built only once its dataset has kept the same generation
 * for `quietMs`, and at least REBUILD_FACTOR times as long as its last build took, so that rebuilds take at
 * most a small share of the time. Until then the caller searches with FTS5, which is always current.
 * quietMs 0 rebuilds a copy at the first search after every write (tests; small datasets).
 *
 * A build never runs inside a search: the search that finds a copy due answers from FTS5 and schedules the
 * build for after it (`schedule`, default setImmediate), so no caller waits seconds for a rebuild.
 */
import { DatasetPostings } from './dataset-postings.js';

/** A stale copy is rebuilt only after its dataset has been left alone this many times its last build time. */
const REBUILD_FACTOR = 10;
/** Estimated bytes per token of a dataset (a posting is 6 bytes; a chunk has fewer distinct words than tokens). */
const BYTES_PER_TOKEN = 6;
/** Estimated bytes per chunk besides its postings: row id, flags, length, scratch, id string. */
const BYTES_PER_CHUNK = 120;

export interface PostingsSource {
  generations(datasetIds: string[]): Map<string, number>;
  /** Chunks the dataset holds now. */
  chunkCount(datasetId: string): number;
  /** Builds the dataset's copy from one consistent read of its rows, with the generation they are at. */
  build(datasetId: string): { generation: number; postings: DatasetPostings };
}

export interface PostingsCacheOptions {
  /** Bound of all copies together; a dataset whose copy would not fit is searched with FTS5. */
  maxBytes: number;
  /** A dataset's generation must be this old (as first seen by this cache) before a copy is built; 0 = at once. */
  quietMs: number;
  /**
   * Shared by the connections of a process (SharedArrayBuffer): 0 when free, else the thread id of the
   * one building a copy. A connection that finds it taken searches with FTS5 and builds later, so that the
   * reader threads never all stop serving for a build at the same time.
   */
  buildLock?: Int32Array;
  /** This connection's thread id, written into the lock while it builds. */
  threadId?: number;
  now?: () => number;
  /** Runs a due build after the search that found it due (default setImmediate; tests run it at once). */
  schedule?: (build: () => void) => void;
  /** A scheduled build that failed (the next search schedules it again; FTS5 serves meanwhile). */
  onBuildError?: (err: unknown) => void;
}

interface Copy {
  generation: number;
  postings: DatasetPostings;
  buildMs: number;
}

export class PostingsCache {
  /** Least recently used first. */
  private readonly copies = new Map<string, Copy>();
  /** When this cache first saw each dataset at its current generation. */
  private readonly seen = new Map<string, { generation: number; since: number }>();
  /** Datasets whose copy would not fit, at the generation that was measured. */
  private readonly tooBig = new Map<string, number>();
  private readonly now: () => number;
  private readonly schedule: (build: () => void) => void;
  /** Datasets with a build scheduled and not yet run. */
  private readonly scheduled = new Set<string>();
  private builds = 0;

  constructor(
    private readonly source: PostingsSource,
    private readonly options: PostingsCacheOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
    this.schedule = options.schedule ?? ((build) => void setImmediate(build));
  }

  /**
   * Current copies of all the datasets, building the ones that are due; undefined when any of them has
   * no current copy (being written, or too big), in which case the caller searches with FTS5.
   * `averageLength` (tokens per chunk) sizes a copy before it is built.
   */
  current(datasetIds: string[], averageLength: number): DatasetPostings[] | undefined {
    if (!(this.options.maxBytes > 0)) return undefined;
    const wanted = [...new Set(datasetIds)];
    const generations = this.source.generations(wanted);
    const found: DatasetPostings[] = [];
    for (const id of wanted) {
      const copy = this.currentCopy(id, generations.get(id) ?? 0, averageLength);
      if (!copy) break;
      this.copies.delete(id);
      this.copies.set(id, copy);
      found.push(copy.postings);
    }
    this.evict(new Set(wanted));
    return found.length === wanted.length ? found : undefined;
  }

  private currentCopy(id: string, generation: number, averageLength: number): Copy | undefined {
    const cached = this.copies.get(id);
    if (cached?.generation === generation) return cached;
    if (this.tooBig.get(id) === generation) return undefined;
    if (this.options.quietMs > 0) {
      const now = this.now();
      const seen = this.seen.get(id);
      if (!seen || seen.generation !== generation) {
        this.seen.set(id, { generation, since: now });
        return undefined;
      }
      if (now - seen.since < Math.max(this.options.quietMs, REBUILD_FACTOR * (cached?.buildMs ?? 0))) return undefined;
    }
    const estimate = this.source.chunkCount(id) * (averageLength * BYTES_PER_TOKEN + BYTES_PER_CHUNK);
    if (estimate > this.options.maxBytes) {
      this.tooBig.set(id, generation);
      return undefined;
    }
    if (!this.scheduled.has(id)) {
      this.scheduled.add(id);
      this.schedule(() => {
        this.scheduled.delete(id);
        try {
          this.build(id);
        } catch (err) {
          if (!this.options.onBuildError) throw err;
          this.options.onBuildError(err);
        }
      });
    }
    const copy = this.copies.get(id);
    // Written between the generation check and the build's read: the copy serves a later query.
    return copy?.generation === generation ? copy : undefined;
  }

  /** Builds the dataset's copy unless another connection of the process is building one (then a later search schedules it again). */
  private build(id: string): void {
    const { buildLock } = this.options;
    const holder = (this.options.threadId ?? 0) + 1;
    if (buildLock && Atomics.compareExchange(buildLock, 0, 0, holder) !== 0) return;
    const started = this.now();
    let built: ReturnType<PostingsSource['build']>;
    try {
      built = this.source.build(id);
    } finally {
      if (buildLock) Atomics.store(buildLock, 0, 0);
    }
    this.builds++;
    const copy = { generation: built.generation, postings: built.postings, buildMs: this.now() - started };
    if (copy.postings.bytes > this.options.maxBytes) {
      this.copies.delete(id);
      this.tooBig.set(id, copy.generation);
      return;
    }
    this.copies.set(id, copy);
  }

  /** Drops the least recently used copies, other than `keep`, until all fit in maxBytes. */
  private evict(keep: Set<string>): void {
    let bytes = this.size().bytes;
    for (const [id, copy] of this.copies) {
      if (bytes <= this.options.maxBytes) return;
      if (keep.has(id)) continue;
      bytes -= copy.postings.bytes;
      this.copies.delete(id);
    }
  }

  /** What the copies hold now, for /metrics; `builds` counts the copies built so far. */
  size(): { datasets: number; chunks: number; bytes: number; builds: number } {
    let chunks = 0;
    let bytes = 0;
    for (const { postings } of this.copies.values()) {
      chunks += postings.rowCount;
      bytes += postings.bytes;
    }
    return { datasets: this.copies.size, chunks, bytes, builds: this.builds };
  }
}
