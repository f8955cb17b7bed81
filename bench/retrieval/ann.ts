/**
 * Approximate vector indexes against exact search, for the vector leg at 100k–1M chunks (issue 17).
 *
 *   npx tsx bench/retrieval/ann.ts [--sizes 100000,1000000] [--queries 100] [--k 2048]
 *       [--configs usearch:16:128:f32,usearch:16:128:i8,hnswlib:16:128] [--ef 2048,4096] [--threads 0]
 *       [--seconds 900] [--modules DIR,...] [--corpus DIR] [--int8-kernels plain,relaxed] [--int4-factors 0,2,3,4] [--baselines no]
 *
 * The corpus is the retrieval bench's: 384-dim random unit vectors (bench/retrieval/synthetic.ts, seed 42;
 * the questions from seed 7, as run.ts makes them). Random directions are the hardest case for a graph
 * index: every point's nearest neighbours are barely nearer than the rest. For each size it measures, in
 * this process, the exact paths: an exact scan of a Float32Array in JS; the sign-bit preselection of
 * src/index/vectors/sign-bit-cache.ts followed by exact cosines of its k candidates; an exact scan in native SIMD
 * code (usearch's exactSearch) in float32; the same over int8 copies of the vectors followed by exact
 * cosines of its k candidates; and the index's own int8 scan (WebAssembly SIMD, src/index/vectors/int8-candidates.ts)
 * for top_k × 1.25 candidates followed by their exact cosines. Then each library configuration in a child process of its own, so
 * that its memory is its own: build (wall, CPU of all threads, RSS growth), the saved file, save and load
 * times, the CPU of one query for k candidates (single-threaded), recall, and removing and re-adding rows.
 *
 * Recall@N is the share of the exact top N found among the k candidates: the vector leg computes exact
 * cosines of its candidates and keeps the best, so that is the recall of its result. "order@30" is the
 * share found among the library's own first 30 (its ranking alone, without the exact pass).
 *
 * --configs: library:M:efConstruction[:quantization], or none for the exact paths only; --ef: search list sizes to measure, each on the
 * saved index loaded afresh (both libraries search with max(ef, k)); --threads: build threads (0 = all cores; hnswlib-node adds on one thread whatever this says);
 * --seconds bounds each build (rows added so far are measured when it runs out); --modules: directories
 * where the libraries under evaluation were installed (npm install --no-save), besides the project (usearch,
 * for its HNSW index and the native exact-scan baselines, is no dependency of Cairn: install it there);
 * --corpus DIR keeps the generated vectors and exact answers there for the next run; --int8-kernels adds, on one
 * int8 copy, the index's int8 scan with each kernel of src/index/vectors/int8-wasm.ts, alternating question by question
 * (the CPU of the kernel alone, of the coarse stage and of the whole leg); --int4-factors adds, on one int8 copy
 * with 4-bit rows, the coarse stage with its 4-bit first pass keeping each factor × the count (0: without the pass,
 * scanning every int8 row), alternating question by question; --baselines no skips the exact paths.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INT4_FACTOR, int8Candidates } from '../../src/index/vectors/int8-candidates.js';
import { Int8RowsBuilder, scanInt8, toInt8Query } from '../../src/index/vectors/int8-rows.js';
import { useInt8Kernel, type Int8KernelKind } from '../../src/index/vectors/int8-wasm.js';
import { SignBitCache } from '../../src/index/vectors/sign-bit-cache.js';
import { toSignBits } from '../../src/index/vectors/vector-codec.js';
import { argument, percentile } from '../common.js';
import { describeConfig, openAnnIndex, usearchExactSearch, type AnnConfig } from './ann-libraries.js';
import { describeFloor, measureFloor } from './floor.js';
import { prng, randomUnitVector } from './synthetic.js';

const DIMS = 384;
/** The exact answers kept per question: the vector leg's top_k. */
const TRUTH = 1024;
/** Rows removed and re-added in the update measurement. */
const UPDATED_ROWS = 1000;

interface Corpus {
  size: number;
  vectors: Float32Array;
  queries: Float32Array;
  /** Per question, the keys (row index + 1) of the exact top TRUTH, best first. */
  truth: Int32Array;
}

