/**
 * Retrieval latency benchmark (prints numbers; not a timed test).
 *
 *   npx tsx bench/retrieval/run.ts [--profile embedded|scale-out] [--sizes 10000,100000] [--queries 200]
 *                                  [--seconds 120] [--threads 0] [--recall N] [--http [--clients 8]] [--summary FILE]
 *                                  [--db FILE]
 *
 * For each size: builds an index of synthetic chunks (384-dim random unit vectors, scientific text) on the
 * profile (bench/profile.ts: `embedded` = the SQLite index in a temporary database file configured like
 * the service's; `scale-out` = the Milvus index on a milvus-lite server started for the run), then runs
 * hybrid retrieval with the spec's defaults (top_k 1024, page_size 30) for fixed questions with fixed
 * random query vectors, so the numbers measure the index and the scoring, not an embedding model. Queries
 * run one after another, as one API process serves them, until `--queries` are done or `--seconds` have
 * passed (whichever comes first, so a slow index cannot make the run unbounded). Besides wall-clock latency
 * it prints the CPU time per query of this process and, on scale-out, of the index server: with the
 * machine otherwise idle, their sum is what a query costs.
 * --threads N (embedded) runs the reads on N reader threads, as the service does (sqlite-threaded-index.ts):
 * the difference is the cost of the trips between threads.
 * --db FILE (embedded, one size) keeps the database at FILE: built there when missing (the same corpus), searched
 * as it is when present, and kept after the run, so that repeated measurements skip the build. Its index has
 * the service's cache bounds (CAIRN_CACHE_FULLTEXT_MB, CAIRN_CACHE_VECTORS_MB… from the environment, else
 * their defaults): at 1M chunks the full-text copies need CAIRN_CACHE_FULLTEXT_MB=1200 or so.
 *
 * Every run first measures the brute-force floor on this machine (floor.ts: exact cosine over all the
 * vectors, and the sign-bit scan) and prints each latency as a multiple of it. --recall N compares the
 * vector leg's top 30 (searched with top_k 1024) with an exact scan for N questions (recall@30). --http
 * [--clients 8] runs the questions through a real Cairn on the profile instead (http.ts; scale-out adds
 * PostgreSQL metadata and S3 files): POST /api/v1/retrieval with the real query embedding, with 1 and with
 * `clients` concurrent clients. --summary FILE writes the key figures as JSON (bench/profiles.ts puts
 * the profiles side by side).
 */
