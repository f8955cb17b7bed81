/**
 * bench/retrieval's --http mode: the same corpus and questions through a real Cairn (`cairn start` as a
 * separate process, with a Temporal dev server and the built-in embedding model), POST /api/v1/retrieval
 * with the spec's defaults, so each figure includes the HTTP stack, the query embedding and the reader
 * threads. One client, then `clients` concurrent clients.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { apiCall, percentile } from '../common.js';
import { freePort, startDevServer } from '../../src/engine/dev-server.js';
import { openIndexDatabase } from '../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../src/index/sqlite-index.js';
import { syntheticChunk, type TextSource } from './synthetic.js';

const rootDir = path.resolve(new URL('../..', import.meta.url).pathname);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface HttpRun {
  clients: number;
  latencies: number[];
  seconds: number;
}

async function waitForStart(url: string, keyFile: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`cairn exited (code ${child.exitCode}):\n${log()}`);
    const ok = await fetch(`${url}/api/v1/system/healthz`).then((r) => r.ok, () => false);
    if (ok && fs.existsSync(keyFile)) return; // the admin key is written just after the server listens
    await sleep(250);
  }
  throw new Error(`cairn did not become healthy within 180 s:\n${log()}`);
}

async function retrieveOnce(api: string, key: string, datasetId: string, question: string): Promise<number> {
  const start = performance.now();
  const res = await fetch(`${api}/retrieval`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: key },
    body: JSON.stringify({ question, dataset_ids: [datasetId], top_k: 1024, page_size: 30 }),
  });
  const body = (await res.json()) as { code: number; message?: string };
  if (res.status !== 200 || body.code !== 0) throw new Error(`retrieval: HTTP ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return performance.now() - start;
}

/**
 * Starts Cairn on a temporary data directory, writes `size` chunks into its index file (as the ingestion
 * workflow's index step does), and runs `queryCount` questions with 1 and with `clients` clients.
 */
export async function benchHttp(size: number, source: TextSource, random: () => number, questions: string[], queryCount: number, clients: number): Promise<HttpRun[]> {
  const dataDir = fs.mkdtempSync(path.join(tmpdir(), 'cairn-bench-http-'));
  const temporal = await startDevServer({ rootDir, dbFile: path.join(dataDir, 'temporal.db'), port: 0 });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // Default reader threads and requests in flight; a queue long enough that no client is refused (this
  // measures latency and throughput, bench/overload measures refusals).
  const env = {
    ...process.env, CAIRN_DATA_DIR: dataDir, PORT: String(port), TEMPORAL_ADDRESS: temporal.address, CAIRN_EMBEDDED_WORKER: 'false',
    LOG_LEVEL: 'warn', CAIRN_MAX_QUEUE: String(clients), CAIRN_MAX_QUEUE_WAIT_MS: '60000',
  };
  const output: string[] = [];
  const child = spawn(process.execPath, [path.join(rootDir, 'bin', 'cairn.js'), 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (b: Buffer) => output.push(b.toString()));
  child.stderr!.on('data', (b: Buffer) => output.push(b.toString()));
  const killChild = () => child.exitCode === null && child.kill('SIGKILL');
  process.once('exit', killChild);
  try {
    const keyFile = path.join(dataDir, 'admin-api-key');
    await waitForStart(url, keyFile, child, () => output.join('').slice(-3000));
    const api = `${url}/api/v1`;
    const key = `Bearer ${fs.readFileSync(keyFile, 'utf8').trim()}`;
    const dataset = (await apiCall(`${api}/datasets`, 'POST', { name: 'retrieval-bench' }, key)).json.data as { id: string; tenant_id: string };
    const db = openIndexDatabase(path.join(dataDir, 'cairn.db'));
    const index = new SqliteChunkIndex(db);
    for (let start = 0; start < size; start += 1000) {
      const batch = Array.from({ length: Math.min(1000, size - start) }, (_, k) => ({
        ...syntheticChunk(start + k, source, random, dataset.id),
        tenant_id: dataset.tenant_id,
      }));
      await index.upsert(batch);
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    await sleep(100); // the build held this event loop: let the HTTP client drop connections closed meanwhile
    const ask = (i: number) => retrieveOnce(api, key, dataset.id, questions[i % questions.length]!);
    for (let i = 0; i < 10; i++) await ask(i); // model load, reader threads, caches

    const runs: HttpRun[] = [];
    for (const concurrency of [1, clients]) {
      const latencies: number[] = [];
      let next = 0;
      const start = performance.now();
      const client = async () => {
        while (next < queryCount) latencies.push(await ask(10 + next++));
      };
      await Promise.all(Array.from({ length: concurrency }, client));
      runs.push({ clients: concurrency, latencies, seconds: (performance.now() - start) / 1000 });
    }
    return runs;
  } catch (err) {
    console.error(`cairn's last output:\n${output.join('').slice(-3000)}`);
    throw err;
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    await temporal.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export function describeHttpRun(run: HttpRun, vsFloor: (ms: number) => string): string {
  const p50 = percentile(run.latencies, 50);
  const p95 = percentile(run.latencies, 95);
  return `  ${String(run.clients).padStart(2)} client${run.clients === 1 ? ' ' : 's'}  p50 ${p50.toFixed(1).padStart(7)} ms ${vsFloor(p50)}   p95 ${p95.toFixed(1).padStart(7)} ms ${vsFloor(p95)}   QPS ${(run.latencies.length / run.seconds).toFixed(1)}`;
}
