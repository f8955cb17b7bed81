/**
 * An approximate nearest-neighbour index (HNSW, from the usearch library) over the vectors of one dataset
 * and one dimension, keyed by chunk row id. It finds candidates only: the vector leg over-fetches (k above
 * top_k), computes exact cosines of the candidates and applies its filters afterwards, so quantised
 * vectors (i8 by default) cost no accuracy in the result, only in which candidates are found.
 * Why usearch, and the measurements behind the defaults: docs/retrieval.md, "Approximate vector index
 * (1M chunks)".
 */
import { closeSync, fstatSync, openSync, readSync, renameSync, rmSync } from 'node:fs';
import { Index, MetricKind, ScalarKind } from 'usearch';

export type VectorQuantization = 'f32' | 'f16' | 'i8';

export interface ApproximateIndexOptions {
  /** Graph degree (HNSW "M"): more finds more at a higher build and query cost. Default 16. */
  connectivity?: number;
  /** Candidate list size while inserting (HNSW "ef_construction"). Default 128. */
  expansionAdd?: number;
  /** Candidate list size while searching; a search for k rows uses max(this, k). Default 64. */
  expansionSearch?: number;
  /** How the index stores vectors. Default i8: a quarter of f32's vector memory, ~2.5× less CPU to build. */
  quantization?: VectorQuantization;
  /** Threads for add (0 = one per core). Searches run on the calling thread. */
  threads?: number;
}

const DEFAULTS = { connectivity: 16, expansionAdd: 128, expansionSearch: 64, quantization: 'i8', threads: 0 } as const;

const BYTES_PER_SCALAR: Record<VectorQuantization, number> = { f32: 4, f16: 2, i8: 1 };
const SCALAR_KIND: Record<VectorQuantization, ScalarKind> = { f32: ScalarKind.F32, f16: ScalarKind.F16, i8: ScalarKind.I8 };

function toKeys(rows: ArrayLike<number>): BigUint64Array {
  const keys = new BigUint64Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    if (!Number.isSafeInteger(row) || row < 0) throw new RangeError(`row ids must be non-negative integers, got ${row}`);
    keys[i] = BigInt(row);
  }
  return keys;
}

/** usearch's codes for the scalar kinds it stores, and their sizes in bytes. */
const SCALAR_BYTES_BY_CODE = new Map([[10, 8], [11, 4], [12, 2], [4, 2], [23, 1], [17, 1]]);

interface SavedHead {
  dim: number;
  scalarBytes: number;
}

/**
 * What a saved index holds, read from its file before usearch loads it: usearch crashes the process on a
 * file that is not an index, and its binding does not report the quantisation. The file starts with the
 * vectors, as a matrix headed by its row count and row length in bytes (two little-endian uint32), followed
 * by the index header: "usearch", the version (3 × uint16), metric, scalar kind, key kind, slot kind
 * (1 byte each), then present and deleted counts and the dimension (uint64 each).
 */
function readHead(path: string): SavedHead {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const matrix = Buffer.alloc(8);
    if (readSync(fd, matrix, 0, 8, 0) === 8) {
      const at = 8 + matrix.readUInt32LE(0) * matrix.readUInt32LE(4);
      const head = Buffer.alloc(41);
      if (at + head.length <= size && readSync(fd, head, 0, head.length, at) === head.length && head.toString('latin1', 0, 7) === 'usearch') {
        const scalarBytes = SCALAR_BYTES_BY_CODE.get(head[14]!);
        const dim = Number(head.readBigUInt64LE(33));
        if (scalarBytes && dim > 0) return { dim, scalarBytes };
      }
    }
    throw new Error(`${path} is not a saved vector index`);
  } finally {
    closeSync(fd);
  }
}

export class ApproximateVectorIndex {
  private constructor(
    private readonly native: Index,
    readonly dim: number,
    private readonly scalarBytes: number,
    private readonly options: Required<ApproximateIndexOptions>,
  ) {}

