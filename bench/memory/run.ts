/**
 * Memory benchmark (prints numbers; not a timed test).
 *
 *   npx tsx bench/memory/run.ts [--raw 300] [--extract 100] [--clients 8] [--sizes 10000,100000] [--queries 200] [--seconds 20]
 *                               [--profile embedded|scale-out]
 *
 * 1. Adding messages (POST /api/v1/messages) on its own Temporal dev server and Cairn, in this process on
 *    a temporary data directory with the embedded worker (the default deployment). The models are an
 *    instant OpenAI-compatible fake in its own process (bench/memory/fake-model.ts): 384-dimensional
 *    embeddings and an extraction answer of one semantic and one episodic item, so the numbers are
 *    Cairn's own cost. `clients` concurrent clients add `raw` turns to a raw-only memory, then `extract`
 *    turns to a memory of all four types. Each turn is stored and embedded during the request and handed
 *    to its memory's memoryExtractionBatches workflow (turns waiting while a model call is in flight go
 *    together into the next, up to CAIRN_MEMORY_EXTRACTION_BATCH); the clock stops when the last turn's
 *    task has ended (read from the tasks' update times), so "completed/s" includes the extraction (model
 *    calls, embedding and storing the items, facts reconciled) and, for the raw-only memory, marking the
 *    tasks done. "accepted/s" is the rate of the HTTP requests alone, with their latency. Every figure
 *    is printed with the load average, as the machine may be shared.
 * 2. search_message latency at `sizes` messages. Adding 100,000 turns through the HTTP API would take
 *    too long, so, as bench/retrieval seeds chunks, the messages are written straight into the memory
 *    index through its port (bench/memory/profile-index.ts: SqliteMemoryIndex in a temporary database file
 *    configured like the service's, or with `--profile scale-out` MilvusMemoryIndex on PostgreSQL and
 *    milvus-lite started for the run): synthetic turns from real scientific sentences (SciFact, or Zipf words without it),
 *    384-dimensional random unit vectors, in memories of 1,000 messages each (~3.5 MB, within the 10 MiB
 *    memory_size cap). Queries run searchMessages (src/memories/search.ts: full text, vector, term
 *    statistics, scoring; the route adds access checks and the query embedding) with the spec's defaults
 *    (similarity_threshold 0.2, keywords_similarity_weight 0.7, top_n 10) and fixed random query vectors,
 *    once over every memory (all messages searched) and once over one memory of the index; each of those
 *    runs `queries` queries, or fewer when `seconds` have passed (at least 20), so the whole benchmark
 *    stays within about four minutes on two cores (scale-out: seeding takes longer). `--raw 0 --extract 0`
 *    runs only the search part. On scale-out the search also runs in the servers, whose CPU is printed
 *    per query on average. Each
 *    run also prints the rows the index examined per query (MemoryIndex.scans): within one memory it must
 *    stay below what that memory holds, whatever the index's size (the memory scope, docs/memories.md).
 */
import { argument, percentile, apiCall as call, LOOPBACK_MODELS_ENV } from '../common.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { startCairn, type Cairn } from '../../src/server.js';
import { startDevServer, type DevServer } from '../../src/engine/dev-server.js';
import type { NewMemoryMessage } from '../../src/index/memories/memory-index.js';
import { searchMessages } from '../../src/memories/search.js';
import { MAX_MEMORY_SIZE } from '../../src/memories/types.js';
import { profileArgument, type BenchProfile } from '../profile.js';
import { componentCpuSeconds } from '../processes.js';
import { openBenchMemoryIndex } from './profile-index.js';
import { prng, randomUnitVector, textSource, type TextSource } from '../retrieval/synthetic.js';

const DIMS = 384;
/** Messages per memory: the target is one memory of 1k messages inside indexes of 10k and 100k. */
const PER_MEMORY = 1000;
const BATCH = 1000;
const WARMUP = 10;
const DRAIN_TIMEOUT_S = 120;
const MIN_QUERIES = 20;

const ms = (x: number) => x.toFixed(1).padStart(7);
const rate = (n: number, seconds: number) => (n / seconds).toFixed(1).padStart(7);

// ------------------------------------------------------------------------------------------ part 1

