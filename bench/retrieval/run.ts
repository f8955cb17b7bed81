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
 *
 * Every run first measures the brute-force floor on this machine (floor.ts: exact cosine over all the
 * vectors, and the sign-bit scan) and prints each latency as a multiple of it. --recall N compares the
 * vector leg's top 30 (searched with top_k 1024) with exact search for N questions (recall@30). --http [--clients 8] runs the
 * questions through a real Cairn instead (http.ts): POST /api/v1/retrieval with the real query
 * embedding, with 1 and with `clients` concurrent clients.
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
import { describeFloor, measureFloor, vsFloor, type Floor } from './floor.js';
import { benchHttp, describeHttpRun } from './http.js';
import { prng, randomUnitVector, syntheticChunk, textSource } from './synthetic.js';

const DIMS = 384;
const BATCH = 1000;
const WARMUP = 10;

const ms = (x: number) => x.toFixed(1).padStart(7);

async function benchSize(size: number, queryCount: number, threads: number, floor: Floor, recallQueries: number): Promise<void> {
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
    const line = (values: number[]) => {
      const p50 = percentile(values, 50);
      const p95 = percentile(values, 95);
      return `p50 ${ms(p50)} ms ${vsFloor(p50, floor)}   p95 ${ms(p95)} ms ${vsFloor(p95, floor)}`;
    };
    console.log(`  ${describeFloor(size, floor)}`);
    console.log(`  total     ${line(stage('total'))}   QPS ${(queryCount / wallSeconds).toFixed(1)}`);
    console.log(`  cpu       ${line(cpu)}   (CPU time per query: the latency without other load)`);
    for (const name of ['fulltext', 'vector', 'fuse'] as const) console.log(`  ${name.padEnd(9)} ${line(stage(name))}`);
    if (recallQueries > 0) {
      const exact = new SqliteChunkIndex(db, { vectorOversample: Infinity });
      const filter = { datasetIds: ['bench'], availableOnly: true };
      let found = 0;
      for (const q of queries.slice(0, recallQueries)) {
        const truth = new Set((await exact.vectorSearch(q.vector, filter, 30)).map((h) => h.id));
        // As retrieval calls it: top_k candidates, of which the best 30 fill the first page.
        found += (await index.vectorSearch(q.vector, filter, 1024)).slice(0, 30).filter((h) => truth.has(h.id)).length;
      }
      console.log(`  vector leg recall@30 (top_k 1024) against exact search: ${(found / (30 * recallQueries)).toFixed(3)} (${recallQueries} questions)`);
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
const recallQueries = Number(argument('recall', '0'));
const http = process.argv.includes('--http');
const clients = Number(argument('clients', '8'));
console.log(`retrieval benchmark: node ${process.version}, sizes ${sizes.join(', ')}, ${queryCount} queries each${http ? `, over HTTP with 1 and ${clients} clients` : ''}`);
for (const size of sizes) {
  const floor = measureFloor(size, DIMS);
  if (!http) {
    await benchSize(size, queryCount, threads, floor, recallQueries);
    continue;
  }
  const random = prng(42);
  const source = textSource(random);
  const questions = Array.from({ length: source.questions.length }, (_, i) => source.questions[(i * 37) % source.questions.length]!);
  const runs = await benchHttp(size, source, random, questions, queryCount, clients);
  console.log(`\n== ${size.toLocaleString('en')} chunks over HTTP: POST /api/v1/retrieval, top_k 1024, page_size 30, built-in embedding model (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}) ==`);
  console.log(`  ${describeFloor(size, floor)}`);
  for (const run of runs) console.log(describeHttpRun(run, (ms) => vsFloor(ms, floor)));
}
