/**
 * When a dataset's in-memory copy is (re)built: the policy shared by the full-text copies
 * (fulltext/postings-cache.ts) and the vector copies (vectors/vector-copies.ts) of a connection.
 *
 * A copy is exact for the generation of its dataset it was built at (chunk_generations, bumped by every
 * write transaction in any process). Rebuilding costs about a second of CPU at 100k chunks (bench/retrieval/vector-leg.ts
 * prints a vector copy's build; bench/retrieval/fulltext.ts a full-text copy's), so a dataset being written
 * is not rebuilt after every write: a copy is (re)built only once its dataset has kept the same generation
 * for `quietMs` (as first seen by this policy), and at least REBUILD_FACTOR times as long as its last build
 * took, so that rebuilds take at most a small share of the time. Until then the caller searches SQLite
 * (FTS5, sqlite-vec), which is always current. quietMs 0 rebuilds a copy at the first search after every
 * write (tests; small datasets).
 *
 * A build never runs inside a search: the search that finds a copy due is served from SQLite and schedules
 * the build for after it (`schedule`, default setImmediate), so no caller waits seconds for a rebuild.
 */

/** A stale copy is rebuilt only after its dataset has been left alone this many times its last build time. */
const REBUILD_FACTOR = 10;

export interface RebuildOptions {
  /** Bound of all copies together, in bytes; a dataset whose copy would not fit is served from SQLite. 0 = never. */
  maxBytes: number;
  /** A dataset's generation must be this old (as first seen here) before its copy is built; 0 = at once. */
  quietMs: number;
  /**
   * Shared by the connections of a process (SharedArrayBuffer): 0 when free, else the thread id + 1 of the
   * one building a copy (sqlite-read-pool.ts frees a dead thread's lock by that value). A connection that
   * finds it taken is served from SQLite and builds later, so that the reader threads never all stop
   * serving for a build at the same time.
   */
  buildLock?: Int32Array;
  /** This connection's thread id (its + 1 is written into the lock while it builds). */
  threadId?: number;
  now?: () => number;
  /** Runs a due build after the search that found it due (default setImmediate; tests run it at once). */
  schedule?: (build: () => void) => void;
  /** A scheduled build that failed (SQLite serves meanwhile; the next search schedules it again). */
  onBuildError?: (err: unknown) => void;
}

/** A connection's record of when each dataset's copy may be built, and the running of the builds. */
export class RebuildPolicy {
  /** When this connection first saw each dataset at its current generation. */
  private readonly seen = new Map<string, { generation: number; since: number }>();
  /** Datasets whose copy would not fit, at the generation that was measured. */
  private readonly tooBig = new Map<string, number>();
  /** Datasets with a build scheduled and not yet run. */
  private readonly scheduled = new Set<string>();
  private readonly now: () => number;
  private readonly schedule: (build: () => void) => void;

  constructor(private readonly options: RebuildOptions) {
    this.now = options.now ?? (() => performance.now());
    this.schedule = options.schedule ?? ((build) => void setImmediate(build));
  }

  /**
   * Whether a dataset with no copy at `generation` is due for a build: not known to be too big at that
   * generation, and left alone long enough after `lastBuildMs` (the build time of the stale copy held).
   */
  isDue(datasetId: string, generation: number, lastBuildMs = 0): boolean {
    if (this.tooBig.get(datasetId) === generation) return false;
    if (this.options.quietMs > 0) {
      const now = this.now();
      const seen = this.seen.get(datasetId);
      if (!seen || seen.generation !== generation) {
        this.seen.set(datasetId, { generation, since: now });
        return false;
      }
      if (now - seen.since < Math.max(this.options.quietMs, REBUILD_FACTOR * lastBuildMs)) return false;
    }
    return true;
  }

  /** Whether a copy of `bytes` fits the bound; one that does not is remembered as too big at `generation`. */
  fits(datasetId: string, generation: number, bytes: number): boolean {
    if (bytes > this.options.maxBytes) {
      this.tooBig.set(datasetId, generation);
      return false;
    }
    return true;
  }

  isScheduled(datasetId: string): boolean {
    return this.scheduled.has(datasetId);
  }

  /** Schedules the dataset's build unless one is scheduled already; a failure goes to onBuildError (else is thrown). */
  scheduleBuild(datasetId: string, build: () => void): void {
    if (this.scheduled.has(datasetId)) return;
    this.scheduled.add(datasetId);
    this.schedule(() => {
      this.scheduled.delete(datasetId);
      try {
        build();
      } catch (err) {
        if (!this.options.onBuildError) throw err;
        this.options.onBuildError(err);
      }
    });
  }

  /**
   * Runs `build` holding the process's build lock, and times it; undefined, without running it, when
   * another connection of the process is building (a later search schedules it again).
   */
  buildLocked<T>(build: () => T): { built: T; buildMs: number } | undefined {
    const { buildLock } = this.options;
    const holder = (this.options.threadId ?? 0) + 1;
    if (buildLock && Atomics.compareExchange(buildLock, 0, 0, holder) !== 0) return undefined;
    const started = this.now();
    let built: T;
    try {
      built = build();
    } finally {
      if (buildLock) Atomics.store(buildLock, 0, 0);
    }
    return { built, buildMs: this.now() - started };
  }
}

/** Drops the least recently used of `copies` (first in the map), other than `keep`, until all fit in maxBytes. */
export function evictLeastRecentlyUsed<T>(copies: Map<string, T>, bytesOf: (copy: T) => number, maxBytes: number, keep: Set<string>): void {
  let bytes = 0;
  for (const copy of copies.values()) bytes += bytesOf(copy);
  for (const [id, copy] of copies) {
    if (bytes <= maxBytes) return;
    if (keep.has(id)) continue;
    bytes -= bytesOf(copy);
    copies.delete(id);
  }
}