interface QueryFigures {
  cpuP50: number;
  cpuP95: number;
  wallP50: number;
  recall30: number;
  recall1024: number;
  order30: number;
}

interface ChildResult {
  config: string;
  builtRows: number;
  buildWall: number;
  buildCpu: number;
  rssGrowthMb: number;
  peakRssMb: number;
  fileMb: number;
  saveWall: number;
  loadWall: number;
  loadedSame: boolean;
  searches: ({ ef: number } & QueryFigures)[];
  removeMicros: number;
  addMicros: number;
  removedReturned: number;
}

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

function procStatusMb(field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith(field))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

function dot(vectors: Float32Array, offset: number, query: Float32Array): number {
  let a = 0, b = 0, c = 0, d = 0;
  for (let j = 0; j < DIMS; j += 4) {
    a += vectors[offset + j]! * query[j]!;
    b += vectors[offset + j + 1]! * query[j + 1]!;
    c += vectors[offset + j + 2]! * query[j + 2]!;
    d += vectors[offset + j + 3]! * query[j + 3]!;
  }
  return a + b + c + d;
}

/** Indices of the k largest scores, largest first (a bounded min-heap, then a sort of the k). */
function topK(scores: Float32Array, k: number): Int32Array {
  const heapScore = new Float32Array(k);
  const heapIndex = new Int32Array(k);
  let size = 0;
  const siftDown = (i: number) => {
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < size && heapScore[l]! < heapScore[m]!) m = l;
      if (r < size && heapScore[r]! < heapScore[m]!) m = r;
      if (m === i) return;
      [heapScore[i], heapScore[m]] = [heapScore[m]!, heapScore[i]!];
      [heapIndex[i], heapIndex[m]] = [heapIndex[m]!, heapIndex[i]!];
      i = m;
    }
  };
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i]!;
    if (size < k) {
      let j = size++;
      heapScore[j] = s;
      heapIndex[j] = i;
      while (j > 0 && heapScore[(j - 1) >> 1]! > heapScore[j]!) {
        const p = (j - 1) >> 1;
        [heapScore[p], heapScore[j]] = [heapScore[j]!, heapScore[p]!];
        [heapIndex[p], heapIndex[j]] = [heapIndex[j]!, heapIndex[p]!];
        j = p;
      }
    } else if (s > heapScore[0]!) {
      heapScore[0] = s;
      heapIndex[0] = i;
      siftDown(0);
    }
  }
  const order = Array.from({ length: size }, (_, i) => i).sort((x, y) => heapScore[y]! - heapScore[x]!);
  return Int32Array.from(order, (i) => heapIndex[i]!);
}

function recallFigures(found: ArrayLike<number>, truth: Int32Array, q: number): { r30: number; r1024: number; o30: number } {
  const exact = truth.subarray(q * TRUTH, (q + 1) * TRUTH);
  const all = new Set(Array.from(found));
  const first30 = new Set(Array.from(found).slice(0, 30));
  let r30 = 0, r1024 = 0, o30 = 0;
  exact.forEach((key, rank) => {
    if (!all.has(key)) return;
    r1024++;
    if (rank < 30) r30++;
    if (rank < 30 && first30.has(key)) o30++;
  });
  return { r30: r30 / 30, r1024: r1024 / TRUTH, o30: o30 / 30 };
}

/** Runs `search` once per question (after two warm-up questions) and measures CPU, time and recall. */
function measureQueries(corpus: Corpus, search: (query: Float32Array) => ArrayLike<number>): QueryFigures {
  const count = corpus.queries.length / DIMS;
  const query = (q: number) => corpus.queries.subarray(q * DIMS, (q + 1) * DIMS);
  for (let q = 0; q < Math.min(2, count); q++) search(query(q));
  const cpu: number[] = [], wall: number[] = [];
  let r30 = 0, r1024 = 0, o30 = 0;
  for (let q = 0; q < count; q++) {
    const started = process.cpuUsage();
    const start = performance.now();
    const found = search(query(q));
    wall.push(performance.now() - start);
    cpu.push(cpuMs(started));
    const r = recallFigures(found, corpus.truth, q);
    r30 += r.r30;
    r1024 += r.r1024;
    o30 += r.o30;
  }
  return {
    cpuP50: percentile(cpu, 50), cpuP95: percentile(cpu, 95), wallP50: percentile(wall, 50),
    recall30: r30 / count, recall1024: r1024 / count, order30: o30 / count,
  };
}

