/**
 * What a read costs on the index's reader threads against the same read on the caller's thread
 * (prints numbers; not a timed test).
 *
 *   npx tsx bench/retrieval/trips.ts --db FILE [--threads 2] [--queries 100] [--rounds 2]
 *
 * FILE is a database run.ts built (`run.ts --sizes 100000 --db FILE`). Each read of a retrieval is timed on
 * its own, one after another: on a ThreadedSqliteChunkIndex with `--threads` reader threads (the service's
 * way: a trip to a thread and back) and on a SqliteChunkIndex on this thread (the bench's `--threads 0`),
 * both with the same in-memory copies; then the two legs at once on the threads, as a retrieval runs them.
 * Wall-clock p50/p95 and this process's CPU per read (all threads): the difference between the two ways is
 * the cost of the trips and of the threads sharing the cores.
 */
import { argument, percentile } from '../common.js';
import { openIndexDatabase, openIndexReader } from '../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../src/index/chunks/sqlite-index.js';
import { SqliteReadPool } from '../../src/index/chunks/sqlite-read-pool.js';
import { ThreadedSqliteChunkIndex } from '../../src/index/chunks/sqlite-threaded-index.js';
import type { ChunkIndex } from '../../src/index/chunks/chunk-index.js';
import { prng, randomUnitVector, textSource } from './synthetic.js';

const file = argument('db', '');
if (!file) throw new Error('--db FILE: a database built by run.ts --db');
const threads = Number(argument('threads', '2'));
const queries = Number(argument('queries', '100'));
const rounds = Number(argument('rounds', '2'));
/** Warm-up: longer than the quiet period after which the copies are built, and the builds themselves. */
const WARMUP_MS = 20_000;

const db = openIndexDatabase(file);
const threaded = new ThreadedSqliteChunkIndex(new SqliteChunkIndex(db), new SqliteReadPool(file, threads));
const local = new SqliteChunkIndex(openIndexReader(file), { readOnly: true });
const random = prng(7);
const source = textSource(random);
const filter = { datasetIds: ['bench'], availableOnly: true };
const questions = Array.from({ length: queries }, (_, i) => ({
  text: source.questions[(i * 37) % source.questions.length]!,
  vector: randomUnitVector(random, 384),
}));

async function time(label: string, read: (i: number) => Promise<unknown>): Promise<void> {
  const walls: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < queries; i++) {
    const start = performance.now();
    await read(i);
    walls.push(performance.now() - start);
  }
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000 / queries;
  console.log(`  ${label.padEnd(40)} p50 ${percentile(walls, 50).toFixed(2).padStart(6)}   p95 ${percentile(walls, 95).toFixed(2).padStart(6)}   CPU ${cpuMs.toFixed(2).padStart(6)} ms`);
}

const warmUntil = Date.now() + WARMUP_MS;
while (Date.now() < warmUntil) {
  const { text, vector } = questions[0]!;
  for (const index of [threaded, local] as ChunkIndex[]) {
    await index.fullText(text, filter, 1024);
    await index.vectorSearch(vector, filter, 1024);
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
}

const textHits = await local.fullText(questions[1]!.text, filter, 1024);
const page = textHits.slice(0, 30).map((h) => h.id);
for (let round = 1; round <= rounds; round++) {
  console.log(`round ${round}, ${queries} reads each, top_k 1024 (load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')})`);
  for (const [where, index] of [[`${threads} reader threads`, threaded], ['this thread', local]] as [string, ChunkIndex][]) {
    await time(`${where}: full text`, (i) => index.fullText(questions[i]!.text, filter, 1024));
    await time(`${where}: vector leg`, (i) => index.vectorSearch(questions[i]!.vector, filter, 1024));
    await time(`${where}: cosines of 1,024 hits by id`, (i) => index.cosineSimilarities(textHits.map((h) => h.id), questions[i]!.vector));
    await time(`${where}: a page of 30 chunks, no vectors`, () => index.getMany(page, { vectors: false }));
    await time(`${where}: a page of 30 chunks, with vectors`, () => index.getMany(page));
  }
  await time(`${threads} reader threads: both legs at once`, (i) => Promise.all([
    threaded.fullText(questions[i]!.text, filter, 1024),
    threaded.vectorSearch(questions[i]!.vector, filter, 1024),
  ]));
  await time(`${threads} reader threads: an empty read`, () => threaded.countByDocument('none'));
}
await threaded.close();
db.close();
