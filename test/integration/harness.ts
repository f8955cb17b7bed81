import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import { startCairn, type Cairn } from '../../src/server.js';
import { startDevServer, type DevServer } from '../../src/engine/dev-server.js';
import { startWorkerProcess, type WorkerProcess } from './worker-process.js';
import { profileEnv } from '../support/meta-store.js';
import { openBackends, type Backends } from '../../src/wiring.js';

/** A live Cairn over a real Temporal dev server, started once per test run and stopped at the end. */
export interface Harness {
  url: string;
  adminKey: string;
  config: Config;
  temporal: DevServer;
  cairn: Cairn;
  /** The worker runs in its own process (`cairn worker`), so a test can kill it. */
  worker: WorkerProcess;
  /**
   * The storage behind the API (index, files, metadata) as this Cairn is configured, embedded or
   * scale-out: for tests that check or change what is stored. Opened on first use, closed by `stop`.
   */
  backends(): Promise<Backends>;
  /** Kills the worker process at once and starts a fresh one. */
  killWorker(): Promise<void>;
  /** Stops this Cairn and starts a new one on the same data directory and Temporal server. */
  restart(): Promise<void>;
  /** Stops Cairn, the worker and Temporal, and removes the data directory. */
  stop(): Promise<void>;
}

export interface HarnessOptions {
  /** Extra environment for this Cairn's configuration and its worker process (e.g. CAIRN_BLOBS=s3://...). */
  env?: Record<string, string>;
}

let started: Promise<Harness> | undefined;

export function harness(): Promise<Harness> {
  // CAIRN_TEST_PROFILE=scale-out runs the shared Cairn on PostgreSQL, Milvus and S3.
  started ??= profileEnv().then((env) => startHarness({ env }));
  return started;
}

/** A Cairn of its own, apart from the shared one of `harness()`: for tests that need another configuration. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-test-'));
  // Tests talk to servers on loopback (fake models, Cairn's own MCP endpoint): the SSRF guard lets them.
  process.env.CAIRN_ALLOW_PRIVATE_URLS = 'true';
  const env = options.env ?? {};
  const base = loadConfig({ ...process.env, ...env, CAIRN_DATA_DIR: dataDir });
  const temporal = await startDevServer({ rootDir: base.rootDir, dbFile: path.join(dataDir, 'temporal.db'), port: 0 });
  const config: Config = { ...base, port: 0, temporalAddress: temporal.address, taskQueue: `cairn-test-${process.pid}`, embeddedWorker: false };
  const log = pino({ level: process.env.CAIRN_TEST_LOG ?? 'silent' });
  let backends: Promise<Backends> | undefined;
  const h: Harness = {
    url: '',
    adminKey: '',
    config,
    temporal,
    cairn: await startCairn(config, { log }),
    worker: await startWorkerProcess(config, temporal.address, env),
    // No reader threads: a test reads a few rows.
    backends: () => (backends ??= openBackends({ ...config, indexThreads: 0 })),
    async killWorker() {
      await h.worker.kill();
      h.worker = await startWorkerProcess(config, temporal.address, env);
    },
    async restart() {
      await h.cairn.stop();
      h.cairn = await startCairn(config, { log });
      h.url = h.cairn.url;
    },
    async stop() {
      await (await backends?.catch(() => undefined))?.close();
      await h.cairn.stop();
      await h.worker.stop();
      await h.temporal.stop();
      fs.rmSync(config.dataDir, { recursive: true, force: true });
    },
  };
  h.url = h.cairn.url;
  h.adminKey = h.cairn.adminApiKey!;
  return h;
}

export async function stopHarness(): Promise<void> {
  if (!started) return;
  const h = await started.catch(() => undefined);
  started = undefined;
  if (!h) return;
  await h.stop();
}