// ---------------------------------------------------------------------------------------------- corpus

function corpusFiles(dir: string, size: number, queries: number) {
  const stem = join(dir, `ann-${size}-${queries}`);
  return { vectors: `${stem}.vectors.f32`, queries: `${stem}.queries.f32`, truth: `${stem}.truth.i32` };
}

/** A file's bytes, at a 4-aligned offset (typed arrays of 32-bit values require it). */
function readAligned(path: string): Buffer {
  const bytes = readFileSync(path);
  return bytes.byteOffset % 4 === 0 ? bytes : Buffer.from(new Uint8Array(bytes));
}
const readFloats = (path: string) => {
  const bytes = readAligned(path);
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
};
const readInts = (path: string) => {
  const bytes = readAligned(path);
  return new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
};

function unitVectors(seed: number, count: number): Float32Array {
  const random = prng(seed);
  const out = new Float32Array(count * DIMS);
  for (let i = 0; i < count; i++) out.set(randomUnitVector(random, DIMS), i * DIMS);
  return out;
}

/** The corpus of `size` vectors with its exact answers, generated (and written to `dir`) unless there. */
function loadCorpus(dir: string, size: number, queryCount: number): Corpus {
  const files = corpusFiles(dir, size, queryCount);
  if (existsSync(files.truth)) {
    return { size, vectors: readFloats(files.vectors), queries: readFloats(files.queries), truth: readInts(files.truth) };
  }
  const vectors = unitVectors(42, size);
  const queries = unitVectors(7, queryCount);
  const truth = new Int32Array(queryCount * TRUTH);
  const scores = new Float32Array(size);
  for (let q = 0; q < queryCount; q++) {
    const query = queries.subarray(q * DIMS, (q + 1) * DIMS);
    for (let i = 0; i < size; i++) scores[i] = dot(vectors, i * DIMS, query);
    truth.set(topK(scores, TRUTH).map((i) => i + 1), q * TRUTH);
  }
  writeFileSync(files.vectors, vectors);
  writeFileSync(files.queries, queries);
  writeFileSync(files.truth, truth);
  return { size, vectors, queries, truth };
}

// ------------------------------------------------------------------------------------ exact baselines

/** Exact cosine of the question with every vector (one Float32Array), then the best k. */
function exactScan(corpus: Corpus, k: number): QueryFigures {
  const scores = new Float32Array(corpus.size);
  return measureQueries(corpus, (query) => {
    for (let i = 0; i < corpus.size; i++) scores[i] = dot(corpus.vectors, i * DIMS, query);
    return topK(scores, k).map((i) => i + 1);
  });
}

/** The embedded index's approach: Hamming distance of sign bits picks k rows, exact cosines rank them. */
function signBitsThenExact(corpus: Corpus, k: number): QueryFigures {
  const bytesPerRow = DIMS / 8;
  const bits = new Uint8Array(corpus.size * bytesPerRow);
  for (let i = 0; i < corpus.size; i++) {
    bits.set(toSignBits(Array.from(corpus.vectors.subarray(i * DIMS, (i + 1) * DIMS))), i * bytesPerRow);
  }
  const group = {
    dim: DIMS,
    rows: Float64Array.from({ length: corpus.size }, (_, i) => i + 1),
    available: new Uint8Array(corpus.size).fill(1),
    bits,
  };
  const cache = new SignBitCache({ generations: () => new Map([['bench', 1]]), keys: () => [group] });
  return measureQueries(corpus, (query) => {
    const rows = cache.nearest(toSignBits(Array.from(query)), DIMS, { datasetIds: ['bench'], availableOnly: true }, k);
    const scored = rows.map((row) => [row, dot(corpus.vectors, (row - 1) * DIMS, query)] as const);
    scored.sort((a, b) => b[1] - a[1]);
    return scored.map(([row]) => row);
  });
}