import { argument, percentile } from '../common.js';
import { existsSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { openIndexDatabase } from '../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../src/index/chunks/sqlite-index.js';
import { loadConfig } from '../../src/config.js';
import { indexCaches } from '../../src/wiring.js';
import { SqliteReadPool } from '../../src/index/chunks/sqlite-read-pool.js';
import { ThreadedSqliteChunkIndex } from '../../src/index/chunks/sqlite-threaded-index.js';
import { componentCpuSeconds } from '../processes.js';
import { openBenchIndex, profileArgument, type BenchIndex, type BenchProfile } from '../profile.js';
import { BenchSummary } from '../summary.js';
import { retrieve } from '../../src/retrieval/retrieve.js';
import type { RetrievalTimings } from '../../src/retrieval/types.js';
import { describeFloor, measureFloor, vsFloor, type Floor } from './floor.js';
import { benchHttp, describeHttpRun } from './http.js';
import { prng, randomUnitVector, syntheticChunk, textSource } from './synthetic.js';

const DIMS = 384;
const BATCH = 1000;
const WARMUP = 10;
/**
 * Warm-up lasts at least this long, more than the embedded index's quiet period (1 s) after which it builds
 * its in-memory full-text and vector copies, so that the timed questions measure the steady state; the
 * warm-up time (with those builds) is printed.
 */
const WARMUP_SECONDS = 2;
/** …and, on the embedded index, until its vector copy is built (at 100k the builds take seconds), at most this long. */
const WARMUP_MAX_SECONDS = 60;

const ms = (x: number) => x.toFixed(1).padStart(7);

/** The exact top `k` ids by cosine (the vectors are unit length, so by dot product). */
function exactTop(vectors: Float32Array, ids: string[], query: number[], k: number): Set<string> {
  const scores = new Float64Array(ids.length);
  for (let i = 0, o = 0; i < ids.length; i++, o += DIMS) {
    let dot = 0;
    for (let j = 0; j < DIMS; j++) dot += vectors[o + j]! * query[j]!;
    scores[i] = dot;
  }
  const order = Array.from(ids.keys()).sort((a, b) => scores[b]! - scores[a]!);
  return new Set(order.slice(0, k).map((i) => ids[i]!));
}

/** The embedded index on a database file that outlives the run (--db); `built` says whether it holds the corpus already. */
function keptBenchIndex(file: string, threads: number): { bench: BenchIndex; built: boolean } {
  const built = existsSync(file);
  const db = openIndexDatabase(file);
  // The service's cache bounds (CAIRN_CACHE_* in the environment, else their defaults), on the threads that search.
  const caches = indexCaches(loadConfig());
  const writer = new SqliteChunkIndex(db, threads > 0 ? {} : caches);
  const index = threads > 0 ? new ThreadedSqliteChunkIndex(writer, new SqliteReadPool(file, threads, caches)) : writer;
  const bench: BenchIndex = {
    index,
    async loaded() {
      db.pragma('wal_checkpoint(TRUNCATE)');
    },
    diskBytes: () => statSync(file).size,
    servers: () => [],
    async close() {
      await index.close();
      db.close();
    },
  };
  return { bench, built };
}

interface SizeRun {
  profile: BenchProfile;
  /** --db: the database file to reuse (embedded). */
  db?: string;
  size: number;
  queryCount: number;
  seconds: number;
  threads: number;
  floor: Floor;
  recallQueries: number;
}

async function benchSize(run: SizeRun, summary: BenchSummary): Promise<void> {
  const { profile, size, threads, floor, recallQueries } = run;
  const kept = run.db ? keptBenchIndex(run.db, threads) : undefined;
  const bench = kept?.bench ?? await openBenchIndex(profile, { threads });
  const { index } = bench;
  try {
    const random = prng(42);
    const source = textSource(random);
    const vectors = recallQueries > 0 ? new Float32Array(size * DIMS) : undefined;
    const ids: string[] = [];

    const buildStart = performance.now();
    // A kept database that holds the corpus needs the chunks only for --recall's exact scan.
    const generate = !kept?.built || vectors !== undefined;
    for (let start = 0; generate && start < size; start += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, size - start) }, (_, k) => syntheticChunk(start + k, source, random, 'bench'));
      for (const c of batch) {
        if (!vectors) break;
        vectors.set(c.vector, ids.length * DIMS);
        ids.push(c.id);
      }
      if (!kept?.built) await index.upsert(batch);
    }
    const loadedStart = performance.now();
    await bench.loaded(['bench']);
    const loadedSeconds = (performance.now() - loadedStart) / 1000;
    const buildSeconds = (performance.now() - buildStart) / 1000;
    const megabytes = bench.diskBytes() / 1e6;

    const queryRandom = prng(7);
    const queries = Array.from({ length: WARMUP + run.queryCount }, (_, i) => ({
      question: source.questions[(i * 37) % source.questions.length]!,
      vector: randomUnitVector(queryRandom, DIMS),
    }));
    const warmStart = performance.now();
    const warming = async () => {
      const elapsed = performance.now() - warmStart;
      if (elapsed < WARMUP_SECONDS * 1000) return true;
      if (profile !== 'embedded' || elapsed > WARMUP_MAX_SECONDS * 1000) return false;
      return !((await index.cacheSizes?.()) ?? []).some((c) => c.name === 'vectors' && c.bytes);
    };
    for (let i = 0; i < WARMUP || (await warming()); i++) {
      const q = queries[i % WARMUP]!;
      await retrieve({ question: q.question, dataset_ids: ['bench'] }, { index, embedQuery: async () => q.vector, pagerankOf: () => 0 });
      // As a server's event loop does between requests: lets the index run the builds it scheduled after a
      // search (the in-memory vector copy), which an index on the event loop never runs inside a search.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const warmSeconds = (performance.now() - warmStart) / 1000;
    const servers = bench.servers();
    const timings: RetrievalTimings[] = [];
    const cpu: number[] = [];
    let totalHits = 0;
    let wallStart = 0;
    let serverCpuStart: number[] = [];
    for (const [i, q] of queries.entries()) {
      if (i === WARMUP) {
        wallStart = performance.now();
        serverCpuStart = componentCpuSeconds(servers);
      } else if (i > WARMUP && performance.now() - wallStart > run.seconds * 1000) {
        break;
      }
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
    const measured = timings.length;
    const serverCpu = componentCpuSeconds(servers).map((s, k) => (1000 * (s - serverCpuStart[k]!)) / measured);

    const stage = (name: keyof RetrievalTimings) => timings.map((t) => t[name]);
    const where = profile === 'embedded'
      ? (threads > 0 ? `reads on ${threads} reader threads` : 'reads on the event loop')
      : 'Milvus index on milvus-lite';
    console.log(`\n== ${profile}: ${size.toLocaleString('en')} chunks, ${where} (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}) ==`);
    const disk = Number.isNaN(megabytes) ? '' : `, ${profile === 'embedded' ? 'database' : 'milvus-lite data'} ${megabytes.toFixed(0)} MB`;
    const ready = profile === 'embedded' ? 'WAL checkpoint' : 'flush and first full-text search (milvus-lite builds BM25 scorers)';
    console.log(`build: ${buildSeconds.toFixed(1)} s (${Math.round(size / buildSeconds)} chunks/s), of which ${loadedSeconds.toFixed(1)} s ${ready}${disk}`);
    const cut = measured < run.queryCount ? ` (the ${run.seconds} s budget ended the run after ${measured} of ${run.queryCount})` : '';
    console.log(`hybrid retrieval, ${measured} queries${cut}, top_k 1024, page_size 30 (avg ${Math.round(totalHits / measured)} chunks above threshold)`);
    const caches = (await index.cacheSizes?.()) ?? [];
    const cacheList = caches.filter((c) => c.bytes).map((c) => `${c.name} ${(c.bytes! / 2 ** 20).toFixed(1)} MiB`).join(', ');
    console.log(`warm-up ${warmSeconds.toFixed(1)} s; in-memory caches ${cacheList || 'none'}; RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
    const line = (values: number[]) => {
      const p50 = percentile(values, 50);
      const p95 = percentile(values, 95);
      return `p50 ${ms(p50)} ms ${vsFloor(p50, floor)}   p95 ${ms(p95)} ms ${vsFloor(p95, floor)}`;
    };
    const qps = measured / wallSeconds;
    console.log(`  ${describeFloor(size, floor)}`);
    console.log(`  total     ${line(stage('total'))}   QPS ${qps.toFixed(1)}`);
    console.log(`  cpu       ${line(cpu)}   (CPU time of this process per query: the latency without other load${servers.length ? ', plus the server\'s' : ''})`);
    servers.forEach((s, k) => console.log(`  ${s.name} CPU ${serverCpu[k]!.toFixed(1)} ms per query (mean)`));
    for (const name of ['fulltext', 'vector', 'fuse'] as const) console.log(`  ${name.padEnd(9)} ${line(stage(name))}`);

    const at = `${size.toLocaleString('en')} chunks`;
    const p = (values: number[]) => `${percentile(values, 50).toFixed(1)} / ${percentile(values, 95).toFixed(1)} ms`;
    summary.add(`${at}: build until searchable`, `${buildSeconds.toFixed(1)} s (${Math.round(size / buildSeconds)} chunks/s), ${loadedSeconds.toFixed(1)} s of it ${profile === 'embedded' ? 'checkpoint' : 'flush + BM25 scorers'}`);
    summary.add(`${at}: on disk`, Number.isNaN(megabytes) ? '-' : `${megabytes.toFixed(0)} MB`);
    summary.add(`${at}: queries measured`, String(measured));
    summary.add(`${at}: hybrid retrieval p50 / p95`, p(stage('total')));
    summary.add(`${at}: QPS (one client)`, qps.toFixed(1));
    summary.add(`${at}: full-text leg p50 / p95`, p(stage('fulltext')));
    summary.add(`${at}: vector leg p50 / p95`, p(stage('vector')));
    summary.add(`${at}: fuse (cosines, records, scoring) p50 / p95`, p(stage('fuse')));
    summary.add(`${at}: CPU per query, bench process (p50)`, `${percentile(cpu, 50).toFixed(1)} ms`);
    summary.add(`${at}: CPU per query, index server (mean)`, servers.length ? servers.map((s, k) => `${serverCpu[k]!.toFixed(1)} ms (${s.name})`).join(', ') : '- (in process)');

    if (vectors && recallQueries > 0) {
      const filter = { datasetIds: ['bench'], availableOnly: true };
      let found = 0;
      for (const q of queries.slice(0, recallQueries)) {
        const truth = exactTop(vectors, ids, q.vector, 30);
        // As retrieval calls it: top_k candidates, of which the best 30 fill the first page.
        const hits = (await index.vectorSearch(q.vector, filter, 1024)).sort((a, b) => b.score - a.score);
        found += hits.slice(0, 30).filter((h) => truth.has(h.id)).length;
      }
      const recall = found / (30 * recallQueries);
      console.log(`  vector leg recall@30 (top_k 1024) against an exact scan: ${recall.toFixed(3)} (${recallQueries} questions)`);
      summary.add(`${at}: vector leg recall@30`, recall.toFixed(3));
    }
  } finally {
    await bench.close();
  }
}

const profile = profileArgument();
const sizes = argument('sizes', '10000,100000').split(',').map(Number);
const queryCount = Number(argument('queries', '200'));
const seconds = Number(argument('seconds', '120'));
const threads = Number(argument('threads', '0'));
const recallQueries = Number(argument('recall', '0'));
const http = process.argv.includes('--http');
const clients = Number(argument('clients', '8'));
const db = argument('db', '') || undefined;
if (db && (profile !== 'embedded' || http || sizes.length !== 1)) throw new Error('--db applies to the embedded profile in process, with one size');
const summary = new BenchSummary();
console.log(
  `retrieval benchmark, profile ${profile}: node ${process.version}, sizes ${sizes.join(', ')}, up to ${queryCount} queries or ${seconds} s each` +
    `${http ? `, over HTTP with 1 and ${clients} clients` : ''}`,
);
for (const size of sizes) {
  const floor = measureFloor(size, DIMS);
  if (!http) {
    await benchSize({ profile, db, size, queryCount, seconds, threads, floor, recallQueries }, summary);
    continue;
  }
  const random = prng(42);
  const source = textSource(random);
  const questions = Array.from({ length: source.questions.length }, (_, i) => source.questions[(i * 37) % source.questions.length]!);
  const result = await benchHttp({ profile, size, source, random, questions, queryCount, seconds, clients });
  console.log(`\n== ${profile}: ${size.toLocaleString('en')} chunks over HTTP: POST /api/v1/retrieval, top_k 1024, page_size 30, built-in embedding model (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}) ==`);
  console.log(`  ${result.description}`);
  console.log(`  chunks written into the index in ${result.loadSeconds.toFixed(1)} s`);
  console.log(`  ${describeFloor(size, floor)}`);
  for (const r of result.runs) console.log(describeHttpRun(r, (ms) => vsFloor(ms, floor)));
  const at = `${size.toLocaleString('en')} chunks over HTTP`;
  for (const r of result.runs) {
    const who = `${r.clients} client${r.clients === 1 ? '' : 's'}`;
    summary.add(`${at}, ${who}: p50 / p95`, `${percentile(r.latencies, 50).toFixed(1)} / ${percentile(r.latencies, 95).toFixed(1)} ms`);
    summary.add(`${at}, ${who}: QPS`, `${(r.latencies.length / r.seconds).toFixed(1)} (${r.latencies.length} queries)`);
    summary.add(`${at}, ${who}: CPU per query`, r.cpu.map((c) => `${c.name} ${c.msPerQuery.toFixed(0)}`).join(', ') + ' ms');
  }
}
summary.write();
