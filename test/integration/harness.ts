import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import { startCairn, type Cairn } from '../../src/server.js';
import { startDevServer, type DevServer } from '../../src/engine/dev-server.js';
import { startWorkerProcess, type WorkerProcess } from './worker-process.js';

/** A live Cairn over a real Temporal dev server, started once per test run and stopped at the end. */
export interface Harness {
  url: string;
  adminKey: string;
  config: Config;
  temporal: DevServer;
  cairn: Cairn;
  /** The worker runs in its own process (`cairn worker`), so a test can kill it. */
  worker: WorkerProcess;
  /** Kills the worker process at once and starts a fresh one. */
  killWorker(): Promise<void>;
  /** Stops this Cairn and starts a new one on the same data directory and Temporal server. */
  restart(): Promise<void>;
}

let started: Promise<Harness> | undefined;

export function harness(): Promise<Harness> {
  started ??= start();
  return started;
}

async function start(): Promise<Harness> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-test-'));
  // Tests talk to servers on loopback (fake models, Cairn's own MCP endpoint): the SSRF guard lets them.
  process.env.CAIRN_ALLOW_PRIVATE_URLS = 'true';
  const base = loadConfig({ ...process.env, CAIRN_DATA_DIR: dataDir });
  const temporal = await startDevServer({ rootDir: base.rootDir, dbFile: path.join(dataDir, 'temporal.db'), port: 0 });
  const config: Config = { ...base, port: 0, temporalAddress: temporal.address, taskQueue: `cairn-test-${process.pid}`, embeddedWorker: false };
  const log = pino({ level: process.env.CAIRN_TEST_LOG ?? 'silent' });
  const h: Harness = {
    url: '',
    adminKey: '',
    config,
    temporal,
    cairn: await startCairn(config, { log }),
    worker: await startWorkerProcess(config, temporal.address),
    async killWorker() {
      await h.worker.kill();
      h.worker = await startWorkerProcess(config, temporal.address);
    },
    async restart() {
      await h.cairn.stop();
      h.cairn = await startCairn(config, { log });
      h.url = h.cairn.url;
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
  await h.cairn.stop();
  await h.worker.stop();
  await h.temporal.stop();
  fs.rmSync(h.config.dataDir, { recursive: true, force: true });
}
