/**
 * Retrieval latency benchmark (prints numbers; not a timed test).
 *
 *   npx tsx bench/retrieval/run.ts [--sizes 10000,100000] [--queries 200] [--threads 0]
 *
 * For each size: builds an index of synthetic chunks (384-dim random unit vectors, scientific text) in a
 * temporary database file configured like the service's, then runs hybrid retrieval with the spec's
 * defaults (top_k 1024, page_size 30) for fixed questions with fixed random query vectors, so the numbers
 * measure the index and the scoring, not an embedding model. Queries run one after another on one
 * connection, as one API process serves them. Besides wall-clock latency it prints the CPU time per
 * query, which is the latency to expect when the machine is not busy with other work. --threads N runs
 * the reads on N reader threads, as the service does (sqlite-threaded-index.ts): the difference is the
 * cost of the trips between threads.
 */
import { argument, percentile } from '../common.js';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openIndexDatabase } from '../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../src/index/sqlite-index.js';
import { SqliteReadPool } from '../../src/index/sqlite-read-pool.js';
import { ThreadedSqliteChunkIndex } from '../../src/index/sqlite-threaded-index.js';
import { retrieve } from '../../src/retrieval/retrieve.js';
import type { RetrievalTimings } from '../../src/retrieval/types.js';
import { prng, randomUnitVector, syntheticChunk, textSource } from './synthetic.js';

const DIMS = 384;
const BATCH = 1000;
const WARMUP = 10;

const ms = (x: number) => x.toFixed(1).padStart(7);

async function benchSize(size: number, queryCount: number, threads: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-'));
  const file = join(dir, 'cairn.db');
  const db = openIndexDatabase(file);
  const writer = new SqliteChunkIndex(db);
  const index = threads > 0 ? new ThreadedSqliteChunkIndex(writer, new SqliteReadPool(file, threads)) : writer;
  try {
    const random = prng(42);
    const source = textSource(random);

    const buildStart = performance.now();
    for (let start = 0; start < size; start += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, size - start) }, (_, k) => syntheticChunk(start + k, source, random, 'bench'));
      await index.upsert(batch);
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
    const buildSeconds = (performance.now() - buildStart) / 1000;
    const megabytes = statSync(file).size / 1e6;

    const queryRandom = prng(7);
    const queries = Array.from({ length: WARMUP + queryCount }, (_, i) => ({
      question: source.questions[(i * 37) % source.questions.length]!,
      vector: randomUnitVector(queryRandom, DIMS),
    }));
    const timings: RetrievalTimings[] = [];
    const cpu: number[] = [];
    let totalHits = 0;
    let wallStart = 0;
    for (const [i, q] of queries.entries()) {
      if (i === WARMUP) wallStart = performance.now();
      const cpuStart = process.cpuUsage();
      const result = await retrieve(
        { question: q.question, dataset_ids: ['bench'] },
        { index, embedQuery: async () => q.vector, pagerankOf: () => 0 },
      );
      const used = process.cpuUsage(cpuStart);
      if (i >= WARMUP) {
        timings.push(result.timings);
        cpu.push((used.user + used.system) / 1000);
        totalHits += result.total;
      }
    }
    const wallSeconds = (performance.now() - wallStart) / 1000;

    const stage = (name: keyof RetrievalTimings) => timings.map((t) => t[name]);
    console.log(`\n== ${size.toLocaleString('en')} chunks, ${threads > 0 ? `reads on ${threads} reader threads` : 'reads on the event loop'} (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}) ==`);
    console.log(`build: ${buildSeconds.toFixed(1)} s (${Math.round(size / buildSeconds)} chunks/s), database ${megabytes.toFixed(0)} MB`);
    console.log(`hybrid retrieval, ${queryCount} queries, top_k 1024, page_size 30 (avg ${Math.round(totalHits / queryCount)} chunks above threshold)`);
    console.log(`  total     p50 ${ms(percentile(stage('total'), 50))} ms   p95 ${ms(percentile(stage('total'), 95))} ms   QPS ${(queryCount / wallSeconds).toFixed(1)}`);
    console.log(`  cpu       p50 ${ms(percentile(cpu, 50))} ms   p95 ${ms(percentile(cpu, 95))} ms   (CPU time per query: the latency without other load)`);
    for (const name of ['fulltext', 'vector', 'fuse'] as const) {
      console.log(`  ${name.padEnd(9)} p50 ${ms(percentile(stage(name), 50))} ms   p95 ${ms(percentile(stage(name), 95))} ms`);
    }
  } finally {
    if (index instanceof ThreadedSqliteChunkIndex) await index.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const sizes = argument('sizes', '10000,100000').split(',').map(Number);
const queryCount = Number(argument('queries', '200'));
const threads = Number(argument('threads', '0'));
console.log(`retrieval benchmark: node ${process.version}, sizes ${sizes.join(', ')}, ${queryCount} queries each`);
for (const size of sizes) await benchSize(size, queryCount, threads);
