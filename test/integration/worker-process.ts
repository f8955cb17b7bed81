import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../src/config.js';

/** A `cairn worker` child process, as operators run it, so tests can kill it mid-work. */
export interface WorkerProcess {
  child: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** SIGKILL: the worker dies without finishing anything. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** `args` go after `cairn worker` (e.g. `['--queues', 'parse']`). */
export async function startWorkerProcess(config: Config, temporalAddress: string, extraEnv: Record<string, string> = {}, args: string[] = []): Promise<WorkerProcess> {
  const logFile = path.join(config.dataDir, `worker-${Date.now()}.log`);
  const out = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [path.join(config.rootDir, 'bin', 'cairn.js'), 'worker', ...args], {
    env: { ...process.env, ...extraEnv, CAIRN_DATA_DIR: config.dataDir, TEMPORAL_ADDRESS: temporalAddress, CAIRN_TASK_QUEUE: config.taskQueue, LOG_LEVEL: 'warn' },
    stdio: ['ignore', out, out],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The worker prints "worker polling ..." once it is connected.
  const deadline = Date.now() + 60_000;
  while (!fs.readFileSync(logFile, 'utf8').includes('worker polling')) {
    if (child.exitCode !== null) throw new Error(`worker exited: ${fs.readFileSync(logFile, 'utf8')}`);
    if (Date.now() > deadline) throw new Error(`worker did not start: ${fs.readFileSync(logFile, 'utf8')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  let logOpen = true;
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
    // Once: a worker killed by a test is stopped again when the suite ends, and by then its descriptor
    // number may belong to something else (a second close would close that, or fail with EBADF).
    if (logOpen) fs.closeSync(out);
    logOpen = false;
  };
  return { child, output: () => fs.readFileSync(logFile, 'utf8'), kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
}
