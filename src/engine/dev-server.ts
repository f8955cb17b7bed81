import { configEnv } from '../config-schema.js';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { temporalBinary } from './temporal-binary.js';
import { dieWithParent } from './parent-death.js';
import { childEnv } from './orphaned-children.js';
import { devServerPidFile, forgetDevServer, recordDevServer, stopLeftoverDevServer } from './dev-server-pid-file.js';

export interface DevServerOptions {
  rootDir: string;
  /** The Temporal CLI (TEMPORAL_BIN, Config.temporalBin); default: the one in .venv, else PATH's. */
  temporalBin?: string;
  dbFile: string;
  port: number;
  /** Web UI port; omitted for a headless server. */
  uiPort?: number;
  log?: (line: string) => void;
  /** Notices, such as a leftover server from a killed Cairn being stopped. */
  warn?: (message: string) => void;
  /** More arguments for `temporal server start-dev` (bench/ingest/temporal-cost.ts tries options with it). */
  extraArgs?: string[];
}

export interface DevServer {
  address: string;
  stop(): Promise<void>;
}

/**
 * Starts `temporal server start-dev` as a child process and waits until it accepts connections.
 * A server a killed predecessor left on the same database file is stopped first (temporal.pid); the new
 * one dies with this process where Linux allows (parent-death.ts).
 */
export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const dbFile = path.resolve(opts.dbFile);
  const pidFile = devServerPidFile(dbFile);
  await stopLeftoverDevServer(pidFile, dbFile, opts.warn ?? (() => undefined));
  const port = opts.port || (await freePort());
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--db-filename', dbFile, '--log-level', 'warn'];
  // WAL: `cairn backup` reads the database while the server writes, without blocking it. synchronous=NORMAL,
  // as Cairn's own SQLite files: no fsync per commit (a crash of any process loses nothing; a power cut may
  // lose the last commits, never corrupts), which cut the server's CPU per parse workflow by ~38%
  // (bench/ingest/temporal-cost.ts: 60-61 -> 37.5-38 CPU-ms per workflow of two activities).
  args.push('--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'busy_timeout=10000', '--sqlite-pragma', 'synchronous=NORMAL');
  // Agent turns start eagerly on the worker in the same process (WorkflowClient.startAgentRunsEagerly), and
  // an activity on its workflow's own task queue comes back with the workflow task that scheduled it when
  // that worker has a free slot (the SDK reserves it): a turn's components skip a trip through the queue.
  args.push('--dynamic-config-value', 'system.enableEagerWorkflowStart=true', '--dynamic-config-value', 'system.enableActivityEagerExecution=true');
  if (opts.uiPort) args.push('--ui-ip', '127.0.0.1', '--ui-port', String(opts.uiPort));
  else args.push('--headless');
  args.push(...(opts.extraArgs ?? []));
  const launch = dieWithParent(opts.rootDir, temporalBinary(opts.rootDir, opts.temporalBin), args);
  const child = spawn(launch.command, launch.args, { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv(devServerEnv(configEnv())) });
  if (child.pid) recordDevServer(pidFile, child.pid, port, dbFile);
  const output: string[] = [];
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    output.push(text);
    if (output.length > 50) output.shift();
    opts.log?.(text.trimEnd());
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const spawnFailed = new Promise<Error>((resolve) => child.once('error', resolve));
  void exited.then(() => forgetDevServer(pidFile, child.pid!));
  const address = `127.0.0.1:${port}`;
  const stopOnExit = () => child.kill('SIGTERM');
  process.once('exit', stopOnExit);

  const deadline = Date.now() + 60_000;
  for (;;) {
    const early = await Promise.race([exited, spawnFailed, sleep(250).then(() => 'running' as const)]);
    if (early instanceof Error) throw new Error(`could not start the Temporal dev server ${temporalBinary(opts.rootDir, opts.temporalBin)}: ${early.message}`);
    if (early !== 'running') throw new Error(`Temporal dev server exited (code ${early}): ${output.join('').slice(-2000)}`);
    if (await canConnect(address)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`Temporal dev server did not start within 60 s: ${output.join('').slice(-2000)}`);
    }
  }
  return {
    address,
    async stop() {
      process.removeListener('exit', stopOnExit);
      await terminate(child, exited);
    },
  };
}

/**
 * The dev server's environment: Cairn's, with Go's collector run at half its default heap growth unless
 * the operator chose (GOGC or GOMEMLIMIT). Measured by bench/ingest/run.ts after a 100-document parse: 230 MB RSS with the
 * default, 200 MB with GOGC=50, at the same server CPU. A soft limit (GOMEMLIMIT) saves more while the
 * live heap stays under it (100 MiB: 183 MB) but near it the collector takes up to half the server's CPU
 * (75 MiB: 92 instead of 17 CPU-s), and the live heap grows with the workflows in flight: no cliff here.
 */
export function devServerEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.GOMEMLIMIT || env.GOGC) return env;
  return { ...env, GOGC: DEV_SERVER_GOGC };
}

export const DEV_SERVER_GOGC = '50';

async function canConnect(address: string): Promise<boolean> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: 1000 });
    try {
      await connection.healthService.check({});
      return true;
    } finally {
      await connection.close();
    }
  } catch {
    return false;
  }
}

async function terminate(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const done = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
  if (!done) {
    child.kill('SIGKILL');
    await exited;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