/**
 * Exact cosines of the question with every vector in native SIMD code (usearch's exactSearch, 1 thread).
 * exactSearch reads its arrays from the start of their buffers, ignoring a view's offset: hence the copies.
 */
function nativeExactScan(corpus: Corpus, k: number, exactSearch: ReturnType<typeof usearchExactSearch>): QueryFigures {
  const vectors = corpus.vectors.byteOffset === 0 ? corpus.vectors : corpus.vectors.slice();
  return measureQueries(corpus, (query) => Array.from(exactSearch(vectors, query.slice(), DIMS, k).keys, (key) => Number(key) + 1));
}

/** Each vector scaled to ±127 at its largest component (cosine ignores a vector's scale) and rounded. */
function toInt8(vectors: Float32Array): Int8Array {
  const out = new Int8Array(vectors.length);
  for (let o = 0; o < vectors.length; o += DIMS) {
    let max = 0;
    for (let j = 0; j < DIMS; j++) max = Math.max(max, Math.abs(vectors[o + j]!));
    const scale = max > 0 ? 127 / max : 0;
    for (let j = 0; j < DIMS; j++) out[o + j] = Math.round(vectors[o + j]! * scale);
  }
  return out;
}

/** A native exact scan of int8 copies (a quarter of the bytes) picks k rows; exact float cosines rank them. */
function nativeInt8ScanThenExact(corpus: Corpus, k: number, exactSearch: ReturnType<typeof usearchExactSearch>): QueryFigures {
  const vectors8 = toInt8(corpus.vectors);
  return measureQueries(corpus, (query) => {
    const found = exactSearch(vectors8, toInt8(query), DIMS, k).keys;
    const scored = Array.from(found, (key) => [Number(key) + 1, dot(corpus.vectors, Number(key) * DIMS, query)] as const);
    scored.sort((a, b) => b[1] - a[1]);
    return scored.map(([row]) => row);
  });
}

/** The corpus as one int8 group of the index's coarse stage (rows numbered from 1), with 4-bit rows if asked. */
function int8Group(corpus: Corpus, int4 = false) {
  const builder = new Int8RowsBuilder(corpus.size, DIMS, { int4 });
  for (let i = 0; i < corpus.size; i++) builder.set(i, corpus.vectors, i * DIMS);
  return {
    dim: DIMS,
    rows: Float64Array.from({ length: corpus.size }, (_, i) => i + 1),
    available: new Uint8Array(corpus.size).fill(1),
    int8: builder.done(),
  };
}

/**
 * The embedded index's int8 coarse stage (src/index/vectors/int8-candidates.ts): a WebAssembly SIMD scan of int8
 * rows in a shared WebAssembly.Memory picks k rows; exact float cosines rank them.
 */
function wasmInt8ScanThenExact(corpus: Corpus, k: number): QueryFigures {
  const group = int8Group(corpus);
  return measureQueries(corpus, (query) => {
    const rows = int8Candidates([group], query, { availableOnly: true }, k)!.rows;
    const scored = rows.map((row) => [row, dot(corpus.vectors, (row - 1) * DIMS, query)] as const);
    scored.sort((a, b) => b[1] - a[1]);
    return scored.map(([row]) => row);
  });
}

/** CPU ms of the coarse stage and of the whole leg, and the leg's recall, of one way of scanning. */
interface CoarseFigures {
  coarseP50: number;
  coarseP95: number;
  wholeP50: number;
  wholeP95: number;
  recall30: number;
  recall1024: number;
}

/** One way's samples of the coarse stage and the whole leg, and its recalls summed over the questions. */
interface LegSamples {
  coarse: number[];
  whole: number[];
  r30: number;
  r1024: number;
}

const legSamples = (): LegSamples => ({ coarse: [], whole: [], r30: 0, r1024: 0 });

/**
 * Question q through one way's coarse stage (`candidates`), then exact cosines of its candidates in JS: the
 * candidates, and (when `into` is given) the CPU of the stage and of the whole leg and the leg's recall added to it.
 */
