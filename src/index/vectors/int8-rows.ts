/**
 * Int8 copies of a dataset's vectors for the coarse stage of vector search: a quarter of the float32
 * bytes, scanned in WebAssembly SIMD (int8-wasm.ts), in a shared `WebAssembly.Memory` so that the reader
 * threads of a process scan one copy (it travels between threads like the SharedArrayBuffers of
 * vector-copies.ts).
 *
 * Each row is scaled so that its largest component is ±127 and rounded (cosine ignores a vector's
 * length); the scan multiplies each row's integer dot product with the query by 1 / the row's integer
 * norm, giving cos × |query₈|: a ranking by approximate cosine. The exact stage that follows computes the
 * candidates' float32 cosines, so the int8 rounding only decides which rows are candidates.
 *
 * Memory layout: in an exact copy the rows' float32 vectors first (for the exact cosines in WebAssembly,
 * cosine-wasm.ts), then the int8 rows (each padded with zeros to a multiple of 16 bytes), then their
 * scales (f32), then the sums of their components (i32, for the relaxed kernel: int8-wasm.ts), then, when
 * asked for, 4-bit copies of the rows and their scales (f32) for a first pass (int4-wasm.ts). A thread
 * that scans the copy grows the memory once by a region of its own for the query (i16, or u8 for the
 * relaxed kernel, then i8 for the 4-bit pass), the scores (f32 per row) and the positions above a threshold (i32 per row), and once more for its
 * dot products if it computes any (cosine-wasm.ts); growing a shared memory is atomic, so two threads
 * never get the same region.
 *
 * Only groups with int8 rows (more than INT8_MIN_ROWS rows) hold their float32 vectors in WebAssembly
 * memory: V8 reserves 10 GiB of address space for every memory (a 64-bit process holds ~13,000), so a
 * memory per small group would run out of address space with many small datasets.
 */
import { dotsScratchBytesOf } from './cosine-wasm.js';
import { int4Kernels, int4StrideOf, writeInt4Question, writeInt4Row, type Int4Kernels } from './int4-wasm.js';
import { int8KernelKind, int8Kernels, writeQuestion, type Int8KernelKind, type Int8Kernels } from './int8-wasm.js';
import { PAGE, scratchRegionOf } from './wasm-scratch.js';

/** Pages a memory may have (WebAssembly's 4 GiB). */
const MAX_PAGES = 65536;
/** Scratch regions a copy's memory can grow by: the threads of a process that scan it. */
const MAX_SCANNING_THREADS = 16;

/** A dataset's int8 rows of one dimension (plain data: it can be posted to another thread). */
export interface Int8Rows {
  memory: WebAssembly.Memory;
  count: number;
  dim: number;
  /** Bytes per row: dim rounded up to a multiple of 16. */
  stride: number;
  /** Where the int8 rows start (after the float32 vectors, if any). */
  rowsAt: number;
  scalesAt: number;
  /** Where the sums of the rows' components start (i32 per row). */
  sumsAt: number;
  /** Where the rows' float32 vectors start (`dim` each, in row order); absent when the memory holds none. */
  floatsAt?: number;
  /** The 4-bit rows (int4-wasm.ts), when built: where they start, bytes per row, where their scales start. */
  int4?: { rowsAt: number; stride: number; scalesAt: number };
  /** Bytes of the memory as built besides the float32 vectors (the int8 rows, scales and sums, the 4-bit rows, whole pages), without the threads' scratch. */
  bytes: number;
}

export const strideOf = (dim: number) => Math.ceil(dim / 16) * 16;

/** Bytes per row besides the row itself: its scale (f32) and the sum of its components (i32). */
const ROW_EXTRA_BYTES = 8;

/** Bytes of the 4-bit rows of `count` rows of `dim`: each row and its scale (f32), and up to 16 to align them. */
const int4RowsBytesOf = (count: number, dim: number) => 16 + count * (int4StrideOf(dim) + 4);

/** Bytes a copy of `count` rows of `dim` takes: the rows, their scales and sums (and the 4-bit rows), rounded up to whole pages. */
export function int8BytesOf(count: number, dim: number, int4 = false): number {
  return Math.ceil((count * (strideOf(dim) + ROW_EXTRA_BYTES) + (int4 ? int4RowsBytesOf(count, dim) : 0)) / PAGE) * PAGE;
}

/** Bytes each thread that scans a copy of `count` rows adds to it: the queries (int8, then 4-bit), a score and a position per row. */
export function scanScratchBytesOf(count: number, dim: number): number {
  return Math.ceil((questionBytesOf(dim) + count * 8) / PAGE) * PAGE;
}

/** The int8 question (i16 for the plain kernel, u8 for the relaxed one) in 2 × stride bytes, the 4-bit one (i8) after the u8 one. */
const questionBytesOf = (dim: number) => Math.max(strideOf(dim) * 2, strideOf(dim) + int4StrideOf(dim) * 2);

