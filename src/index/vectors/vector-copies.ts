/**
 * In-memory float32 copies of the datasets' vectors (table chunk_vectors), for the exact stage of vector
 * search and for the cosines of chunks by id, in place of one SQLite lookup and one sqlite-vec call per row.
 *
 * A copy is exact for the generation of its dataset it was read at (chunk_generations, bumped by every
 * write transaction in any process); a dataset whose generation moved is served from SQLite until its copy
 * is rebuilt. Rebuilding reads every vector of the dataset (~1 s of CPU at 100k × 384: the first search of
 * `npx tsx bench/retrieval/vector-leg.ts` builds the copies and prints what it cost), so it follows
 * rebuild-policy.ts: only once the dataset's generation has stayed the same for a while, and never inside
 * a search.
 *
 * The copies live in SharedArrayBuffers: the reader threads of a process (sqlite-read-pool.ts) share one
 * copy per dataset. A thread that builds one hands it to `publish`; the pool passes it on to the other
 * threads and, as owner of the shared copies, drops the least recently searched ones to stay within the
 * bound (shared-vector-registry.ts). Without `publish` (one connection) this class drops them itself.
 *
 * Two kinds of copy. An exact copy holds the float32 vectors and what a hit needs (ids, documents), and
 * int8 copies of its groups of more than INT8_MIN_ROWS rows for the coarse stage (int8-candidates.ts); a
 * dataset whose exact copy would not fit the bound gets an int8 copy alone (rows, availability, int8
 * vectors: ~400 B per 384-dim row against ~2 KB), whose candidates take their exact cosines from SQLite.
 * Either kind holds 4-bit rows beside its int8 rows (for the coarse stage's first pass: ~200 B per row)
 * when the copy with them fits the bound; else it is built without. The bound counts every byte.
 */
import { float32DotsAt } from './cosine-wasm.js';
import { INT8_MIN_ROWS, type ScanGroup } from './int8-candidates.js';
import { int8BytesOf, Int8RowsBuilder } from './int8-rows.js';
import { evictLeastRecentlyUsed, RebuildPolicy, type RebuildOptions } from '../rebuild-policy.js';
import { PAGE } from './wasm-scratch.js';

/** A dataset's vectors of one dimension in an exact copy, rows ascending. */
export interface VectorGroup extends ScanGroup {
  /**
   * `dim` float32 per row, in the order of `rows`: in the int8 rows' shared WebAssembly memory when the
   * group has int8 rows and the memory room for them (the exact cosines are computed there), else in a
   * SharedArrayBuffer of its own.
   */
  vectors: Float32Array;
  /** Each row's norm as sqlite-vec computes it (float32Norm). */
  norms: Float64Array;
  /** Per row: its document's place in the dataset's `documents`. */
  documentOf: Uint32Array;
  /** The rows' chunk ids, UTF-8 back to back: row i's from idOffsets[i] to idOffsets[i + 1]. */
  idBytes: Uint8Array;
  idOffsets: Uint32Array;
  /** Open addressing by hashOf(id), linear probing: position + 1 of a row, 0 = empty. */
  idTable: Int32Array;
}

export interface ExactDatasetVectors {
  kind: 'exact';
  datasetId: string;
  generation: number;
  groups: VectorGroup[];
  /** [document_id, document_name] of the documents of the rows. */
  documents: [string, string][];
  bytes: number;
}

/** A dataset too big for an exact copy: what the coarse stage needs, every group with its int8 rows. */
export interface Int8DatasetVectors {
  kind: 'int8';
  datasetId: string;
  generation: number;
  groups: ScanGroup[];
  bytes: number;
}

export type DatasetVectors = ExactDatasetVectors | Int8DatasetVectors;
export type CopyKind = DatasetVectors['kind'];

/** A row with a vector, as read from the database: the vector and what a search hit needs. */
export type VectorRow = [row: number, vector: Uint8Array, id: string, documentId: string, documentName: string, available: number];