function timedLeg(corpus: Corpus, q: number, vector: Float32Array, candidates: () => number[], into?: LegSamples): number[] {
  const started = process.cpuUsage();
  const rows = candidates();
  const coarse = cpuMs(started);
  const scored = rows.map((row) => [row, dot(corpus.vectors, (row - 1) * DIMS, vector)] as const);
  scored.sort((a, b) => b[1] - a[1]);
  const whole = cpuMs(started);
  if (into) {
    into.coarse.push(coarse);
    into.whole.push(whole);
    const r = recallFigures(scored.map(([row]) => row), corpus.truth, q);
    into.r30 += r.r30;
    into.r1024 += r.r1024;
  }
  return rows;
}

function coarseFigures(s: LegSamples, questions: number): CoarseFigures {
  return {
    coarseP50: percentile(s.coarse, 50), coarseP95: percentile(s.coarse, 95), wholeP50: percentile(s.whole, 50),
    wholeP95: percentile(s.whole, 95), recall30: s.r30 / questions, recall1024: s.r1024 / questions,
  };
}

/**
 * Every question asked each of `ways` ways, alternating question by question (the order rotated every
 * question, so that all see the same load), after two questions asked each way unrecorded (warm-up).
 */
function alternating(questions: number, ways: number, ask: (q: number, way: number, record: boolean) => void): void {
  for (let q = 0; q < Math.min(2, questions); q++) for (let way = 0; way < ways; way++) ask(q, way, false);
  for (let q = 0; q < questions; q++) for (let i = 0; i < ways; i++) ask(q, (i + q) % ways, true);
}

interface KernelFigures extends CoarseFigures {
  kernel: Int8KernelKind;
  scanP50: number;
}

/**
 * The int8 scan of one copy with each kernel, alternating question by question: CPU of the kernel alone
 * (`scanInt8`), of the coarse stage (`int8Candidates`) and of the whole leg (coarse stage, then exact cosines
 * of the candidates in JS), and recall. Each question is asked twice per kernel: once for the kernel alone,
 * once for the coarse stage and the leg.
 */
function int8KernelsAlternating(corpus: Corpus, k: number, kernels: Int8KernelKind[]): KernelFigures[] {
  const group = int8Group(corpus);
  const count = corpus.queries.length / DIMS;
  const samples = kernels.map(() => ({ scan: [] as number[], leg: legSamples() }));
  try {
    alternating(count, kernels.length, (q, at, record) => {
      useInt8Kernel(kernels[at]);
      const vector = corpus.queries.subarray(q * DIMS, (q + 1) * DIMS);
      const started = process.cpuUsage();
      scanInt8(group.int8, toInt8Query(vector, DIMS)!);
      if (record) samples[at]!.scan.push(cpuMs(started));
      timedLeg(corpus, q, vector, () => int8Candidates([group], vector, { availableOnly: true }, k)!.rows, record ? samples[at]!.leg : undefined);
    });
  } finally {
    useInt8Kernel(undefined);
  }
  return samples.map((s, at) => ({ kernel: kernels[at]!, scanP50: percentile(s.scan, 50), ...coarseFigures(s.leg, count) }));
}

interface Int4Figures extends CoarseFigures {
  factor: number;
  /** Questions whose candidates are those of the scan of every int8 row. */
  same: number;
}

/**
 * The coarse stage of one copy with 4-bit rows, its first pass keeping each factor × k rows (0: without the
 * pass), alternating question by question: CPU of the coarse stage (`int8Candidates`) and of the whole leg
 * (coarse stage, then exact cosines of the candidates in JS), recall, and how many questions got exactly the
 * candidates of the int8 scan of every row.
 */
