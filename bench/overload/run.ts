/**
 * Overload benchmark (prints numbers; not a timed test): is Cairn graceful beyond its capacity?
 *
 *   npx tsx bench/overload/run.ts [--clients 50] [--seconds 60] [--chunks 10000]
 *     [--max-inflight N] [--max-queue N] [--max-queue-wait-ms N] [--index-threads N] [--ignore-retry-after]
 *     [--profile DIR]
 *
 * Starts a Temporal dev server and Cairn as a separate process (`cairn start`, so the load generator
 * never shares Cairn's event loop) on a temporary data directory, with the built-in embedding model.
 * Creates a dataset and writes `chunks` synthetic chunks into its index (bench/retrieval's corpus: real
 * SciFact sentences when available, 384-dim vectors), then:
 * 1. one client, 50 retrievals one after another: the latency without contention;
 * 2. `clients` clients, each sending POST /api/v1/retrieval with real questions in a loop for `seconds`,
 *    while GET /api/v1/system/healthz is polled every 200 ms. A refused request (503) waits for its
 *    Retry-After before the client sends the next one, as a polite client does (--ignore-retry-after:
 *    it sends the next at once);
 * 3. after the load: one retrieval and healthz, which must answer 200.
 * Prints requests/s, latency of accepted requests (p50/p95/p99/max), the share refused with 503, healthz
 * latency (p50/max) and the event-loop lag and memory healthz reported. Targets: no accepted request over
 * 2 s, healthz under 100 ms. --max-inflight, --max-queue, --max-queue-wait-ms and --index-threads set
 * CAIRN_MAX_INFLIGHT, CAIRN_MAX_QUEUE, CAIRN_MAX_QUEUE_WAIT_MS and CAIRN_INDEX_THREADS (defaults: derived
 * from the CPU count). --profile writes CPU profiles of Cairn's threads (node --cpu-prof) into DIR.
 */
import fs from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import path from 'node:path';
import { apiCall, argument, percentile } from '../common.js';
import { prng, textSource } from '../retrieval/synthetic.js';
import { indexSyntheticChunks, sleep, startBenchCairn } from '../cairn-server.js';

const clients = Number(argument('clients', '50'));
const seconds = Number(argument('seconds', '60'));
const chunkCount = Number(argument('chunks', '10000'));
const honourRetryAfter = !process.argv.includes('--ignore-retry-after');
const profileDir = argument('profile', '');
const HEALTHZ_EVERY_MS = 200;
const BASELINE_QUERIES = 50;

const fmt = (ms: number) => `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;

function capacityEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  const flags = [['max-inflight', 'CAIRN_MAX_INFLIGHT'], ['max-queue', 'CAIRN_MAX_QUEUE'], ['max-queue-wait-ms', 'CAIRN_MAX_QUEUE_WAIT_MS'], ['index-threads', 'CAIRN_INDEX_THREADS']];
  for (const [flag, name] of flags) {
    const value = argument(flag!, '');
    if (value) env[name!] = value;
  }
  return env;
}

interface Outcome {
  ms: number;
  status: number;
  retryAfter?: number;
}

async function retrieveOnce(api: string, key: string, datasetId: string, question: string): Promise<Outcome> {
  const start = performance.now();
  const res = await fetch(`${api}/retrieval`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: key },
    body: JSON.stringify({ question, dataset_ids: [datasetId] }),
  });
  const body = (await res.json()) as { code: number; message?: string; data?: { chunks: unknown[] } };
  const ms = performance.now() - start;
  if (res.status === 503) {
    if (body.code !== 503 || !/^Service busy/.test(body.message ?? '')) throw new Error(`503 without the busy envelope: ${JSON.stringify(body)}`);
    return { ms, status: 503, retryAfter: Number(res.headers.get('retry-after')) };
  }
  if (res.status !== 200 || body.code !== 0) throw new Error(`retrieval: HTTP ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return { ms, status: 200 };
}

interface Health {
  ms: number;
  status: number;
  eventLoopMaxMs?: number;
  eventLoopP99Ms?: number;
  rssMb?: number;
}

