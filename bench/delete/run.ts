/**
 * Dataset deletion benchmark (prints numbers; not a timed test).
 *
 *   npx tsx bench/delete/run.ts [--datasets 1000]
 *
 * Starts its own Temporal dev server and Cairn (embedded worker) on a temporary data directory, creates
 * `datasets` empty datasets, then deletes them one request each (`DELETE /api/v1/datasets {ids: [id]}`),
 * one after another as a script would: the latency of each answer, and the time until the deletion
 * workflows have removed every row.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { apiCall as call, argument, percentile } from '../common.js';
import { loadConfig } from '../../src/config.js';
import { startCairn } from '../../src/server.js';
import { startDevServer } from '../../src/engine/dev-server.js';

const count = Number(argument('datasets', '1000'));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-delete-'));
const base = loadConfig({ ...process.env, CAIRN_DATA_DIR: dataDir });
const temporal = await startDevServer({ rootDir: base.rootDir, dbFile: path.join(dataDir, 'temporal.db'), port: 0 });
const cairn = await startCairn({ ...base, port: 0, temporalAddress: temporal.address, embeddedWorker: true }, { log: pino({ level: 'warn' }) });
try {
  const api = `${cairn.url}/api/v1`;
  const key = `Bearer ${cairn.adminApiKey}`;
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await call(`${api}/datasets`, 'POST', { name: `bench-${i}` }, key)).json.data.id);
  const latencies: number[] = [];
  const t0 = performance.now();
  for (const id of ids) {
    const start = performance.now();
    await call(`${api}/datasets`, 'DELETE', { ids: [id] }, key);
    latencies.push(performance.now() - start);
  }
  const answered = performance.now() - t0;
  const db = (await import('better-sqlite3')).default(path.join(dataDir, 'cairn.db'), { readonly: true });
  let left = count;
  while ((left = (db.prepare('select count(*) as n from datasets').get() as { n: number }).n) > 0) await new Promise((r) => setTimeout(r, 100));
  const removed = performance.now() - t0;
  db.close();
  console.log(`dataset deletion: ${count} empty datasets, one DELETE request each, one after another (2 CPUs)`);
  console.log(`answer latency: p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`);
  console.log(`all answered in ${(answered / 1000).toFixed(1)} s; every row removed by the deletion workflows after ${(removed / 1000).toFixed(1)} s (${left} left)`);
} finally {
  await cairn.stop();
  await temporal.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
