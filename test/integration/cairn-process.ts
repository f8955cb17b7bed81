import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { freePort } from '../../src/engine/dev-server.js';
import { processExists } from '../../src/engine/process-identity.js';

const rootDir = loadConfig().rootDir;
const cairnBin = path.join(rootDir, 'bin', 'cairn.js');
const run = promisify(execFile);

/** `cairn start` as operators run it: its own process with its own Temporal dev server, so a test can kill -9 it. */
export interface CairnProcess {
  child: ChildProcess;
  url: string;
  dataDir: string;
  ports: CairnPorts;
  /** Everything it printed so far. */
  output(): string;
  /** SIGKILL: no cleanup runs. */
  kill(): Promise<void>;
  /** SIGTERM: a normal stop. */
  stop(): Promise<void>;
}

export interface CairnPorts {
  port: number;
  temporalPort: number;
}

export async function freeCairnPorts(): Promise<CairnPorts> {
  return { port: await freePort(), temporalPort: await freePort() };
}

export function cairnEnv(dataDir: string, ports?: CairnPorts): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CAIRN_DATA_DIR: dataDir, TEMPORAL_UI_PORT: '0', LOG_LEVEL: 'warn' };
  // The harness's own settings must not leak into a separate installation.
  delete env.TEMPORAL_ADDRESS;
  delete env.CAIRN_TASK_QUEUE;
  delete env.CAIRN_DATABASE_URL;
  delete env.CAIRN_BLOBS;
  if (ports) Object.assign(env, { PORT: String(ports.port), TEMPORAL_PORT: String(ports.temporalPort) });
  return env;
}

/**
 * `options.args` go after `cairn start` (e.g. `--no-worker`); `options.env` is added to cairnEnv's;
 * `options.rootDir` runs the `cairn` of another copy of the tree.
 */
export async function startCairnProcess(dataDir: string, ports?: CairnPorts, options: { args?: string[]; env?: Record<string, string>; rootDir?: string } = {}): Promise<CairnProcess> {
  const chosen = ports ?? (await freeCairnPorts());
  const env = { ...cairnEnv(dataDir, chosen), ...options.env };
  const bin = options.rootDir ? path.join(options.rootDir, 'bin', 'cairn.js') : cairnBin;
  const child = spawn(process.execPath, [bin, 'start', ...(options.args ?? [])], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 120_000;
  let url: string | undefined;
  while (!(url = /Cairn is listening on (\S+)/.exec(text)?.[1])) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`cairn start exited (${child.exitCode ?? child.signalCode}): ${text}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`cairn start did not listen within 120 s: ${text}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { child, url, dataDir, ports: chosen, output: () => text, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
}

/** Runs a `cairn` command (of the copy of the tree at `rootDir`, if given) to its end; never throws on a non-zero exit. */
export async function runCairn(args: string[], env: NodeJS.ProcessEnv, rootDir?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [rootDir ? path.join(rootDir, 'bin', 'cairn.js') : cairnBin, ...args], { env, timeout: 300_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

export function adminKeyOf(dataDir: string): string {
  return fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim();
}

/** The Temporal dev server Cairn recorded in the data dir (temporal.pid). */
export function devServerOf(dataDir: string): { pid: number; port: number } {
  return JSON.parse(fs.readFileSync(path.join(dataDir, 'temporal.pid'), 'utf8'));
}

/** Running, as opposed to gone or a zombie waiting to be reaped. */
export function isRunning(pid: number): boolean {
  if (!fs.existsSync('/proc/self')) return processExists(pid);
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}