/** Scale of a vector to int8: 127 / its largest magnitude (0 for a zero vector). */
function scaleOf(values: ArrayLike<number>, offset: number, dim: number): number {
  let max = 0;
  for (let j = 0; j < dim; j++) max = Math.max(max, Math.abs(values[offset + j]!));
  return max > 0 ? 127 / max : 0;
}

/** Fills an Int8Rows row by row; `done` returns it. */
export class Int8RowsBuilder {
  /**
   * The rows' float32 vectors in the memory, to be filled by the caller, when asked for and the memory
   * has room for them and the scratch of every thread (4 GiB); else undefined.
   */
  readonly floats: Float32Array | undefined;
  private readonly rows: Int8Rows;
  private readonly heap: Int8Array;
  private readonly scales: Float32Array;
  private readonly sums: Int32Array;
  private readonly int4: { heap: Uint8Array; scales: Float32Array } | undefined;

  /** `int4`: with 4-bit rows for a first pass (int4-wasm.ts). */
  constructor(count: number, dim: number, options: { floats?: boolean; int4?: boolean } = {}) {
    const stride = strideOf(dim);
    // The 4-bit rows after the sums, 16-byte aligned.
    const int8Bytes = count * (stride + ROW_EXTRA_BYTES) + (options.int4 ? int4RowsBytesOf(count, dim) : 0);
    const scanPages = scanScratchBytesOf(count, dim) / PAGE;
    // The int8 rows after the floats, 16-byte aligned.
    const rowsAfterFloats = Math.ceil((count * dim) / 4) * 16;
    const floatsPages = Math.ceil((rowsAfterFloats + int8Bytes) / PAGE);
    const floatsScratchPages = scanPages + dotsScratchBytesOf(dim) / PAGE;
    const withFloats = options.floats === true && floatsPages + MAX_SCANNING_THREADS * floatsScratchPages <= MAX_PAGES;
    const rowsAt = withFloats ? rowsAfterFloats : 0;
    const pages = Math.max(1, withFloats ? floatsPages : int8BytesOf(count, dim, options.int4) / PAGE);
    const scratchPages = withFloats ? floatsScratchPages : scanPages;
    if (pages + scratchPages > MAX_PAGES) throw new Error(`an int8 copy of ${count} rows of ${dim} dimensions exceeds 4 GiB`);
    const memory = new WebAssembly.Memory({ initial: pages, maximum: Math.min(MAX_PAGES, pages + MAX_SCANNING_THREADS * scratchPages), shared: true });
    const floatsAt = withFloats ? 0 : undefined;
    const scalesAt = rowsAt + count * stride;
    const sumsAt = scalesAt + count * 4;
    const int4At = Math.ceil((sumsAt + count * 4) / 16) * 16;
    const int4 = options.int4 ? { rowsAt: int4At, stride: int4StrideOf(dim), scalesAt: int4At + count * int4StrideOf(dim) } : undefined;
    this.rows = { memory, count, dim, stride, rowsAt, scalesAt, sumsAt, floatsAt, int4, bytes: pages * PAGE - (withFloats ? count * dim * 4 : 0) };
    this.floats = withFloats ? new Float32Array(memory.buffer, 0, count * dim) : undefined;
    this.heap = new Int8Array(memory.buffer);
    this.scales = new Float32Array(memory.buffer, this.rows.scalesAt, count);
    this.sums = new Int32Array(memory.buffer, this.rows.sumsAt, count);
    this.int4 = int4 && { heap: new Uint8Array(memory.buffer), scales: new Float32Array(memory.buffer, int4.scalesAt, count) };
  }

  /** Row `i` from `dim` values of `values` at `offset`. */
  set(i: number, values: ArrayLike<number>, offset: number): void {
    const { dim, stride, rowsAt, int4 } = this.rows;
    const scale = scaleOf(values, offset, dim);
    let squares = 0, sum = 0;
    for (let j = 0, at = rowsAt + i * stride; j < dim; j++, at++) {
      const q = Math.round(values[offset + j]! * scale);
      this.heap[at] = q;
      squares += q * q;
      sum += q;
    }
    this.scales[i] = squares > 0 ? 1 / Math.sqrt(squares) : 0;
    this.sums[i] = sum;
    if (int4) {
      const squares4 = writeInt4Row(this.heap, rowsAt + i * stride, this.int4!.heap, int4.rowsAt + i * int4.stride, dim);
      this.int4!.scales[i] = squares4 > 0 ? 1 / Math.sqrt(squares4) : 0;
    }
  }

  done(): Int8Rows {
    return this.rows;
  }
}

/** This thread's region of a copy's memory, and the kernels instantiated on it (each when first used). */
interface Scanner {
  kernels: Partial<Record<Int8KernelKind, Int8Kernels>>;
  int4?: Int4Kernels;
  queryAt: number;
  scoresAt: number;
  positionsAt: number;
}