/** CPU seconds (user + system) of the whole process and of its main thread, from /proc; undefined elsewhere. */
function cpuSeconds(pid: number): { process: number; main: number } | undefined {
  const ticks = (file: string) => {
    const stat = fs.readFileSync(file, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in USER_HZ (100 on Linux)
  };
  try {
    return { process: ticks(`/proc/${pid}/stat`), main: ticks(`/proc/${pid}/task/${pid}/stat`) };
  } catch {
    return undefined;
  }
}

async function healthOnce(url: string): Promise<Health> {
  const start = performance.now();
  const res = await fetch(`${url}/api/v1/system/healthz`);
  const body = (await res.json()) as { event_loop?: { p99_ms: number; max_ms: number }; rss_mb?: number };
  return { ms: performance.now() - start, status: res.status, eventLoopMaxMs: body.event_loop?.max_ms, eventLoopP99Ms: body.event_loop?.p99_ms, rssMb: body.rss_mb };
}

async function main(): Promise<void> {
  const nodeArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(profileDir)] : [];
  const cairn = await startBenchCairn('overload', capacityEnv(), nodeArgs);
  const { url, api, key, child } = cairn;
  try {
    const dataset = (await apiCall(`${api}/datasets`, 'POST', { name: 'overload' }, key)).json.data as { id: string; tenant_id: string; embedding_model: string };

    const random = prng(42);
    const source = textSource(random);
    const buildStart = performance.now();
    await indexSyntheticChunks(cairn, dataset, chunkCount, source, random);
    const questions = source.questions;
    const question = (i: number) => questions[(i * 37) % questions.length]!;
    console.log(`overload benchmark: node ${process.version}, ${availableParallelism()} CPUs (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
    console.log(`${chunkCount.toLocaleString('en')} chunks indexed in ${((performance.now() - buildStart) / 1000).toFixed(1)} s; embedding model ${dataset.embedding_model}; settings ${JSON.stringify(capacityEnv())}`);

    for (let i = 0; i < 10; i++) await retrieveOnce(api, key, dataset.id, question(i)); // model load, reader threads, caches
    const single: number[] = [];
    for (let i = 0; i < BASELINE_QUERIES; i++) single.push((await retrieveOnce(api, key, dataset.id, question(1000 + i))).ms);
    console.log(`one client, ${BASELINE_QUERIES} retrievals in a row: p50 ${fmt(percentile(single, 50))}, p95 ${fmt(percentile(single, 95))}`);

    const accepted: number[] = [];
    let rejected = 0;
    const health: Health[] = [];
    const end = performance.now() + seconds * 1000;
    let sent = 0;
    const client = async (c: number) => {
      while (performance.now() < end) {
        const outcome = await retrieveOnce(api, key, dataset.id, question(c * 7919 + sent++));
        if (outcome.status === 200) accepted.push(outcome.ms);
        else {
          rejected++;
          if (honourRetryAfter) await sleep(Math.min((outcome.retryAfter || 1) * 1000, Math.max(0, end - performance.now())));
        }
      }
    };
    const poller = async () => {
      while (performance.now() < end) {
        const next = performance.now() + HEALTHZ_EVERY_MS;
        health.push(await healthOnce(url));
        await sleep(Math.max(0, next - performance.now()));
      }
    };
    const loadStart = performance.now();
    const cpuBefore = cpuSeconds(child.pid!);
    await Promise.all([...Array.from({ length: clients }, (_, c) => client(c)), poller()]);
    const elapsed = (performance.now() - loadStart) / 1000;
    const cpuAfter = cpuSeconds(child.pid!);

    const healthMs = health.map((h) => h.ms);
    const total = accepted.length + rejected;
    console.log(`\n${clients} clients for ${elapsed.toFixed(0)} s, healthz every ${HEALTHZ_EVERY_MS} ms (${honourRetryAfter ? 'refused clients wait for Retry-After' : 'refused clients retry at once'}):`);
    console.log(`  accepted  ${accepted.length} (${(accepted.length / elapsed).toFixed(1)} requests/s)   refused 503: ${rejected} (${((100 * rejected) / Math.max(1, total)).toFixed(1)}%)`);
    console.log(`  accepted latency  p50 ${fmt(percentile(accepted, 50))}   p95 ${fmt(percentile(accepted, 95))}   p99 ${fmt(percentile(accepted, 99))}   max ${fmt(Math.max(...accepted))}   (over 2 s: ${accepted.filter((ms) => ms > 2000).length})`);
    console.log(`  healthz  ${health.length} polls   p50 ${fmt(percentile(healthMs, 50))}   p95 ${fmt(percentile(healthMs, 95))}   max ${fmt(Math.max(...healthMs))}   (over 100 ms: ${healthMs.filter((ms) => ms > 100).length}, non-200: ${health.filter((h) => h.status !== 200).length})`);
    const lagMax = Math.max(...health.map((h) => h.eventLoopMaxMs ?? 0));
    const lagP99 = Math.max(...health.map((h) => h.eventLoopP99Ms ?? 0));
    const rss = health.map((h) => h.rssMb ?? 0);
    console.log(`  event loop as healthz reported it: worst p99 ${fmt(lagP99)}, worst max ${fmt(lagMax)}; rss ${rss[0]} MB at the start, ${rss.at(-1)} MB at the end, ${Math.max(...rss)} MB at most`);
    if (cpuBefore && cpuAfter) {
      const share = (seconds: number) => `${(seconds / elapsed).toFixed(2)} CPUs`;
      console.log(`  cairn used ${share(cpuAfter.process - cpuBefore.process)} in all, its event-loop thread ${share(cpuAfter.main - cpuBefore.main)} (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
    }

    const after = await retrieveOnce(api, key, dataset.id, question(3));
    const afterHealth = await healthOnce(url);
    console.log(`after the load: retrieval HTTP ${after.status} in ${fmt(after.ms)}, healthz HTTP ${afterHealth.status} in ${fmt(afterHealth.ms)}`);
  } catch (err) {
    console.error(`cairn ${child.exitCode === null ? 'is running' : `exited (code ${child.exitCode})`}; its last output:\n${cairn.lastOutput()}`);
    throw err;
  } finally {
    await cairn.stop();
  }
}

await main();
