/**
 * In-process copy of the sign bits of every dataset's vectors (table chunk_keys), for the coarse stage of
 * vector search. Hamming distances are computed in WebAssembly with i64.popcnt (hamming-wasm.ts): ~0.7 ms
 * of CPU per 100k chunks, where JS popcounts of 32-bit words take ~3–7 ms (both measured by bench/retrieval/floor.ts,
 * which `npx tsx bench/retrieval/ann.ts` and run.ts print at each size); the same scan through SQLite
 * functions is slower still. A dataset's copy is reloaded when its
 * generation — bumped by every write transaction, in any process — differs from the one it was loaded
 * at. The exact stage that follows re-checks every filter against the tables, so a copy that goes stale
 * between the check and its use can only miss new rows for that one query.
 */

import { HammingRows } from './hamming-wasm.js';

/** The keys of a dataset's chunks with vectors of one dimension, row by row in the same order. */
export interface KeyGroup {
  dim: number;
  rows: Float64Array;
  /** 1 = available. */
  available: Uint8Array;
  /** The rows' sign bits back to back, ceil(dim / 8) bytes each. */
  bits: Uint8Array;
}

export interface BitFilter {
  datasetIds: string[];
  availableOnly?: boolean;
  /** Only these rows (e.g. the chunks of the selected documents). */
  rows?: ReadonlySet<number>;
}

interface PackedBits {
  rows: Float64Array;
  available: Uint8Array;
  /** The sign bits, 64-bit words per row, in WebAssembly memory. */
  hamming: HammingRows;
  /** Bytes of the sign bits (zero-padded to 64-bit words); the scan's scratch adds 4 bytes per row. */
  bitBytes: number;
}

interface DatasetBits {
  generation: number;
  byDim: Map<number, PackedBits>;
}

export interface BitSource {
  generations(datasetIds: string[]): Map<string, number>;
  keys(datasetId: string): KeyGroup[];
}

function pack(g: KeyGroup): PackedBits {
  const hamming = new HammingRows(g.bits, g.rows.length, g.dim);
  return { rows: g.rows, available: g.available, hamming, bitBytes: g.rows.length * Math.ceil(g.dim / 64) * 8 };
}

/** Bytes a dataset's copy holds: row ids, flags and sign bits. */
function bytesOf(d: DatasetBits): number {
  let bytes = 0;
  for (const p of d.byDim.values()) bytes += p.rows.byteLength + p.available.byteLength + p.bitBytes;
  return bytes;
}

export class SignBitCache {
  /** Least recently used first (a dataset is moved to the end when used). */
  private readonly datasets = new Map<string, DatasetBits>();

  /**
   * `maxBytes` bounds the copy: after each query the least recently used datasets are dropped (and
   * reloaded when next searched) until it fits, except the ones that query searched, which are kept
   * even when they alone exceed it.
   */
  constructor(
    private readonly source: BitSource,
    private readonly maxBytes = Infinity,
  ) {}

  /** Row ids of the `count` rows nearest to `query` (sign bits) by Hamming distance, within the filter. */
  nearest(query: Uint8Array, dim: number, filter: BitFilter, count: number): number[] {
    const scopes = this.current(filter.datasetIds).flatMap((d) => d.byDim.get(dim) ?? []);
    // Distances are small integers (0..dim): a histogram gives the cut-off without sorting.
    const histogram = new Uint32Array(dim + 2);
    // Each scope's distances are its own scratch memory: filtered-out rows are marked -1 in place.
    const distances = scopes.map(({ rows, available, hamming }) => {
      const out = hamming.distances(query);
      for (let i = 0; i < rows.length; i++) {
        if ((filter.availableOnly && available[i] !== 1) || (filter.rows && !filter.rows.has(rows[i]!))) out[i] = -1;
        else histogram[out[i]!]!++;
      }
      return out;
    });
    let cutoff = 0;
    for (let taken = 0; cutoff <= dim && taken + histogram[cutoff]! <= count; cutoff++) taken += histogram[cutoff]!;
    // Rows below the cut-off all fit; rows at it fill the remaining places.
    const nearest: number[] = [];
    const atCutoff: number[] = [];
    scopes.forEach(({ rows }, s) => {
      const d = distances[s]!;
      for (let i = 0; i < d.length; i++) {
        if (d[i]! < 0) continue;
        if (d[i]! < cutoff) nearest.push(rows[i]!);
        else if (d[i] === cutoff) atCutoff.push(rows[i]!);
      }
    });
    return nearest.concat(atCutoff.slice(0, Math.max(0, count - nearest.length)));
  }

  /** Lets go of the datasets' sign bits (their int8 copies serve the coarse stage now); reloaded if searched again. */
  forget(datasetIds: Iterable<string>): void {
    for (const id of datasetIds) this.datasets.delete(id);
  }

  /** What the copy holds now: datasets, vectors and bytes (rows, flags and sign bits), for /metrics. */
  size(): { datasets: number; vectors: number; bytes: number } {
    let vectors = 0;
    let bytes = 0;
    for (const d of this.datasets.values()) {
      for (const p of d.byDim.values()) vectors += p.rows.length;
      bytes += bytesOf(d);
    }
    return { datasets: this.datasets.size, vectors, bytes };
  }

  private current(datasetIds: string[]): DatasetBits[] {
    const generations = this.source.generations(datasetIds);
    const wanted = new Set(datasetIds);
    const current = [...wanted].map((id) => {
      const generation = generations.get(id) ?? 0;
      let cached = this.datasets.get(id);
      if (!cached || cached.generation !== generation) {
        cached = { generation, byDim: new Map(this.source.keys(id).map((g) => [g.dim, pack(g)])) };
      }
      this.datasets.delete(id);
      this.datasets.set(id, cached);
      return cached;
    });
    this.evict(wanted);
    return current;
  }

  /** Drops the least recently used datasets, other than `keep`, until the copy fits in maxBytes. */
  private evict(keep: Set<string>): void {
    if (this.maxBytes === Infinity) return;
    let bytes = this.size().bytes;
    for (const [id, d] of this.datasets) {
      if (bytes <= this.maxBytes) return;
      if (keep.has(id)) continue;
      bytes -= bytesOf(d);
      this.datasets.delete(id);
    }
  }
}