function int4FactorsAlternating(corpus: Corpus, k: number, factors: number[]): Int4Figures[] {
  const group = int8Group(corpus, true);
  const count = corpus.queries.length / DIMS;
  const samples = factors.map(() => ({ leg: legSamples(), same: 0 }));
  const candidates = (vector: Float32Array, int4Factor: number) => int8Candidates([group], vector, { availableOnly: true }, k, { int4Factor })!.rows;
  alternating(count, factors.length, (q, at, record) => {
    const vector = corpus.queries.subarray(q * DIMS, (q + 1) * DIMS);
    const rows = timedLeg(corpus, q, vector, () => candidates(vector, factors[at]!), record ? samples[at]!.leg : undefined);
    if (!record) return;
    const today = candidates(vector, 0);
    if (today.length === rows.length && today.every((row, i) => rows[i] === row)) samples[at]!.same++;
  });
  return samples.map((s, at) => ({ factor: factors[at]!, same: s.same, ...coarseFigures(s.leg, count) }));
}

// ------------------------------------------------------------------------------- one library (child)

interface ChildTask {
  corpusDir: string;
  size: number;
  queries: number;
  k: number;
  efs: number[];
  threads: number;
  seconds: number;
  modules: string[];
  config: AnnConfig;
}

function runChild(task: ChildTask): ChildResult {
  const files = corpusFiles(task.corpusDir, task.size, task.queries);
  const corpus: Corpus = { size: task.size, vectors: readFloats(files.vectors), queries: readFloats(files.queries), truth: readInts(files.truth) };
  const keys = Float64Array.from({ length: task.size }, (_, i) => i + 1);
  const rssBefore = procStatusMb('VmRSS');

  let index = openAnnIndex(task.config, DIMS, task.modules);
  const buildCpu = process.cpuUsage();
  const buildStart = performance.now();
  const batch = 10_000;
  let built = 0;
  while (built < task.size && performance.now() - buildStart < task.seconds * 1000) {
    const end = Math.min(task.size, built + batch);
    index.add(keys.subarray(built, end), corpus.vectors.subarray(built * DIMS, end * DIMS), task.threads);
    built = end;
  }
  const buildWall = (performance.now() - buildStart) / 1000;
  const buildCpuS = cpuMs(buildCpu) / 1000;
  const rssGrowthMb = procStatusMb('VmRSS') - rssBefore;

  const dir = mkdtempSync(join(tmpdir(), 'cairn-ann-'));
  try {
    const file = join(dir, 'index.bin');
    let start = performance.now();
    index.save(file);
    const saveWall = (performance.now() - start) / 1000;
    const fileMb = statSync(file).size / 2 ** 20;
    const probe = corpus.queries.subarray(0, DIMS);
    const before = JSON.stringify(index.search(probe, 30));
    start = performance.now();
    index = index.load(file, 64);
    const loadWall = (performance.now() - start) / 1000;
    const loadedSame = JSON.stringify(index.search(probe, 30)) === before;

    const searches = task.efs.map((ef) => {
      index = index.load(file, ef);
      return { ef, ...measureQueries(corpus, (query) => index.search(query, task.k)) };
    });

    // Updates: remove rows that questions find, check they are gone, add them back.
    const random = prng(99);
    const chosen = Array.from({ length: UPDATED_ROWS }, () => 1 + Math.floor(random() * built));
    const truthHead = Array.from(corpus.truth.subarray(0, 10 * TRUTH)).filter((key) => key <= built).slice(0, 100);
    const removed = [...new Set([...chosen, ...truthHead])];
    start = performance.now();
    index.remove(removed);
    const removeMicros = ((performance.now() - start) * 1000) / removed.length;
    const gone = new Set(removed);
    let removedReturned = 0;
    for (let q = 0; q < 10; q++) {
      removedReturned += index.search(corpus.queries.subarray(q * DIMS, (q + 1) * DIMS), task.k).filter((key) => gone.has(key)).length;
    }
    const backVectors = new Float32Array(removed.length * DIMS);
    removed.forEach((key, i) => backVectors.set(corpus.vectors.subarray((key - 1) * DIMS, key * DIMS), i * DIMS));
    start = performance.now();
    index.add(Float64Array.from(removed), backVectors, task.threads);
    const addMicros = ((performance.now() - start) * 1000) / removed.length;

    return {
      config: describeConfig(task.config), builtRows: built, buildWall, buildCpu: buildCpuS, rssGrowthMb,
      peakRssMb: procStatusMb('VmHWM'), fileMb, saveWall, loadWall, loadedSame, searches, removeMicros, addMicros,
      removedReturned,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// -------------------------------------------------------------------------------------------- report

function parseConfig(text: string): AnnConfig {
  const [library, m, efc, quantization] = text.split(':');
  if (library !== 'usearch' && library !== 'hnswlib') throw new Error(`--configs: unknown library ${library}`);
  return { library, m: Number(m ?? 16), efConstruction: Number(efc ?? 128), quantization: (quantization ?? 'f32') as AnnConfig['quantization'] };
}

const f = (x: number, digits = 1) => x.toFixed(digits);

function queryCells(q: QueryFigures): string {
  return `${f(q.cpuP50)} / ${f(q.cpuP95)} (${f(q.wallP50)}) | ${f(q.recall30, 3)} | ${f(q.recall1024, 3)} | ${f(q.order30, 3)}`;
}

function exactRow(name: string, q: QueryFigures): string {
  return `| ${name} | - | - | - | - | - | ${queryCells(q)} | - |`;
}

/** One row per search list size; the build, file and update figures on the first. */
function libraryRows(r: ChildResult, size: number): string[] {
  const partial = r.builtRows < size ? ` (${r.builtRows.toLocaleString('en')} rows: time ran out)` : '';
  const sameAfterLoad = r.loadedSame ? '' : ' (answers differ after load)';
  const updates = `${f(r.removeMicros)} / ${f(r.addMicros)} µs${r.removedReturned ? `, ${r.removedReturned} removed rows returned` : ''}`;
  const built = `${f(r.buildWall)} s / ${f(r.buildCpu)} s (${f(r.builtRows / r.buildWall, 0)}/s) | ${f(r.rssGrowthMb, 0)} MB (peak ${f(r.peakRssMb, 0)}) | ${f(r.fileMb, 0)} MB | ${f(r.saveWall, 2)} / ${f(r.loadWall, 2)} s${sameAfterLoad}`;
  return r.searches.map((s, i) =>
    i === 0
      ? `| ${r.config}${partial} | ${built} | ${s.ef} | ${queryCells(s)} | ${updates} |`
      : `| 〃 | 〃 | 〃 | 〃 | 〃 | ${s.ef} | ${queryCells(s)} | |`,
  );
}

function main(): void {
  const childTask = argument('child', '');
  if (childTask) {
    process.stdout.write(`${JSON.stringify(runChild(JSON.parse(childTask) as ChildTask))}\n`);
    return;
  }
  const sizes = argument('sizes', '100000,1000000').split(',').map(Number);
  const queries = Number(argument('queries', '100'));
  const k = Number(argument('k', '2048'));
  const efs = argument('ef', '2048,4096').split(',').map(Number);
  const threads = Number(argument('threads', '0'));
  const seconds = Number(argument('seconds', '900'));
  const modules = argument('modules', '').split(',').filter(Boolean);
  const configsArgument = argument('configs', 'usearch:16:128:i8,usearch:16:128:f32,hnswlib:16:128');
  const configs = configsArgument === 'none' ? [] : configsArgument.split(',').map(parseConfig);
  const keptCorpus = argument('corpus', '');
  const int8Kernels = argument('int8-kernels', '').split(',').filter(Boolean) as Int8KernelKind[];
  const int4Factors = argument('int4-factors', '').split(',').filter(Boolean).map(Number);
  const baselines = argument('baselines', 'yes') !== 'no';
  const corpusDir = keptCorpus || mkdtempSync(join(tmpdir(), 'cairn-ann-corpus-'));
  mkdirSync(corpusDir, { recursive: true });
  const self = fileURLToPath(import.meta.url);

  try {
    for (const size of sizes) {
      console.log(`\n## ${size.toLocaleString('en')} vectors, ${DIMS} dims, ${queries} questions, k = ${k} candidates`);
      const generated = performance.now();
      const corpus = loadCorpus(corpusDir, size, queries);
      console.log(`corpus and exact answers ready in ${f((performance.now() - generated) / 1000)} s`);
      console.log(describeFloor(size, measureFloor(size, DIMS)));
      console.log('\n| index | build wall / CPU (rate) | memory (RSS growth) | file | save / load | ef | query CPU p50 / p95 (wall p50), ms | recall@30 | recall@1024 | order@30 | remove / re-add per row |');
      console.log('|---|---|---|---|---|---|---|---|---|---|---|');
      // The index asks the int8 scan for top_k × 1.25 candidates (sqlite-index.ts), the sign bits for 2×.
      const int8K = Math.ceil(TRUTH * 1.25);
      if (baselines) {
        console.log(exactRow('exact scan (JS, Float32Array)', exactScan(corpus, k)));
        console.log(exactRow(`sign bits → ${k} → exact cosines (JS)`, signBitsThenExact(corpus, k)));
        let native: ReturnType<typeof usearchExactSearch> | undefined;
        try {
          native = usearchExactSearch(modules);
        } catch (err) {
          console.log(`| native exact scans skipped: ${(err as Error).message} |`);
        }
        if (native) {
          console.log(exactRow('exact scan (native SIMD, usearch exactSearch, f32)', nativeExactScan(corpus, k, native)));
          console.log(exactRow(`int8 exact scan (native SIMD) → ${k} → exact cosines (JS)`, nativeInt8ScanThenExact(corpus, k, native)));
        }
        console.log(exactRow(`int8 scan (WebAssembly SIMD, int8-candidates.ts) → ${int8K} → exact cosines (JS)`, wasmInt8ScanThenExact(corpus, int8K)));
      }
      if (int8Kernels.length > 0) {
        console.log(`\nint8 kernels alternating question by question, ${int8K} candidates; CPU ms per question:\n`);
        console.log('| kernel | kernel alone p50 | per row | coarse stage p50 / p95 | whole leg p50 / p95 | recall@30 | recall@1024 |');
        console.log('|---|---|---|---|---|---|---|');
        for (const r of int8KernelsAlternating(corpus, int8K, int8Kernels)) {
          console.log(`| ${r.kernel} | ${f(r.scanP50, 2)} | ${f((r.scanP50 * 1e6) / size)} ns | ${f(r.coarseP50, 2)} / ${f(r.coarseP95, 2)} | ${f(r.wholeP50, 2)} / ${f(r.wholeP95, 2)} | ${f(r.recall30, 3)} | ${f(r.recall1024, 3)} |`);
        }
        console.log('');
      }
      if (int4Factors.length > 0) {
        console.log(`\ncoarse stage with a 4-bit first pass keeping factor × ${int8K} rows (0: every int8 row scanned; the index's factor ${INT4_FACTOR}), alternating question by question; CPU ms per question:\n`);
        console.log('| factor | coarse stage p50 / p95 | whole leg p50 / p95 | recall@30 | recall@1024 | questions with today\'s candidates |');
        console.log('|---|---|---|---|---|---|');
        for (const r of int4FactorsAlternating(corpus, int8K, int4Factors)) {
          console.log(`| ${r.factor} | ${f(r.coarseP50, 2)} / ${f(r.coarseP95, 2)} | ${f(r.wholeP50, 2)} / ${f(r.wholeP95, 2)} | ${f(r.recall30, 3)} | ${f(r.recall1024, 3)} | ${r.same} / ${queries} |`);
        }
        console.log('');
      }
      for (const config of configs) {
        const task: ChildTask = { corpusDir, size, queries, k, efs, threads, seconds, modules, config };
        const child = spawnSync(process.execPath, ['--import', 'tsx', self, '--child', JSON.stringify(task)], {
          encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20, timeout: (seconds * 3 + 600) * 1000,
        });
        const line = child.stdout?.trim().split('\n').pop();
        if (child.status !== 0 || !line) {
          console.log(`| ${describeConfig(config)} | failed (exit ${child.status ?? child.signal}) | | | | | | | | | |`);
          continue;
        }
        for (const row of libraryRows(JSON.parse(line) as ChildResult, size)) console.log(row);
      }
    }
    console.log(`\nload average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  } finally {
    if (!keptCorpus) rmSync(corpusDir, { recursive: true, force: true });
  }
}

main();