  /** An index of `rows[i]` → `vectors[i * dim ..]`. */
  static build(dim: number, rows: ArrayLike<number>, vectors: Float32Array, options: ApproximateIndexOptions = {}): ApproximateVectorIndex {
    if (!Number.isInteger(dim) || dim <= 0) throw new RangeError(`dimension must be a positive integer, got ${dim}`);
    const settings = { ...DEFAULTS, ...options };
    const native = ApproximateVectorIndex.open(dim, settings);
    const index = new ApproximateVectorIndex(native, dim, BYTES_PER_SCALAR[settings.quantization], settings);
    index.add(rows, vectors);
    return index;
  }

  /**
   * The index saved at `path`, read into memory. Its dimension, graph degree and quantisation are the
   * file's; `options` set the search list size and build threads.
   */
  static load(path: string, options: ApproximateIndexOptions = {}): ApproximateVectorIndex {
    const settings = { ...DEFAULTS, ...options };
    const { dim, scalarBytes } = readHead(path);
    const native = ApproximateVectorIndex.open(dim, settings);
    native.load(path);
    return new ApproximateVectorIndex(native, dim, scalarBytes, settings);
  }

  private static open(dim: number, settings: Required<ApproximateIndexOptions>): Index {
    return new Index({
      dimensions: dim,
      metric: MetricKind.Cos,
      quantization: SCALAR_KIND[settings.quantization],
      connectivity: settings.connectivity,
      expansion_add: settings.expansionAdd,
      expansion_search: settings.expansionSearch,
      multi: false,
    });
  }

  /** Rows in the index. */
  get size(): number {
    return this.native.size();
  }

  /** Adds rows, replacing the vectors of rows already there. */
  add(rows: ArrayLike<number>, vectors: Float32Array): void {
    if (vectors.length !== rows.length * this.dim) {
      throw new RangeError(`${rows.length} rows of dimension ${this.dim} need ${rows.length * this.dim} values, got ${vectors.length}`);
    }
    if (rows.length === 0) return;
    const keys = toKeys(rows);
    if (new Set(keys).size !== keys.length) throw new RangeError('a row id appears twice in one add');
    const present = this.native.contains(keys) as boolean[];
    const replaced = keys.filter((_, i) => present[i]);
    if (replaced.length > 0) this.native.remove(replaced);
    this.native.add(keys, vectors, this.options.threads);
  }

  /** Removes rows (ids not in the index are ignored); returns how many were there. */
  remove(rows: ArrayLike<number>): number {
    if (rows.length === 0) return 0;
    const removed = this.native.remove(toKeys(rows)) as number[];
    return removed.reduce((sum, n) => sum + n, 0);
  }

  /** Row ids of (approximately) the k rows nearest to `query` by cosine, nearest first. */
  search(query: Float32Array | number[], k: number): number[] {
    if (query.length !== this.dim) throw new RangeError(`query has dimension ${query.length}, the index ${this.dim}`);
    if (!Number.isInteger(k) || k <= 0) throw new RangeError(`k must be a positive integer, got ${k}`);
    if (this.size === 0) return [];
    const vector = query instanceof Float32Array ? query : Float32Array.from(query);
    return Array.from(this.native.search(vector, k, 1).keys, Number);
  }

  /** Writes the index to `path` (through a temporary file, so a reader never sees half of one). */
  save(path: string): void {
    const partial = `${path}.${process.pid}.partial`;
    try {
      this.native.save(partial);
      renameSync(partial, path);
    } finally {
      rmSync(partial, { force: true });
    }
  }

  /**
   * Bytes the index holds in memory (an estimate from usearch's layout, which its JS binding does not
   * report): per row the vector, the base layer's 2 × connectivity neighbour slots with their count and
   * the key and level, the upper layers (1 row in `connectivity` reaches each next one), and the
   * key → slot table.
   */
  bytes(): number {
    const connectivity = this.native.connectivity();
    const vector = this.dim * this.scalarBytes;
    const baseLayer = 4 + 2 * connectivity * 4;
    const upperLayers = (4 + connectivity * 4) / (connectivity - 1);
    const keyAndLevel = 8 + 2;
    const lookup = 16;
    return Math.round(this.native.capacity() * (vector + baseLayer + upperLayers + keyAndLevel + lookup));
  }
}
