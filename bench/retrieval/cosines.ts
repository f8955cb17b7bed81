/**
 * The exact stage's cosines alone (prints numbers; not a timed test):
 *
 *   npx tsx bench/retrieval/cosines.ts [--rows 100000] [--dims 384] [--cosines 2200] [--rounds 15]
 *
 * A group of `--rows` random unit vectors in a shared WebAssembly memory, as an exact copy holds them
 * (int8-rows.ts), and sets of `--cosines` random positions in it (the vector leg's 1,280 int8 candidates
 * plus ~900 full-text-only hits at top_k 1024). Measures the CPU time of `cosinesAt` (vector-copies.ts) in
 * JS and in WebAssembly (cosine-wasm.ts), and of the WebAssembly kernel alone with 4, 8, 12 and 16 rows
 * side by side, in rounds that alternate the variants so that all see the same load; prints the median per
 * 1,000 cosines and checks that every variant gives the JS cosines bit for bit. Two cases: "cold", each
 * call with other positions (as successive questions: most rows come from main memory), and "warm", the
 * same positions again and again (the rows in the CPU caches: the arithmetic alone).
 */
import { loadavg } from 'node:os';
import { argument, percentile } from '../common.js';
import { dotsModule, ROWS_PER_STEP, type DotsKernel } from '../../src/index/vectors/cosine-wasm.js';
import { Int8RowsBuilder } from '../../src/index/vectors/int8-rows.js';
import { cosinesAt, float32Norm, toQuery, type VectorGroup } from '../../src/index/vectors/vector-copies.js';
import { prng, randomUnitVector } from './synthetic.js';

const rows = Number(argument('rows', '100000'));
const dims = Number(argument('dims', '384'));
const cosines = Number(argument('cosines', '2200'));
const rounds = Number(argument('rounds', '15'));
/** Calls per measurement: enough CPU time for process.cpuUsage's microseconds. */
const CALLS = 20;
const PAGE = 65536;

const random = prng(42);
const builder = new Int8RowsBuilder(rows, dims, { floats: true });
const vectors = builder.floats!;
const norms = new Float64Array(rows);
for (let i = 0; i < rows; i++) {
  vectors.set(randomUnitVector(random, dims), i * dims);
  norms[i] = float32Norm(vectors, i * dims, dims);
  builder.set(i, vectors, i * dims);
}
const int8 = builder.done();
const group = { dim: dims, rows: new Float64Array(rows), available: new Uint8Array(rows), vectors, norms, int8 } as unknown as VectorGroup;
// The same vectors without a memory to compute in: cosinesAt takes its JS path.
const jsGroup = { ...group, int8: undefined };
/** Sets of positions: as many as it takes to touch every row about once per round (the CPU caches hold a few MB). */
const sets = Math.max(1, Math.ceil(rows / cosines));
const positionSets = Array.from({ length: sets }, () => Array.from({ length: cosines }, () => Math.floor(random() * rows)));
const query = toQuery(randomUnitVector(random, dims));

/** The kernel alone on its own scratch region of the memory (query, addresses, dots), with the cosines' last step in JS. */
function kernelVariant(rowsPerStep: number): (positions: number[]) => Float64Array {
  // The index's kernel is built with ROWS_PER_STEP; another width is instantiated here.
  const dots = new WebAssembly.Instance(new WebAssembly.Module(dotsModule(rowsPerStep)), { env: { memory: int8.memory } }).exports.dots as DotsKernel;
  const padded = Math.ceil(cosines / rowsPerStep) * rowsPerStep;
  const queryAt = int8.memory.grow(Math.ceil((dims * 4 + padded * 8) / PAGE) + 1) * PAGE;
  const addressesAt = queryAt + Math.ceil(dims / 4) * 16;
  const dotsAt = addressesAt + padded * 4;
  new Float32Array(int8.memory.buffer, queryAt, dims).set(query.values);
  const out = new Float64Array(cosines);
  return (positions) => {
    const addresses = new Uint32Array(int8.memory.buffer, addressesAt, padded);
    for (let k = 0; k < cosines; k++) addresses[k] = positions[k]! * dims * 4;
    addresses.fill(addresses[0]!, cosines);
    dots(queryAt, addressesAt, padded, dims * 4, dotsAt);
    const results = new Float32Array(int8.memory.buffer, dotsAt, cosines);
    for (let k = 0; k < cosines; k++) out[k] = 1 - Math.fround(1 - results[k]! / (norms[positions[k]!]! * query.norm));
    return out;
  };
}

const run = (g: VectorGroup) => (positions: number[]) => {
  const out = new Float64Array(cosines);
  cosinesAt(g, positions, query, out);
  return out;
};
const variants: { name: string; run: (positions: number[]) => Float64Array }[] = [
  { name: 'JS cosinesAt (four rows side by side)', run: run(jsGroup) },
  { name: `WebAssembly cosinesAt (${ROWS_PER_STEP} rows per step, batches, padding)`, run: run(group) },
  ...[4, 8, 12, 16].map((r) => ({ name: `  kernel alone, ${r} rows per step`, run: kernelVariant(r) })),
];

for (const positions of positionSets.slice(0, 3)) {
  const expected = variants[0]!.run(positions);
  for (const { name, run } of variants) {
    const got = run(positions);
    const differing = got.filter((value, k) => !Object.is(value, expected[k])).length;
    if (differing > 0) throw new Error(`${name}: ${differing} of ${cosines} cosines differ from JS`);
  }
}
console.log(`${rows} rows × ${dims} dims, ${cosines} cosines per call; every variant equals JS bit for bit`);

// Warm-up: V8 optimises JS and WebAssembly functions after some calls.
for (let c = 0; c < 3 * CALLS; c++) for (const { run } of variants) run(positionSets[c % sets]!);

const cases = [
  { name: 'cold (other positions at each call)', positionsOf: (call: number) => positionSets[call % sets]! },
  { name: 'warm (the same positions at each call)', positionsOf: () => positionSets[0]! },
];
const times = cases.map(() => variants.map(() => [] as number[]));
const load = [loadavg()[0]!];
let call = 0;
for (let round = 0; round < rounds; round++) {
  cases.forEach(({ positionsOf }, c) => {
    variants.forEach(({ run }, v) => {
      const start = process.cpuUsage();
      for (let k = 0; k < CALLS; k++) run(positionsOf(call++));
      const used = process.cpuUsage(start);
      times[c]![v]!.push(((used.user + used.system) / 1000 / CALLS) * (1000 / cosines));
    });
  });
  load.push(loadavg()[0]!);
}
console.log(`load average ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)} (1 min)`);
cases.forEach(({ name }, c) => {
  console.log(`CPU ms per 1,000 cosines, ${name}, median (min) of ${rounds} rounds:`);
  variants.forEach(({ name: variant }, v) => {
    const t = times[c]![v]!;
    console.log(`  ${variant}: ${percentile(t, 50).toFixed(3)} (${Math.min(...t).toFixed(3)})`);
  });
});
