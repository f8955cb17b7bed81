/**
 * The embedded index's vector work alone, on a prebuilt database (prints numbers; not a timed test):
 *
 *   npx tsx bench/retrieval/vector-leg.ts --db /tmp/bench-100k.db [--size 100000] [--queries 100] [--vectors-mb 256]
 *
 * Builds the database of `--size` synthetic chunks (the corpus of run.ts) at `--db` if it is missing, then
 * measures, per question, the CPU time of the vector leg (`vectorSearch`, top_k 1024) and of the cosines of
 * the full-text hits (`cosineSimilarities` of the top_k full-text hits' ids), each once with the vectors
 * served by SQLite (`CAIRN_CACHE_VECTORS_MB=0`) and once from the in-memory copy, alternating question by
 * question so that both see the same load, and checks that both give the same hits and scores.
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { argument, percentile } from '../common.js';
import { openIndexDatabase } from '../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../src/index/sqlite-index.js';
import { prng, randomUnitVector, syntheticChunk, textSource } from './synthetic.js';

const DIMS = 384;
const file = argument('db', '/tmp/bench-100k.db');
const size = Number(argument('size', '100000'));
const queryCount = Number(argument('queries', '100'));
const vectorsMb = Number(argument('vectors-mb', '256'));

const random = prng(42);
const source = textSource(random);
if (!existsSync(file)) {
  const db = openIndexDatabase(file);
  const writer = new SqliteChunkIndex(db);
  const started = performance.now();
  for (let start = 0; start < size; start += 1000) {
    await writer.upsert(Array.from({ length: Math.min(1000, size - start) }, (_, k) => syntheticChunk(start + k, source, random, 'bench')));
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  console.log(`built ${size} chunks in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

const db = openIndexDatabase(file);
const fromSqlite = new SqliteChunkIndex(db, { vectorsCacheBytes: 0, postingsCacheBytes: 0 });
// The copy is built at the first search (the service builds it after the search, once the dataset has gone unwritten for 1 s).
const fromMemory = new SqliteChunkIndex(db, {
  vectorsCacheBytes: vectorsMb * 2 ** 20, vectorsQuietMs: 0, vectorsSchedule: (build) => build(), postingsCacheBytes: 0,
});
const filter = { datasetIds: ['bench'], availableOnly: true };
const queryRandom = prng(7);
const queries = Array.from({ length: queryCount }, (_, i) => ({
  question: source.questions[(i * 37) % source.questions.length]!,
  vector: randomUnitVector(queryRandom, DIMS),
}));

const cpuMs = <T>(run: () => T): [T, number] => {
  const start = process.cpuUsage();
  const result = run();
  const used = process.cpuUsage(start);
  return [result, (used.user + used.system) / 1000];
};

const loadStart = performance.now();
const [, loadCpu] = cpuMs(() => fromMemory.vectorSearchHits(queries[0]!.vector, filter, 1024));
console.log(`first search (loads the copy): ${loadCpu.toFixed(0)} ms CPU, ${(performance.now() - loadStart).toFixed(0)} ms wall`);

const times = { sqliteVector: [] as number[], memoryVector: [] as number[], sqliteCosines: [] as number[], memoryCosines: [] as number[] };
let worst = 0;
for (const [i, q] of queries.entries()) {
  const ids = fromSqlite.fullTextHits(q.question, filter, 1024).map((h) => h[0]);
  // Alternate which path runs first, so that neither always finds the other's pages in the CPU caches.
  const order = i % 2 === 0 ? [fromSqlite, fromMemory] : [fromMemory, fromSqlite];
  const results = new Map<SqliteChunkIndex, { hits: ReturnType<SqliteChunkIndex['vectorSearchHits']>; cosines: Map<string, number> }>();
  for (const index of order) {
    const [hits, vectorMs] = cpuMs(() => index.vectorSearchHits(q.vector, filter, 1024));
    const [cosines, cosineMs] = cpuMs(() => index.cosineSimilaritiesNow(ids, q.vector));
    const memory = index === fromMemory;
    (memory ? times.memoryVector : times.sqliteVector).push(vectorMs);
    (memory ? times.memoryCosines : times.sqliteCosines).push(cosineMs);
    results.set(index, { hits, cosines });
  }
  const a = results.get(fromSqlite)!;
  const b = results.get(fromMemory)!;
  if (a.hits.map((h) => h[0]).join() !== b.hits.map((h) => h[0]).join()) {
    const diff = a.hits.map((h, k) => [k, h[0], h[1], b.hits[k]![0], b.hits[k]![1]]).filter(([, x, , y]) => x !== y);
    console.log(`question ${i}: ${diff.length} places differ`, diff.slice(0, 4));
  }
  a.hits.forEach((h, k) => (worst = Math.max(worst, Math.abs(h[1] - b.hits[k]![1]))));
  if (a.cosines.size !== b.cosines.size) throw new Error(`question ${i}: different cosine ids`);
  for (const [id, c] of a.cosines) worst = Math.max(worst, Math.abs(c - b.cosines.get(id)!));
}

const row = (name: string, values: number[]) =>
  console.log(`  ${name.padEnd(44)} p50 ${percentile(values, 50).toFixed(2).padStart(6)} ms   p95 ${percentile(values, 95).toFixed(2).padStart(6)} ms`);
console.log(`\n${size.toLocaleString('en')} chunks, ${queryCount} questions, CPU ms per call (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
row('vector leg, exact stage in SQLite', times.sqliteVector);
row('vector leg, exact stage from the copy', times.memoryVector);
row('cosines of the full-text hits, SQLite', times.sqliteCosines);
row('cosines of the full-text hits, copy', times.memoryCosines);
console.log(`  largest score difference between the two: ${worst.toExponential(2)}`);
console.log(`  caches: ${JSON.stringify(await fromMemory.cacheSizes())}`);
db.close();
