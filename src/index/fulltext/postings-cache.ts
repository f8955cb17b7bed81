/**
 * The in-memory full-text copies (dataset-postings.ts) of the datasets a connection searches, built
 * lazily and bounded in bytes. When a copy is (re)built, and how builds are scheduled and locked, is
 * rebuild-policy.ts; until a dataset's copy is current the caller searches with FTS5.
 */
import { evictLeastRecentlyUsed, RebuildPolicy, type RebuildOptions } from '../rebuild-policy.js';
import { DatasetPostings } from './dataset-postings.js';

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

export type PostingsCacheOptions = RebuildOptions;

interface Copy {
  generation: number;
  postings: DatasetPostings;
  buildMs: number;
}

export class PostingsCache {
  /** Least recently used first. */
  private readonly copies = new Map<string, Copy>();
  private readonly rebuilds: RebuildPolicy;
  private builds = 0;

  constructor(
    private readonly source: PostingsSource,
    private readonly options: PostingsCacheOptions,
  ) {
    this.rebuilds = new RebuildPolicy(options);
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
    evictLeastRecentlyUsed(this.copies, (copy) => copy.postings.bytes, this.options.maxBytes, new Set(wanted));
    return found.length === wanted.length ? found : undefined;
  }

  private currentCopy(id: string, generation: number, averageLength: number): Copy | undefined {
    const cached = this.copies.get(id);
    if (cached?.generation === generation) return cached;
    if (!this.rebuilds.isDue(id, generation, cached?.buildMs)) return undefined;
    const estimate = this.source.chunkCount(id) * (averageLength * BYTES_PER_TOKEN + BYTES_PER_CHUNK);
    if (!this.rebuilds.fits(id, generation, estimate)) return undefined;
    this.rebuilds.scheduleBuild(id, () => this.build(id));
    const copy = this.copies.get(id);
    // Written between the generation check and the build's read: the copy serves a later query.
    return copy?.generation === generation ? copy : undefined;
  }

  /** Builds the dataset's copy unless another connection of the process is building one (then a later search schedules it again). */
  private build(id: string): void {
    const done = this.rebuilds.buildLocked(() => this.source.build(id));
    if (!done) return;
    this.builds++;
    const { built: { generation, postings }, buildMs } = done;
    if (!this.rebuilds.fits(id, generation, postings.bytes)) {
      this.copies.delete(id);
      return;
    }
    this.copies.set(id, { generation, postings, buildMs });
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
