/**
 * The approximate-index libraries bench/retrieval/ann.ts compares, each behind the same small interface.
 * They are loaded with require from the directories given (--modules), then from the project: a library
 * being evaluated need not be a dependency of Cairn. Types are declared here, as much as the bench uses.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';

export interface AnnConfig {
  library: 'usearch' | 'hnswlib';
  /** HNSW graph degree (usearch "connectivity", hnswlib "M"). */
  m: number;
  /** Candidate list size while inserting (usearch "expansion_add", hnswlib "ef_construction"). */
  efConstruction: number;
  /** How usearch stores vectors: f32, f16 or i8 (hnswlib keeps f32). */
  quantization: 'f32' | 'f16' | 'i8';
}

export interface AnnIndex {
  /** Adds rows `keys[i]` with vectors `vectors[i*dims ..]`, on `threads` threads where the library can. */
  add(keys: Float64Array, vectors: Float32Array, threads: number): void;
  /** Keys of the k nearest rows, nearest first. */
  search(query: Float32Array, k: number): number[];
  remove(keys: number[]): void;
  save(path: string): void;
  /** A new index read from `path` into memory, searching with candidate lists of max(efSearch, k). */
  load(path: string, efSearch: number): AnnIndex;
}

export function describeConfig(c: AnnConfig): string {
  const q = c.library === 'usearch' ? ` ${c.quantization}` : '';
  return `${c.library}${q} M=${c.m} efC=${c.efConstruction}`;
}

export function requireFrom(name: string, dirs: string[]): unknown {
  for (const dir of [...dirs, process.cwd()]) {
    try {
      return createRequire(join(dir, 'package.json'))(name);
    } catch {
      // not installed there
    }
  }
  throw new Error(`${name} is not installed in ${[...dirs, process.cwd()].join(', ')} (npm install --no-save ${name} into one of them)`);
}

interface UsearchModule {
  Index: new (config: Record<string, unknown>) => UsearchNative;
  exactSearch(dataset: Float32Array | Int8Array, queries: Float32Array | Int8Array, dims: number, k: number, metric: string, threads: number): { keys: BigUint64Array };
  MetricKind: { Cos: string };
}

/** usearch's native exact scan (SIMD), from --modules or the project: a baseline of bench/retrieval/ann.ts. */
export function usearchExactSearch(modules: string[]) {
  const usearch = requireFrom('usearch', modules) as UsearchModule;
  return (dataset: Float32Array | Int8Array, query: Float32Array | Int8Array, dims: number, k: number) =>
    usearch.exactSearch(dataset, query, dims, k, usearch.MetricKind.Cos, 1);
}

interface UsearchNative {
  add(keys: BigUint64Array, vectors: Float32Array, threads: number): void;
  search(vector: Float32Array, k: number, threads: number): { keys: BigUint64Array };
  remove(keys: BigUint64Array): unknown;
  save(path: string): void;
  load(path: string): void;
}

interface HnswlibModule {
  HierarchicalNSW: new (space: string, dims: number) => HnswlibNative;
}

interface HnswlibNative {
  initIndex(maxElements: number, m: number, efConstruction: number, seed: number, allowReplaceDeleted: boolean): void;
  readIndexSync(path: string, allowReplaceDeleted: boolean): void;
  writeIndexSync(path: string): void;
  resizeIndex(maxElements: number): void;
  getMaxElements(): number;
  getCurrentCount(): number;
  addPoint(point: number[], label: number, replaceDeleted: boolean): void;
  markDelete(label: number): void;
  searchKnn(query: number[], k: number): { neighbors: number[] };
  setEf(ef: number): void;
}

function usearchIndex(c: AnnConfig, dims: number, modules: string[]): AnnIndex {
  const usearch = requireFrom('usearch', modules) as UsearchModule;
  const make = (efSearch = 64) =>
    new usearch.Index({
      dimensions: dims, metric: 'cos', quantization: c.quantization, connectivity: c.m,
      expansion_add: c.efConstruction, expansion_search: efSearch, multi: false,
    });
  const wrap = (native: UsearchNative): AnnIndex => ({
    add: (keys, vectors, threads) => native.add(BigUint64Array.from(keys, BigInt), vectors, threads),
    search: (query, k) => Array.from(native.search(query, k, 1).keys, Number),
    remove: (keys) => native.remove(BigUint64Array.from(keys, BigInt)),
    save: (path) => native.save(path),
    load: (path, efSearch) => {
      const loaded = make(efSearch);
      loaded.load(path);
      return wrap(loaded);
    },
  });
  return wrap(make());
}

function hnswlibIndex(c: AnnConfig, dims: number, modules: string[]): AnnIndex {
  const hnswlib = requireFrom('hnswlib-node', modules) as HnswlibModule;
  const wrap = (native: HnswlibNative): AnnIndex => ({
    // hnswlib-node takes number[] and adds one point per call, on the calling thread.
    add: (keys, vectors) => {
      const needed = native.getCurrentCount() + keys.length;
      if (needed > native.getMaxElements()) native.resizeIndex(Math.max(needed, 2 * native.getMaxElements()));
      keys.forEach((key, i) => native.addPoint(Array.from(vectors.subarray(i * dims, (i + 1) * dims)), key, true));
    },
    search: (query, k) => native.searchKnn(Array.from(query), k).neighbors,
    remove: (keys) => keys.forEach((key) => native.markDelete(key)),
    save: (path) => native.writeIndexSync(path),
    load: (path, efSearch) => {
      const loaded = new hnswlib.HierarchicalNSW('cosine', dims);
      loaded.readIndexSync(path, true);
      loaded.setEf(efSearch);
      return wrap(loaded);
    },
  });
  const native = new hnswlib.HierarchicalNSW('cosine', dims);
  native.initIndex(1024, c.m, c.efConstruction, 100, true);
  native.setEf(64); // usearch's default, so that the answers before and after a load compare
  return wrap(native);
}

export function openAnnIndex(c: AnnConfig, dims: number, modules: string[]): AnnIndex {
  return c.library === 'usearch' ? usearchIndex(c, dims, modules) : hnswlibIndex(c, dims, modules);
}
