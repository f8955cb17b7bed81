/**
 * The embedded index's vector work alone, on a prebuilt database (prints numbers; not a timed test):
 *
 *   npx tsx bench/retrieval/vector-leg.ts --db /tmp/bench-100k.db [--size 100000] [--queries 100] [--vectors-mb 256] [--int8-only-mb 64]
 *
 * Builds the database of `--size` synthetic chunks (the corpus of run.ts) at `--db` if it is missing, then
 * measures, per question, the CPU time of the vector leg (`vectorSearch`, top_k 1024) on three paths,
 * alternating question by question so that all see the same load:
 *   - sign bits → exact stage in SQLite (`CAIRN_CACHE_VECTORS_MB=0`);
 *   - int8 scan → exact stage from the copy (the default when the exact copy fits `--vectors-mb`);
 *   - int8 scan → exact stage in SQLite (the int8 copy alone: a bound of `--int8-only-mb`, too small for
 *     the exact copy);
 * each path's recall@30 against exact search (every row's cosine in SQLite), and that every hit found by
 * a path has the exact search's score. Then the cosines of the full-text hits (`cosineSimilarities` of the
 * top_k full-text hits' ids), from SQLite and from the copy, checked equal.
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { argument, percentile } from '../common.js';
import { openIndexDatabase } from '../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../src/index/chunks/sqlite-index.js';
import { prng, randomUnitVector, syntheticChunk, textSource } from './synthetic.js';

const DIMS = 384;
const file = argument('db', '/tmp/bench-100k.db');
const size = Number(argument('size', '100000'));
const queryCount = Number(argument('queries', '100'));
const vectorsMb = Number(argument('vectors-mb', '256'));
const int8OnlyMb = Number(argument('int8-only-mb', '64'));

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
// The copies are built at the first search (the service builds them after the search, once the dataset has gone unwritten for 1 s).
const built = { vectorsQuietMs: 0, vectorsSchedule: (build: () => void) => build(), postingsCacheBytes: 0 };
const fromSqlite = new SqliteChunkIndex(db, { vectorsCacheBytes: 0, postingsCacheBytes: 0 });
const paths: { name: string; index: SqliteChunkIndex }[] = [
  { name: 'sign bits → exact stage in SQLite', index: fromSqlite },
  { name: 'int8 scan → exact stage from the copy', index: new SqliteChunkIndex(db, { ...built, vectorsCacheBytes: vectorsMb * 2 ** 20 }) },
  { name: 'int8 scan (int8 copy alone) → SQLite', index: new SqliteChunkIndex(db, { ...built, vectorsCacheBytes: int8OnlyMb * 2 ** 20 }) },
];
const exact = new SqliteChunkIndex(db, { vectorsCacheBytes: 0, postingsCacheBytes: 0, vectorOversample: Infinity });
const fromMemory = paths[1]!.index;
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

for (const { name, index } of paths.slice(1)) {
  const loadStart = performance.now();
  const [, loadCpu] = cpuMs(() => index.vectorSearchHits(queries[0]!.vector, filter, 1024));
  const vectors = (await index.cacheSizes()).find((c) => c.name === 'vectors')!;
  console.log(`${name}: first search (builds the copy) ${loadCpu.toFixed(0)} ms CPU, ${(performance.now() - loadStart).toFixed(0)} ms wall; copy ${(vectors.bytes! / 2 ** 20).toFixed(1)} MiB`);
}

const times = paths.map(() => [] as number[]);
const found = paths.map(() => 0);
const cosineTimes = { sqlite: [] as number[], memory: [] as number[] };
let worst = 0;
for (const [i, q] of queries.entries()) {
  const truth = exact.vectorSearchHits(q.vector, filter, 1024);
  const exactScores = new Map(truth.map((h) => [h[0], h[1]]));
  const top30 = new Set(truth.slice(0, 30).map((h) => h[0]));
  // Rotate which path runs first, so that none always finds another's pages in the CPU caches.
  for (let k = 0; k < paths.length; k++) {
    const p = (i + k) % paths.length;
    const [hits, ms] = cpuMs(() => paths[p]!.index.vectorSearchHits(q.vector, filter, 1024));
    times[p]!.push(ms);
    found[p]! += hits.slice(0, 30).filter((h) => top30.has(h[0])).length;
    for (const h of hits) {
      const score = exactScores.get(h[0]);
      if (score !== undefined) worst = Math.max(worst, Math.abs(score - h[1]));
    }
  }
  const ids = fromSqlite.fullTextHits(q.question, filter, 1024).map((h) => h[0]);
  const order = i % 2 === 0 ? [fromSqlite, fromMemory] : [fromMemory, fromSqlite];
  const cosines = new Map<SqliteChunkIndex, Map<string, number>>();
  for (const index of order) {
    const [result, ms] = cpuMs(() => index.cosineSimilaritiesNow(ids, q.vector));
    (index === fromMemory ? cosineTimes.memory : cosineTimes.sqlite).push(ms);
    cosines.set(index, result);
  }
  const [a, b] = [cosines.get(fromSqlite)!, cosines.get(fromMemory)!];
  if (a.size !== b.size) throw new Error(`question ${i}: different cosine ids`);
  for (const [id, c] of a) worst = Math.max(worst, Math.abs(c - b.get(id)!));
}

const row = (name: string, values: number[], extra = '') =>
  console.log(`  ${name.padEnd(44)} p50 ${percentile(values, 50).toFixed(2).padStart(6)} ms   p95 ${percentile(values, 95).toFixed(2).padStart(6)} ms${extra}`);
console.log(`\n${size.toLocaleString('en')} chunks, ${queryCount} questions, CPU ms per call (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
paths.forEach(({ name }, p) => row(`vector leg, ${name}`, times[p]!, `   recall@30 ${(found[p]! / (30 * queryCount)).toFixed(3)}`));
row('cosines of the full-text hits, SQLite', cosineTimes.sqlite);
row('cosines of the full-text hits, copy', cosineTimes.memory);
console.log(`  largest score difference from exact search (hits found by both) and between the cosines: ${worst.toExponential(2)}`);
for (const { name, index } of paths) console.log(`  caches, ${name}: ${JSON.stringify(await index.cacheSizes())}`);
db.close();
