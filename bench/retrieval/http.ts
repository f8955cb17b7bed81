/**
 * bench/retrieval's --http mode: the same corpus and questions through a real Cairn (`cairn start` as a
 * separate process, with a Temporal dev server and the built-in embedding model), POST /api/v1/retrieval
 * with the spec's defaults, so each figure includes the HTTP stack, the query embedding and the reader
 * threads. One client, then `clients` concurrent clients.
 */
import { apiCall, percentile } from '../common.js';
import { indexSyntheticChunks, startBenchCairn } from '../cairn-server.js';
import type { TextSource } from './synthetic.js';


export interface HttpRun {
  clients: number;
  latencies: number[];
  seconds: number;
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
  // Default reader threads and requests in flight; a queue long enough that no client is refused (this
  // measures latency and throughput, bench/overload measures refusals).
  const cairn = await startBenchCairn('http', { CAIRN_MAX_QUEUE: String(clients), CAIRN_MAX_QUEUE_WAIT_MS: '60000' });
  const { api, key } = cairn;
  try {
    const dataset = (await apiCall(`${api}/datasets`, 'POST', { name: 'retrieval-bench' }, key)).json.data as { id: string; tenant_id: string };
    await indexSyntheticChunks(cairn.dataDir, dataset, size, source, random);
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
    console.error(`cairn's last output:\n${cairn.lastOutput()}`);
    throw err;
  } finally {
    await cairn.stop();
  }
}

export function describeHttpRun(run: HttpRun, vsFloor: (ms: number) => string): string {
  const p50 = percentile(run.latencies, 50);
  const p95 = percentile(run.latencies, 95);
  return `  ${String(run.clients).padStart(2)} client${run.clients === 1 ? ' ' : 's'}  p50 ${p50.toFixed(1).padStart(7)} ms ${vsFloor(p50)}   p95 ${p95.toFixed(1).padStart(7)} ms ${vsFloor(p95)}   QPS ${(run.latencies.length / run.seconds).toFixed(1)}`;
}
