/**
 * bench/retrieval's --http mode: the same corpus and questions through a real Cairn (`cairn start` as a
 * separate process, with a Temporal dev server and the built-in embedding model) on the profile's
 * backends (bench/profile.ts), POST /api/v1/retrieval with the spec's defaults, so each figure includes the
 * HTTP stack, authentication and dataset checks against the metadata database, the query embedding and the
 * index. One client, then `clients` concurrent clients, each until `queryCount` queries or `seconds` passed.
 */
import { apiCall, percentile } from '../common.js';
import { indexSyntheticChunks, startBenchCairn } from '../cairn-server.js';
import { componentCpuSeconds, type Component } from '../processes.js';
import { startProfileServices, type BenchProfile } from '../profile.js';
import type { TextSource } from './synthetic.js';

export interface HttpRun {
  clients: number;
  latencies: number[];
  seconds: number;
  /** CPU time per query of each process involved (Cairn, the profile's services, this client). */
  cpu: { name: string; msPerQuery: number }[];
}

export interface HttpBench {
  profile: BenchProfile;
  size: number;
  source: TextSource;
  random: () => number;
  questions: string[];
  queryCount: number;
  seconds: number;
  clients: number;
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

const clientCpuSeconds = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1e6;
};

/**
 * Starts the profile's services and Cairn on a temporary data directory, writes `size` chunks into its
 * chunk index (as the ingestion workflow's index step does), and runs the questions with 1 and with
 * `clients` clients.
 */
export async function benchHttp(bench: HttpBench): Promise<{ description: string; loadSeconds: number; runs: HttpRun[] }> {
  const services = await startProfileServices(bench.profile);
  try {
    // Default reader threads and requests in flight; a queue long enough that no client is refused (this
    // measures latency and throughput, bench/overload measures refusals).
    const cairn = await startBenchCairn('http', { CAIRN_MAX_QUEUE: String(bench.clients), CAIRN_MAX_QUEUE_WAIT_MS: '60000' }, [], services);
    const { api, key } = cairn;
    try {
      const dataset = (await apiCall(`${api}/datasets`, 'POST', { name: 'retrieval-bench' }, key)).json.data as { id: string; tenant_id: string };
      const loadStart = performance.now();
      await indexSyntheticChunks(cairn, dataset, bench.size, bench.source, bench.random);
      const loadSeconds = (performance.now() - loadStart) / 1000;
      const ask = (i: number) => retrieveOnce(api, key, dataset.id, bench.questions[i % bench.questions.length]!);
      for (let i = 0; i < 10; i++) await ask(i); // model load, reader threads, caches

      // Cairn's process with its children (the embedding process), then the services; Temporal is idle here.
      const components: Component[] = [{ name: 'Cairn', root: cairn.child.pid! }, ...services.components()];
      const runs: HttpRun[] = [];
      for (const concurrency of [1, bench.clients]) {
        const latencies: number[] = [];
        let next = 0;
        const cpuStart = [...componentCpuSeconds(components), clientCpuSeconds()];
        const start = performance.now();
        const deadline = start + bench.seconds * 1000;
        const client = async () => {
          while (next < bench.queryCount && performance.now() < deadline) latencies.push(await ask(10 + next++));
        };
        await Promise.all(Array.from({ length: concurrency }, client));
        const seconds = (performance.now() - start) / 1000;
        const cpuEnd = [...componentCpuSeconds(components), clientCpuSeconds()];
        const names = [...components.map((c) => c.name), 'bench client'];
        const cpu = names.map((name, k) => ({ name, msPerQuery: (1000 * (cpuEnd[k]! - cpuStart[k]!)) / latencies.length }));
        runs.push({ clients: concurrency, latencies, seconds, cpu });
      }
      return { description: services.description, loadSeconds, runs };
    } catch (err) {
      console.error(`cairn's last output:\n${cairn.lastOutput()}`);
      throw err;
    } finally {
      await cairn.stop();
    }
  } finally {
    await services.stop();
  }
}

export function describeHttpRun(run: HttpRun, vsFloor: (ms: number) => string): string {
  const p50 = percentile(run.latencies, 50);
  const p95 = percentile(run.latencies, 95);
  return (
    `  ${String(run.clients).padStart(2)} client${run.clients === 1 ? ' ' : 's'}  p50 ${p50.toFixed(1).padStart(7)} ms ${vsFloor(p50)}   p95 ${p95.toFixed(1).padStart(7)} ms ${vsFloor(p95)}   ` +
    `QPS ${(run.latencies.length / run.seconds).toFixed(1)} (${run.latencies.length} queries); CPU per query: ${run.cpu.map((c) => `${c.name} ${c.msPerQuery.toFixed(1)} ms`).join(', ')}`
  );
}
