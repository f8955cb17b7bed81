/**
 * The brute-force floor of vector search on this machine, measured in the same run as the figures it is
 * compared with: exact cosine of one query with all n vectors (a tight loop over one Float32Array), and
 * the sign-bit scan (Hamming distances over packed 32-bit words) that the index's coarse stage does. Both
 * in JS, and both in C (bench/retrieval/floor.c, built with gcc -O3 -march=native) when gcc is present:
 * the C exact scan is the memory-bound limit no retrieval with exact vectors can beat.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HammingRows } from '../../src/index/vectors/hamming-wasm.js';
import { percentile } from '../common.js';

export interface Floor {
  /** Median ms of one query over all vectors. */
  jsExact: number;
  jsSignBits: number;
  /** The index's own sign-bit scan (WebAssembly i64.popcnt, src/index/vectors/hamming-wasm.ts). */
  wasmSignBits: number;
  cExact?: number;
  cSignBits?: number;
}

const REPEATS = 7;

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Runs before timing: V8 optimises a hot loop only after a few runs. */
const WARMUP = 4;

function medianMs(run: () => number): number {
  let sink = 0;
  const times: number[] = [];
  for (let r = 0; r < WARMUP + REPEATS; r++) {
    const start = performance.now();
    sink += run();
    if (r >= WARMUP) times.push(performance.now() - start);
  }
  if (Number.isNaN(sink)) throw new Error('unreachable');
  return percentile(times, 50);
}

function jsFloor(n: number, dims: number): Pick<Floor, 'jsExact' | 'jsSignBits' | 'wasmSignBits'> {
  const vectors = new Float32Array(n * dims);
  for (let i = 0; i < vectors.length; i++) vectors[i] = Math.random() - 0.5;
  const query = Float32Array.from({ length: dims }, () => Math.random() - 0.5);
  // Four sums: one sum would wait on each addition's latency rather than on memory.
  const quads = dims - (dims % 4);
  const jsExact = medianMs(() => {
    let best = -Infinity;
    for (let i = 0, o = 0; i < n; i++, o += dims) {
      let a = 0, b = 0, c = 0, d = 0;
      for (let j = 0; j < quads; j += 4) {
        a += vectors[o + j]! * query[j]!;
        b += vectors[o + j + 1]! * query[j + 1]!;
        c += vectors[o + j + 2]! * query[j + 2]!;
        d += vectors[o + j + 3]! * query[j + 3]!;
      }
      for (let j = quads; j < dims; j++) a += vectors[o + j]! * query[j]!;
      if (a + b + c + d > best) best = a + b + c + d;
    }
    return best;
  });
  const wordsPerRow = Math.ceil(dims / 32);
  const words = new Uint32Array(n * wordsPerRow);
  for (let i = 0; i < words.length; i++) words[i] = (Math.random() * 2 ** 32) >>> 0;
  const q = words.slice(0, wordsPerRow);
  const jsSignBits = medianMs(() => {
    let total = 0;
    for (let i = 0, o = 0; i < n; i++, o += wordsPerRow) {
      for (let w = 0; w < wordsPerRow; w++) total += popcount(words[o + w]! ^ q[w]!);
    }
    return total;
  });
  const bytes = new Uint8Array(words.buffer);
  const rows = new HammingRows(bytes, n, dims);
  const queryBits = bytes.slice(0, Math.ceil(dims / 8));
  const wasmSignBits = medianMs(() => rows.distances(queryBits)[n - 1]!);
  return { jsExact, jsSignBits, wasmSignBits };
}

function cFloor(n: number, dims: number): Pick<Floor, 'cExact' | 'cSignBits'> {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-floor-'));
  try {
    const binary = join(dir, 'floor');
    const source = new URL('./floor.c', import.meta.url).pathname;
    execFileSync('gcc', ['-O3', '-march=native', '-ffast-math', '-o', binary, source], { stdio: 'ignore' });
    const [cExact, cSignBits] = execFileSync(binary, [String(n), String(dims), String(REPEATS)], { encoding: 'utf8' }).trim().split(' ').map(Number);
    return { cExact, cSignBits };
  } catch {
    return {}; // no gcc: the JS figures stand alone
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function measureFloor(n: number, dims: number): Floor {
  return { ...jsFloor(n, dims), ...cFloor(n, dims) };
}

/** The floor figures compare against: C's exact scan when measured, else JS's. */
export function exactFloor(floor: Floor): number {
  return floor.cExact ?? floor.jsExact;
}

export function describeFloor(n: number, floor: Floor): string {
  const c = floor.cExact !== undefined ? `C ${floor.cExact.toFixed(1)} ms, sign bits ${floor.cSignBits!.toFixed(2)} ms; ` : '';
  return `floor, one query over all ${n.toLocaleString('en')} vectors: exact cosine ${c}JS ${floor.jsExact.toFixed(1)} ms, sign bits ${floor.jsSignBits.toFixed(1)} ms; sign bits in WebAssembly (the index's scan) ${floor.wasmSignBits.toFixed(2)} ms`;
}

/** "× 3.2 floor": a figure as a multiple of the exact-scan floor. */
export function vsFloor(ms: number, floor: Floor): string {
  return `(${(ms / exactFloor(floor)).toFixed(1)}× floor)`;
}