async function startModel(): Promise<{ baseUrl: string; stop(): void }> {
  const script = new URL('./fake-model.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--import', 'tsx', script, String(DIMS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { baseUrl: line.toString().trim(), stop: () => child.kill() };
}

async function startOwnCairn(): Promise<{ url: string; dataDir: string; stop(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-memory-'));
  const base = loadConfig({ ...process.env, ...LOOPBACK_MODELS_ENV, CAIRN_DATA_DIR: dataDir });
  const temporal: DevServer = await startDevServer({ rootDir: base.rootDir, dbFile: path.join(dataDir, 'temporal.db'), port: 0 });
  const cairn: Cairn = await startCairn({ ...base, port: 0, temporalAddress: temporal.address, embeddedWorker: true }, { log: pino({ level: 'warn' }) });
  return {
    url: cairn.url,
    dataDir,
    async stop() {
      await cairn.stop();
      await temporal.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const CHAT_MODEL = 'bench-chat@bench@OpenAI-API-Compatible';
const EMBEDDING_MODEL = 'bench-embed@bench@OpenAI-API-Compatible';

/** A new user with an API key and the fake's chat and embedding models. */
async function setUp(api: string, modelBaseUrl: string): Promise<string> {
  const email = `bench-${process.pid}-${Date.now()}@example.com`;
  const { res } = await call(`${api}/users`, 'POST', { email, nickname: 'bench', password: 'bench-pass' });
  const token = await call(`${api}/system/tokens`, 'POST', {}, res.headers.get('authorization')!);
  const key = `Bearer ${token.json.data.token}`;
  await call(`${api}/providers/OpenAI-API-Compatible/instances`, 'POST', {
    instance_name: 'bench',
    base_url: modelBaseUrl,
    model_info: [{ model_name: 'bench-chat', model_type: 'chat' }, { model_name: 'bench-embed', model_type: 'embedding' }],
  }, key);
  return key;
}

/** CPU seconds used so far by this process (Cairn: API and worker) and by its children (Temporal dev server, fake model), by command. */
function cpuSeconds(): Map<string, number> {
  const own = process.cpuUsage();
  const out = new Map<string, number>([['cairn', (own.user + own.system) / 1e6]]);
  let pids: string[] = [];
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return out; // not Linux: only this process
  }
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== process.pid) continue;
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const name = comm.includes('temporal') ? 'temporal' : 'model';
      out.set(name, (out.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

interface TaskState {
  done: number;
  failed: number;
  total: number;
  lastUpdate: number;
}

function taskState(db: Database.Database, memoryId: string): TaskState {
  return db.prepare(`SELECT coalesce(sum(progress >= 1), 0) AS done, coalesce(sum(progress < 0), 0) AS failed, count(*) AS total,
    coalesce(max(update_time), 0) AS lastUpdate FROM memory_tasks WHERE memory_id = ?`).get(memoryId) as TaskState;
}

/**
 * `clients` concurrent clients add `count` turns to a new memory of `types`; then waits for every
 * extraction workflow to finish and prints the rates.
 */
async function addPhase(api: string, key: string, db: Database.Database, label: string, types: string[], count: number, clients: number) {
  const memory = await call(`${api}/memories`, 'POST', { name: `bench ${label}`, memory_type: types, embd_id: EMBEDDING_MODEL, llm_id: CHAT_MODEL }, key);
  const memoryId = memory.json.data.id as string;
  await call(`${api}/memories/${memoryId}`, 'PUT', { memory_size: MAX_MEMORY_SIZE }, key);
  const source = textSource(prng(3));
  const latencies: number[] = [];
  let next = 0;
  const cpuBefore = cpuSeconds();
  const startEpoch = Date.now();
  const start = performance.now();
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    while (next < count) {
      const i = next++;
      const t0 = performance.now();
      await call(`${api}/messages`, 'POST', {
        memory_id: [memoryId],
        agent_id: `agent-${c}`,
        session_id: `session-${i % 50}`,
        user_input: source.questions[i % source.questions.length]!,
        agent_response: source.sentences[i % source.sentences.length]!,
      }, key);
      latencies.push(performance.now() - t0);
    }
  }));
  const acceptedSeconds = (performance.now() - start) / 1000;
  let state = taskState(db, memoryId);
  const deadline = performance.now() + DRAIN_TIMEOUT_S * 1000;
  while (state.done + state.failed < count && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    state = taskState(db, memoryId);
  }
  const cpuAfter = cpuSeconds();
  const finished = state.done + state.failed;
  const completedSeconds = (state.lastUpdate - startEpoch) / 1000;
  const stored = db.prepare('SELECT count(*) FROM memory_rows WHERE memory_id = ?').pluck().get(memoryId) as number;
  console.log(`\n== ${label}: memory_type ${types.join(', ')}; ${count} turns, ${clients} concurrent clients (load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}) ==`);
  console.log(`  accepted  ${rate(count, acceptedSeconds)} messages/s   POST /messages p50 ${ms(percentile(latencies, 50))} ms   p95 ${ms(percentile(latencies, 95))} ms`);
  if (finished < count) {
    console.log(`  completed: only ${finished} of ${count} turns' tasks ended within ${DRAIN_TIMEOUT_S} s of the last request`);
  } else {
    console.log(`  completed ${rate(count, completedSeconds)} messages/s   (until the last turn's task ended: ${completedSeconds.toFixed(1)} s; ${state.failed} failed)`);
  }
  console.log(`  stored    ${stored} messages (${count} raw + ${stored - count} extracted items)`);
  const perTurn = [...cpuAfter].map(([name, seconds]) => `${name} ${(((seconds - (cpuBefore.get(name) ?? 0)) * 1000) / count).toFixed(1)} ms`);
  console.log(`  CPU per turn: ${perTurn.join(', ')} (cairn = API + embedded worker + this client)`);
  // The machine's own limit: every process's CPU per turn against the cores (all of them for this benchmark).
  const cpuPerTurn = [...cpuAfter].reduce((sum, [name, seconds]) => sum + seconds - (cpuBefore.get(name) ?? 0), 0) / count;
  console.log(`  ceiling   ${rate(os.availableParallelism(), cpuPerTurn)} messages/s   (${os.availableParallelism()} cores / ${(cpuPerTurn * 1000).toFixed(1)} ms CPU per turn)`);
}

async function addBench(rawCount: number, extractCount: number, clients: number) {
  const model = await startModel();
  const own = await startOwnCairn();
  const db = new Database(path.join(own.dataDir, 'cairn.db'), { readonly: true, fileMustExist: true });
  try {
    const api = `${own.url}/api/v1`;
    const key = await setUp(api, model.baseUrl);
    // Warm up: the first request loads the model clients and the first workflow loads the workflow bundle.
    await addPhase(api, key, db, 'warm-up', ['raw', 'semantic'], 5, 1);
    console.log('(the warm-up above loads models and workflow code; the numbers are the two phases below)');
    await addPhase(api, key, db, 'raw only', ['raw'], rawCount, clients);
    await addPhase(api, key, db, 'with extraction', ['raw', 'semantic', 'episodic', 'procedural'], extractCount, clients);
  } finally {
    db.close();
    await own.stop();
    model.stop();
  }
}

// ------------------------------------------------------------------------------------------ part 2

function syntheticTurn(i: number, source: TextSource, random: () => number): NewMemoryMessage {
  const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!;
  return {
    message_type: 'raw',
    source_id: 0,
    user_id: `user-${i % 20}`,
    agent_id: `agent-${i % 10}`,
    session_id: `session-${i % 500}`,
    content: `User Input: ${pick(source.questions)}\nAgent Response: ${pick(source.sentences)} ${pick(source.sentences)}`,
    vector: randomUnitVector(random, DIMS),
    valid_at: 1735689600000 + i * 1000,
  };
}

async function searchBench(profile: BenchProfile, sizes: number[], queryCount: number, budgetSeconds: number) {
  const bench = await openBenchMemoryIndex(profile, DIMS);
  console.log(`profile ${bench.description}`);
  try {
    const { index } = bench;
    const random = prng(42);
    const source = textSource(random);
    const memoryIds: string[] = [];
    let seeded = 0;
    let seedSeconds = 0;
    for (const size of [...sizes].sort((a, b) => a - b)) {
      const seedStart = performance.now();
      while (seeded < size) {
        const memory = Math.floor(seeded / PER_MEMORY);
        if (memory === memoryIds.length) memoryIds.push(`benchmemory${String(memory).padStart(4, '0')}`);
        const n = Math.min(BATCH, size - seeded, PER_MEMORY - (seeded % PER_MEMORY));
        const batch = Array.from({ length: n }, (_, k) => syntheticTurn(seeded + k, source, random));
        const added = await index.add(memoryIds[memory]!, batch, { limit: MAX_MEMORY_SIZE, tenantId: 'bench' });
        if (added.evicted.length) throw new Error('a seeded memory overflowed its memory_size');
        seeded += n;
      }
      await bench.loaded(memoryIds);
      seedSeconds += (performance.now() - seedStart) / 1000;
      const megabytes = bench.diskBytes() / 1e6;
      console.log(`\n== search_message at ${size.toLocaleString('en')} messages, ${profile} (load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}) ==`);
      console.log(`seeded through the MemoryIndex port (not the HTTP API): ${memoryIds.length} memories of ${PER_MEMORY} messages, ${Math.round(seeded / seedSeconds)} messages/s, index on disk ${megabytes.toFixed(0)} MB`);

      for (const [label, ids] of [
        [`every memory (${size.toLocaleString('en')} messages searched)`, memoryIds],
        [`one memory (${PER_MEMORY.toLocaleString('en')} of the ${size.toLocaleString('en')} messages)`, [memoryIds[0]!]],
      ] as const) {
        const queryRandom = prng(7);
        const queries = Array.from({ length: WARMUP + queryCount }, (_, i) => ({
          query: source.questions[(i * 37) % source.questions.length]!,
          vector: randomUnitVector(queryRandom, DIMS),
        }));
        const wall: number[] = [];
        const cpu: number[] = [];
        let hits = 0;
        let examinedFrom = index.scans.examined;
        let wallStart = 0;
        let ran = 0;
        let serversFrom: number[] = [];
        for (const [i, q] of queries.entries()) {
          if (i === WARMUP) {
            wallStart = performance.now();
            examinedFrom = index.scans.examined;
            serversFrom = componentCpuSeconds(bench.servers());
          }
          // Bounded in time: at least MIN_QUERIES, then stop once the budget is spent.
          if (i >= WARMUP + MIN_QUERIES && performance.now() - wallStart > budgetSeconds * 1000) break;
          const cpuStart = process.cpuUsage();
          const t0 = performance.now();
          const found = await searchMessages({ query: q.query, filter: { memoryIds: [...ids] } }, { index, embedQuery: async () => q.vector });
          const elapsed = performance.now() - t0;
          const used = process.cpuUsage(cpuStart);
          if (i >= WARMUP) {
            wall.push(elapsed);
            cpu.push((used.user + used.system) / 1000);
            hits += found.length;
            ran++;
          }
        }
        const wallSeconds = (performance.now() - wallStart) / 1000;
        const servers = bench.servers();
        const serversPerQuery = componentCpuSeconds(servers).map((seconds, k) => `${servers[k]!.name} ${ms(((seconds - (serversFrom[k] ?? 0)) * 1000) / ran)} ms`);
        const examined = (index.scans.examined - examinedFrom) / ran;
        console.log(`  ${label}: ${ran} queries, top_n 10 (avg ${(hits / ran).toFixed(1)} returned; ${examined.toFixed(0)} rows examined per query)`);
        console.log(`    total   p50 ${ms(percentile(wall, 50))} ms   p95 ${ms(percentile(wall, 95))} ms   QPS ${(ran / wallSeconds).toFixed(1)}`);
        console.log(`    cpu     p50 ${ms(percentile(cpu, 50))} ms   p95 ${ms(percentile(cpu, 95))} ms   (CPU time per query in this process: the latency without other load${profile === 'embedded' ? '' : ', plus the servers\' below'})`);
        if (profile !== 'embedded') console.log(`    servers CPU per query on average: ${serversPerQuery.join(', ')} (from /proc: 10 ms ticks, so no percentiles)`);
      }
    }
  } finally {
    await bench.close();
  }
}


// ------------------------------------------------------------------------------------------ main

const rawCount = Number(argument('raw', '300'));
const extractCount = Number(argument('extract', '100'));
const clients = Number(argument('clients', '8'));
const sizes = argument('sizes', '10000,100000').split(',').map(Number).filter((n) => n > 0);
const queryCount = Number(argument('queries', '200'));
const budgetSeconds = Number(argument('seconds', '20'));
const profile = profileArgument();
const began = performance.now();
console.log(`memory benchmark: node ${process.version}, ${os.availableParallelism()} CPUs, ${DIMS}-dimensional embeddings`);
console.log('1. adding messages through POST /api/v1/messages (own Temporal + Cairn, embedded worker; instant fake model in its own process)');
if (rawCount + extractCount > 0) await addBench(rawCount, extractCount, clients);
if (sizes.length) {
  console.log('\n2. search_message latency (messages seeded directly into the memory index: 100k through the HTTP API would take too long)');
  await searchBench(profile, sizes, queryCount, budgetSeconds);
}
console.log(`\nwhole benchmark: ${((performance.now() - began) / 1000).toFixed(0)} s`);