/** Rows with a vector of `dim` floats, as read from the database. */
export interface VectorRows {
  dim: number;
  count: number;
  /** Read when the group is copied (one group's read at a time). */
  rows: () => Iterable<VectorRow>;
}

export interface VectorSource {
  /**
   * To size the dataset's copies before building one: the bytes of its exact copy's floats, ids and
   * per-row arrays (BYTES_PER_ROW), and its number of vectors per dimension.
   */
  sizeOf(datasetId: string): { exactBytes: number; groups: { dim: number; count: number }[] };
  /** One consistent read of the dataset's vectors, per dimension, with the generation they are at. */
  read<T>(datasetId: string, use: (generation: number, groups: VectorRows[]) => T): T;
}

export interface VectorCopiesOptions extends RebuildOptions {
  /**
   * Set on a reader thread of a pool: receives every copy this connection builds. The pool then owns the
   * copies and their bound (it sends adopt/drop back); this connection does not evict.
   */
  publish?: (copy: DatasetVectors) => void;
}

/** Default bound of a process's copies (CAIRN_CACHE_VECTORS_MB): exact copies of ~260k vectors of 384 dimensions, int8 copies of ~1.3M. */
export const DEFAULT_VECTORS_BYTES = 512 * 2 ** 20;
/**
 * Bytes a row costs besides its floats and its id, to size a copy before building it: rowid and norm (16),
 * flag and document (5), id offset (4), at least two hash slots (8). The built copy counts its arrays exactly.
 */
export const BYTES_PER_ROW = 33;

/** Bytes of an int8 copy's row id and availability flag per row. */
const INT8_COPY_BYTES_PER_ROW = 9;

/** What each kind of copy of a dataset of the given size would take, int8 rows included, and what 4-bit rows would add to each. */
export function copyBytesOf({ exactBytes, groups }: ReturnType<VectorSource['sizeOf']>): Record<CopyKind, number> & { int4: Record<CopyKind, number> } {
  let exact = exactBytes;
  let int8 = 0;
  const int4 = { exact: 0, int8: 0 };
  for (const { dim, count } of groups) {
    const int4Bytes = int8BytesOf(count, dim, true) - int8BytesOf(count, dim);
    if (count > INT8_MIN_ROWS) {
      exact += int8BytesOf(count, dim);
      int4.exact += int4Bytes;
    }
    int8 += int8BytesOf(count, dim) + count * INT8_COPY_BYTES_PER_ROW;
    int4.int8 += int4Bytes;
  }
  return { exact, int8, int4 };
}

/**
 * Which copy of a dataset of `bytes` (copyBytesOf) the bound allows: exact if it fits, and with 4-bit rows if
 * the copy still fits with them, with a page to spare (the memory that holds the float32 vectors is
 * rounded to whole pages with them): a copy that would not fit with 4-bit rows is built without.
 */
export function copyKindOf(bytes: ReturnType<typeof copyBytesOf>, maxBytes: number): { kind: CopyKind; int4: boolean; bytes: number } {
  const kind: CopyKind = bytes.exact <= maxBytes ? 'exact' : 'int8';
  const int4 = bytes[kind] + bytes.int4[kind] + PAGE <= maxBytes;
  return { kind, int4, bytes: bytes[kind] + (int4 ? bytes.int4[kind] : 0) };
}