/** Per thread: the scanners of the copies it scanned (a copy dropped everywhere takes its entry with it). */
const scanners = new WeakMap<WebAssembly.Memory, Scanner | null>();

/** Undefined with more threads than regions (or no memory left): this thread takes the sign bits for this copy. */
function scannerOf(rows: Int8Rows): Scanner | undefined {
  return scratchRegionOf(scanners, rows.memory, scanScratchBytesOf(rows.count, rows.dim), (queryAt) => {
    const scoresAt = queryAt + questionBytesOf(rows.dim);
    return { kernels: {}, queryAt, scoresAt, positionsAt: scoresAt + rows.count * 4 };
  });
}

/**
 * The query as the scan takes it: its values rounded (±127 at its largest component for the plain kernel,
 * ±63 for the relaxed one: int8-wasm.ts), the kernel they are for, and 1 / their norm; undefined for a zero vector.
 */
export interface Int8Query {
  values: Int16Array;
  kernel: Int8KernelKind;
  inverseNorm: number;
}

export function toInt8Query(vector: ArrayLike<number>, dim: number, kernel = int8KernelKind()): Int8Query | undefined {
  const scale = scaleOf(vector, 0, dim) * (kernel === 'relaxed' ? 63 / 127 : 1);
  if (scale === 0) return undefined;
  const values = new Int16Array(strideOf(dim));
  let squares = 0;
  for (let j = 0; j < dim; j++) {
    values[j] = Math.round(vector[j]! * scale);
    squares += values[j]! * values[j]!;
  }
  return { values, kernel, inverseNorm: 1 / Math.sqrt(squares) };
}

/** One scan's results, in this thread's scratch region of the copy: valid until its next scan of the copy. */
export interface Int8Scan {
  /** Per row: its int8 cosine with the query times |query₈| (times `query.inverseNorm`: the cosine). */
  scores: Float32Array;
  /** The positions of the rows whose score is at least `threshold`, ascending. */
  above(threshold: number): Int32Array;
}

/** Scores every row of the copy; undefined when this thread has no scratch region in it. */
export function scanInt8(rows: Int8Rows, query: Int8Query): Int8Scan | undefined {
  const scanner = scannerOf(rows);
  if (!scanner) return undefined;
  const { queryAt, scoresAt, positionsAt } = scanner;
  const kernels = (scanner.kernels[query.kernel] ??= int8Kernels(rows.memory, query.kernel));
  writeQuestion(rows.memory, queryAt, query.values, query.kernel);
  kernels.scores(queryAt, rows.rowsAt, rows.count, rows.stride, rows.scalesAt, scoresAt, rows.sumsAt);
  return {
    scores: new Float32Array(rows.memory.buffer, scoresAt, rows.count),
    above: (threshold) => new Int32Array(rows.memory.buffer, positionsAt, kernels.above(scoresAt, rows.count, threshold, positionsAt)),
  };
}

/** A 4-bit first pass's results (`Int8Scan`, the scores the 4-bit ones), which can rescore rows from the int8 rows. */
export interface Int4Scan extends Int8Scan {
  /** Replaces the scores of the rows at `positions` (fewer than the copy's rows) with their int8 scores (as `scanInt8` gives them). */
  rescore(positions: ArrayLike<number>): void;
}

/**
 * Scores every row of the copy from its 4-bit rows; undefined when the copy has none, the query is not for
 * the relaxed kernel (the 4-bit pass rescores with it), or this thread has no scratch region in the copy.
 */
export function scanInt4(rows: Int8Rows, query: Int8Query): Int4Scan | undefined {
  if (!rows.int4 || query.kernel !== 'relaxed') return undefined;
  const scanner = scannerOf(rows);
  if (!scanner) return undefined;
  const { queryAt, scoresAt, positionsAt } = scanner;
  const int4 = rows.int4;
  const kernels = (scanner.int4 ??= int4Kernels(rows.memory));
  const int8 = (scanner.kernels.relaxed ??= int8Kernels(rows.memory, 'relaxed'));
  writeQuestion(rows.memory, queryAt, query.values, 'relaxed');
  const offset = writeInt4Question(rows.memory, queryAt + rows.stride, query.values, rows.dim);
  kernels.scores(queryAt + rows.stride, int4.rowsAt, rows.count, int4.stride, int4.scalesAt, scoresAt, offset);
  return {
    scores: new Float32Array(rows.memory.buffer, scoresAt, rows.count),
    above: (threshold) => new Int32Array(rows.memory.buffer, positionsAt, int8.above(scoresAt, rows.count, threshold, positionsAt)),
    rescore: (positions) => {
      new Int32Array(rows.memory.buffer, positionsAt, positions.length).set(positions);
      kernels.scoresAt(queryAt, rows.rowsAt, positionsAt, positions.length, rows.stride, rows.scalesAt, scoresAt, rows.sumsAt);
    },
  };
}
