/**
 * A real `cairn start` for HTTP benches: its own temporary data dir and Temporal dev server, the admin
 * key, on the backends of a profile (bench/profile.ts; embedded unless given), and a synthetic corpus
 * written straight into its chunk index (as the ingestion workflow's index step writes chunks). `stop`
 * ends both processes and removes the data dir; the profile's services are the caller's to stop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, startDevServer } from '../src/engine/dev-server.js';
import { embeddedServices, type ProfileServices } from './profile.js';
import { syntheticChunk, type TextSource } from './retrieval/synthetic.js';
import { LOOPBACK_MODELS_ENV } from './common.js';

const rootDir = path.resolve(new URL('..', import.meta.url).pathname);
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface BenchCairn {
  child: ChildProcess;
  url: string;
  /** `${url}/api/v1` */
  api: string;
  /** `Bearer <admin key>` */
  key: string;
  dataDir: string;
  /** Its Temporal dev server (`host:port`), for benches that read workflow histories. */
  temporalAddress: string;
  /** The profile's services this Cairn runs on. */
  services: ProfileServices;
  /** The end of Cairn's output, for error messages. */
  lastOutput(): string;
  stop(): Promise<void>;
}

async function waitForStart(url: string, keyFile: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`cairn exited (code ${child.exitCode}):\n${log()}`);
    const ok = await fetch(`${url}/api/v1/system/healthz`).then((r) => r.ok, () => false);
    // The admin key is written just after the server starts listening.
    if (ok && fs.existsSync(keyFile)) return;
    await sleep(250);
  }
  throw new Error(`cairn did not become healthy within 180 s:\n${log()}`);
}

/** Starts Cairn (API only, workers not needed by these benches) on `services`, with `env` on top of the bench's own. */
export async function startBenchCairn(
  label: string, env: Record<string, string> = {}, nodeArgs: string[] = [], services: ProfileServices = embeddedServices,
): Promise<BenchCairn> {
  const dataDir = fs.mkdtempSync(path.join(tmpdir(), `cairn-bench-${label}-`));
  const temporal = await startDevServer({ rootDir, dbFile: path.join(dataDir, 'temporal.db'), port: 0 });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const childEnv = {
    ...process.env, CAIRN_DATA_DIR: dataDir, PORT: String(port), TEMPORAL_ADDRESS: temporal.address,
    CAIRN_EMBEDDED_WORKER: 'false', LOG_LEVEL: 'warn', ...LOOPBACK_MODELS_ENV, ...services.env, ...env,
  };
  const output: string[] = [];
  const child = spawn(process.execPath, [...nodeArgs, path.join(rootDir, 'bin', 'cairn.js'), 'start'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (b: Buffer) => output.push(b.toString()));
  child.stderr!.on('data', (b: Buffer) => output.push(b.toString()));
  const killChild = () => child.exitCode === null && child.kill('SIGKILL');
  process.once('exit', killChild);
  const lastOutput = () => output.join('').slice(-3000);
  const stop = async () => {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    await temporal.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const keyFile = path.join(dataDir, 'admin-api-key');
    await waitForStart(url, keyFile, child, lastOutput);
    const key = `Bearer ${fs.readFileSync(keyFile, 'utf8').trim()}`;
    return { child, url, api: `${url}/api/v1`, key, dataDir, temporalAddress: temporal.address, services, lastOutput, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Writes `count` synthetic chunks of the dataset into Cairn's chunk index, in batches of 1000. */
export async function indexSyntheticChunks(
  cairn: BenchCairn, dataset: { id: string; tenant_id: string }, count: number, source: TextSource, random: () => number,
): Promise<void> {
  const target = await cairn.services.openIndex(cairn.dataDir);
  try {
    for (let start = 0; start < count; start += 1000) {
      const batch = Array.from({ length: Math.min(1000, count - start) }, (_, k) => ({
        ...syntheticChunk(start + k, source, random, dataset.id),
        tenant_id: dataset.tenant_id,
      }));
      await target.index.upsert(batch);
    }
    await target.loaded([dataset.id]);
  } finally {
    await target.close();
  }
  // The build held this event loop for seconds: let the HTTP client drop connections the server closed meanwhile.
  await sleep(100);
}