const shared = <T>(Type: { new (buffer: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number }, length: number) =>
  new Type(new SharedArrayBuffer(length * Type.BYTES_PER_ELEMENT));

/** FNV-1a over the UTF-16 code units of a chunk id (the id table's hash). */
function hashOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function idTableOf(ids: string[]): Int32Array {
  let size = 16;
  while (size < ids.length * 2) size *= 2;
  const table = shared(Int32Array, size);
  const mask = size - 1;
  ids.forEach((id, position) => {
    let slot = hashOf(id) & mask;
    while (table[slot] !== 0) slot = (slot + 1) & mask;
    table[slot] = position + 1;
  });
  return table;
}

function idBytesOf(ids: string[]): { idBytes: Uint8Array; idOffsets: Uint32Array } {
  const idOffsets = shared(Uint32Array, ids.length + 1);
  let length = 0;
  ids.forEach((id, i) => {
    idOffsets[i] = length;
    length += Buffer.byteLength(id);
  });
  idOffsets[ids.length] = length;
  const idBytes = shared(Uint8Array, length);
  const writer = Buffer.from(idBytes.buffer);
  ids.forEach((id, i) => writer.write(id, idOffsets[i]!, 'utf8'));
  return { idBytes, idOffsets };
}

/** Options of a copy's build: `int4`, 4-bit rows beside the int8 rows (int8-rows.ts). */
export interface CopyOptions {
  int4?: boolean;
}

/** Reads the groups into shared memory: an exact copy. */
export function buildDatasetVectors(datasetId: string, generation: number, groups: VectorRows[], options: CopyOptions = {}): ExactDatasetVectors {
  const documents: [string, string][] = [];
  const documentIndex = new Map<string, number>();
  const built = groups.map(({ dim, count, rows: source }): VectorGroup => {
    const rows = shared(Float64Array, count);
    const int8 = count > INT8_MIN_ROWS ? new Int8RowsBuilder(count, dim, { floats: true, int4: options.int4 }) : undefined;
    // In the int8 rows' WebAssembly memory where it has room: the exact cosines are computed there.
    const vectors = int8?.floats ?? shared(Float32Array, count * dim);
    const norms = shared(Float64Array, count);
    const available = shared(Uint8Array, count);
    const documentOf = shared(Uint32Array, count);
    const ids: string[] = [];
    const bytesPerVector = dim * 4;
    let i = 0;
    for (const [row, blob, id, documentId, documentName, isAvailable] of source()) {
      if (i === count) throw new Error(`dataset ${datasetId}: more vectors of ${dim} dimensions than counted`);
      if (blob.byteLength !== bytesPerVector) throw new Error(`dataset ${datasetId}: row ${row} has ${blob.byteLength} bytes, not ${bytesPerVector}`);
      rows[i] = row;
      // Byte copy: a BLOB's offset need not be 4-aligned.
      new Uint8Array(vectors.buffer, vectors.byteOffset + i * bytesPerVector, bytesPerVector).set(blob);
      norms[i] = float32Norm(vectors, i * dim, dim);
      int8?.set(i, vectors, i * dim);
      available[i] = isAvailable;
      const key = `${documentId}\u0000${documentName}`;
      let d = documentIndex.get(key);
      if (d === undefined) {
        d = documents.push([documentId, documentName]) - 1;
        documentIndex.set(key, d);
      }
      documentOf[i] = d;
      ids.push(id);
      i++;
    }
    if (i !== count) throw new Error(`dataset ${datasetId}: ${i} vectors of ${dim} dimensions, ${count} counted`);
    return { dim, rows, vectors, norms, available, documentOf, ...idBytesOf(ids), idTable: idTableOf(ids), int8: int8?.done() };
  });
  const bytes = built.reduce((sum, g) => sum + g.rows.byteLength + g.vectors.byteLength + g.norms.byteLength + g.available.byteLength
    + g.documentOf.byteLength + g.idBytes.byteLength + g.idOffsets.byteLength + g.idTable.byteLength + (g.int8?.bytes ?? 0), 0);
  return { kind: 'exact', datasetId, generation, groups: built, documents, bytes };
}

/** Reads the groups' row ids, availability and int8 rows into shared memory: an int8 copy. */
export function buildInt8DatasetVectors(datasetId: string, generation: number, groups: VectorRows[], options: CopyOptions = {}): Int8DatasetVectors {
  const built = groups.map(({ dim, count, rows: source }): ScanGroup => {
    const rows = shared(Float64Array, count);
    const available = shared(Uint8Array, count);
    const int8 = new Int8RowsBuilder(count, dim, { int4: options.int4 });
    const vector = new Float32Array(dim);
    const vectorBytes = new Uint8Array(vector.buffer);
    let i = 0;
    for (const [row, blob, , , , isAvailable] of source()) {
      if (i === count) throw new Error(`dataset ${datasetId}: more vectors of ${dim} dimensions than counted`);
      if (blob.byteLength !== dim * 4) throw new Error(`dataset ${datasetId}: row ${row} has ${blob.byteLength} bytes, not ${dim * 4}`);
      rows[i] = row;
      vectorBytes.set(blob);
      int8.set(i, vector, 0);
      available[i] = isAvailable;
      i++;
    }
    if (i !== count) throw new Error(`dataset ${datasetId}: ${i} vectors of ${dim} dimensions, ${count} counted`);
    return { dim, rows, available, int8: int8.done() };
  });
  const bytes = built.reduce((sum, g) => sum + g.rows.byteLength + g.available.byteLength + g.int8!.bytes, 0);
  return { kind: 'int8', datasetId, generation, groups: built, bytes };
}

/** The chunk id of the row at `position`. */
export function idAt(group: VectorGroup, position: number): string {
  return idBufferOf(group).toString('utf8', group.idOffsets[position]!, group.idOffsets[position + 1]!);
}

/** Per thread: each group's id bytes as a Buffer, made once (a Buffer per id read costs twice the read). */
const idBuffers = new WeakMap<Uint8Array, Buffer>();

function idBufferOf({ idBytes }: VectorGroup): Buffer {
  let buffer = idBuffers.get(idBytes);
  if (!buffer) idBuffers.set(idBytes, buffer = Buffer.from(idBytes.buffer, idBytes.byteOffset, idBytes.length));
  return buffer;
}

/** The position of the row of chunk `id`, or -1. */
export function positionOfId(group: VectorGroup, id: string): number {
  const mask = group.idTable.length - 1;
  // Ids are usually ASCII: those are compared with the stored bytes as they are, without decoding them.
  const ascii = isAscii(id);
  for (let slot = hashOf(id) & mask; ; slot = (slot + 1) & mask) {
    const entry = group.idTable[slot]!;
    if (entry === 0) return -1;
    if (ascii ? hasAsciiId(group, entry - 1, id) : idAt(group, entry - 1) === id) return entry - 1;
  }
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Whether the UTF-8 id of the row at `position` is the ASCII text `id` (same length, same bytes). */
function hasAsciiId(group: VectorGroup, position: number, id: string): boolean {
  const start = group.idOffsets[position]!;
  if (group.idOffsets[position + 1]! - start !== id.length) return false;
  for (let i = 0; i < id.length; i++) if (group.idBytes[start + i] !== id.charCodeAt(i)) return false;
  return true;
}

/** The position of `row` in ascending `rows`, or -1. */
export function positionOf(rows: Float64Array, row: number): number {
  let lo = 0;
  let hi = rows.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = rows[mid]!;
    if (at === row) return mid;
    if (at < row) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/*
 * The cosines are computed exactly as sqlite-vec's vec_distance_cosine computes them (distance_cosine_float:
 * float32 sums in order, then `1 - dot / (sqrt(aMag) * sqrt(bMag))` in double, rounded to float32), so that
 * the in-memory copy and SQLite give the same scores bit for bit, and the same order among near-ties.
 * Math.fround of a double sum or product of two float32 values is the float32 result (53 ≥ 2 × 24 + 2:
 * rounding twice is harmless), which V8 compiles to float32 arithmetic.
 */
const f32 = Math.fround;

/** sqrt of the float32 sum of squares, as sqlite-vec computes a vector's magnitude. */
export function float32Norm(values: Float32Array, offset: number, dim: number): number {
  let sum = 0;
  for (let o = offset, end = offset + dim; o < end; o++) sum = f32(sum + f32(values[o]! * values[o]!));
  return Math.sqrt(sum);
}

/** A query vector as sqlite-vec receives it (float32), with its norm. */
export interface Query {
  values: Float32Array;
  norm: number;
}

export function toQuery(vector: number[]): Query {
  const values = Float32Array.from(vector);
  return { values, norm: float32Norm(values, 0, values.length) };
}

/**
 * `1 - vec_distance_cosine(vector, query)` for the group's vectors at `positions`, bit for bit, into `out`;
 * NaN when either vector is zero (where SQLite gives NULL). The dot products come from WebAssembly SIMD
 * where the group's vectors are in its int8 rows' memory (cosine-wasm.ts, same sums bit for bit), else
 * from JS. Each dot product is a chain of dependent float32 additions (their order is sqlite-vec's), so
 * JS sums four rows side by side: four independent chains keep the CPU busy where one would wait on each
 * addition (bench/retrieval/cosines.ts times this JS path against the WebAssembly kernel).
 */
export function cosinesAt(group: VectorGroup, positions: ArrayLike<number>, query: Query, out: Float64Array): void {
  const { vectors, dim, norms } = group;
  if (group.int8 && float32DotsAt(group.int8, positions, query.values, out)) {
    for (let k = 0; k < positions.length; k++) out[k] = 1 - f32(1 - out[k]! / (norms[positions[k]!]! * query.norm));
    return;
  }
  const q = query.values;
  const count = positions.length;
  let k = 0;
  for (; k + 3 < count; k += 4) {
    const o0 = positions[k]! * dim, o1 = positions[k + 1]! * dim, o2 = positions[k + 2]! * dim, o3 = positions[k + 3]! * dim;
    let d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    for (let j = 0; j < dim; j++) {
      const x = q[j]!;
      d0 = f32(d0 + f32(vectors[o0 + j]! * x));
      d1 = f32(d1 + f32(vectors[o1 + j]! * x));
      d2 = f32(d2 + f32(vectors[o2 + j]! * x));
      d3 = f32(d3 + f32(vectors[o3 + j]! * x));
    }
    out[k] = 1 - f32(1 - d0 / (norms[positions[k]!]! * query.norm));
    out[k + 1] = 1 - f32(1 - d1 / (norms[positions[k + 1]!]! * query.norm));
    out[k + 2] = 1 - f32(1 - d2 / (norms[positions[k + 2]!]! * query.norm));
    out[k + 3] = 1 - f32(1 - d3 / (norms[positions[k + 3]!]! * query.norm));
  }
  for (; k < count; k++) {
    const o = positions[k]! * dim;
    let dot = 0;
    for (let j = 0; j < dim; j++) dot = f32(dot + f32(vectors[o + j]! * q[j]!));
    out[k] = 1 - f32(1 - dot / (norms[positions[k]!]! * query.norm));
  }
}

interface Entry {
  copy: DatasetVectors;
  buildMs: number;
}

export class VectorCopies {
  /** Least recently used first. */
  private readonly copies = new Map<string, Entry>();
  private readonly rebuilds: RebuildPolicy;
  /** Datasets searched since the last takeUsed(). */
  private readonly used = new Set<string>();

  constructor(
    private readonly source: VectorSource,
    private readonly options: VectorCopiesOptions,
  ) {
    this.rebuilds = new RebuildPolicy(options);
  }

  /**
   * Current copies of all the datasets (at the generations given, read by the caller in the transaction it
   * searches in), scheduling the builds that are due; undefined when any of them has none.
   */
  current(datasetIds: string[], generations: Map<string, number>): DatasetVectors[] | undefined {
    if (!(this.options.maxBytes > 0)) return undefined;
    const wanted = [...new Set(datasetIds)];
    const found: DatasetVectors[] = [];
    for (const id of wanted) {
      const entry = this.currentEntry(id, generations.get(id) ?? 0);
      if (!entry) break;
      this.copies.delete(id);
      this.copies.set(id, entry);
      found.push(entry.copy);
    }
    for (const id of wanted) this.used.add(id);
    if (!this.options.publish) evictLeastRecentlyUsed(this.copies, ({ copy }) => copy.bytes, this.options.maxBytes, new Set(wanted));
    return found.length === wanted.length ? found : undefined;
  }

  /** The exact copies held now that are at the generations given (read by the caller), for cosines by id; nothing is built or reordered. */
  currentHeld(generations: (datasetIds: string[]) => Map<string, number>): ExactDatasetVectors[] {
    if (this.copies.size === 0) return [];
    const now = generations([...this.copies.keys()]);
    return [...this.copies.values()].flatMap(({ copy }) => (copy.kind === 'exact' && copy.generation === (now.get(copy.datasetId) ?? 0) ? [copy] : []));
  }

  /** Takes copies another connection of the process built (newer than or as new as this one's: one copy in memory). */
  adopt(copies: DatasetVectors[]): void {
    for (const copy of copies) {
      const mine = this.copies.get(copy.datasetId);
      if (mine && mine.copy.generation > copy.generation) continue;
      this.copies.set(copy.datasetId, { copy, buildMs: mine?.buildMs ?? 0 });
    }
  }

  /** Forgets copies the owner dropped (unless this connection holds a newer one). */
  drop(dropped: [datasetId: string, generation: number][]): void {
    for (const [id, generation] of dropped) {
      const mine = this.copies.get(id);
      if (mine && mine.copy.generation <= generation) this.copies.delete(id);
    }
  }

  /** The datasets searched since the last call (the pool's least-recently-used order). */
  takeUsed(): string[] {
    const used = [...this.used];
    this.used.clear();
    return used;
  }

  /** What this connection holds now, for /metrics. */
  size(): { datasets: number; vectors: number; bytes: number } {
    let vectors = 0;
    let bytes = 0;
    for (const { copy } of this.copies.values()) {
      for (const g of copy.groups) vectors += g.rows.length;
      bytes += copy.bytes;
    }
    return { datasets: this.copies.size, vectors, bytes };
  }

  private currentEntry(id: string, generation: number): Entry | undefined {
    const cached = this.copies.get(id);
    if (cached?.copy.generation === generation) return cached;
    if (!this.rebuilds.isDue(id, generation, cached?.buildMs)) return undefined;
    // A build on its way is not sized again.
    if (this.rebuilds.isScheduled(id)) return undefined;
    const { kind, int4, bytes } = copyKindOf(copyBytesOf(this.source.sizeOf(id)), this.options.maxBytes);
    if (!this.rebuilds.fits(id, generation, bytes)) return undefined;
    this.rebuilds.scheduleBuild(id, () => this.build(id, kind, { int4 }));
    const entry = this.copies.get(id);
    // Written between the generation check and the build's read: the copy serves a later search.
    return entry?.copy.generation === generation ? entry : undefined;
  }

  /** Builds the dataset's copy unless another connection of the process is building one. */
  private build(id: string, kind: CopyKind, options: CopyOptions): void {
    const buildCopy = kind === 'exact' ? buildDatasetVectors : buildInt8DatasetVectors;
    const done = this.rebuilds.buildLocked(() => this.source.read(id, (generation, groups) => buildCopy(id, generation, groups, options)));
    if (!done) return;
    const { built: copy, buildMs } = done;
    if (!this.rebuilds.fits(id, copy.generation, copy.bytes)) {
      this.copies.delete(id);
      return;
    }
    this.copies.set(id, { copy, buildMs });
    this.options.publish?.(copy);
  }
}
