/**
 * The benchmark's Temporal worker: a `cairn worker` child process, as operators run it (and as the
 * integration harness does). Keeping the parse work out of the benchmark's own process keeps the
 * benchmark responsive when the worker is not: it can watch the worker's memory and CPU from /proc, and
 * stop it (SIGTERM, then SIGKILL) whatever state it is in.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../src/config.js';
import { childLifecycle } from './child-lifecycle.js';

export interface BenchWorker {
  child: ChildProcess;
  logFile: string;
  /** Resident memory in bytes (Linux /proc), or NaN. */
  rss(): number;
  /** CPU seconds used so far (user + system, all threads; Linux /proc), or NaN. */
  cpuSeconds(): number;
  /** Set when the process has exited. */
  exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  logTail(bytes?: number): string;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts `cairn worker` on the config's data dir and task queue; `env` adds the profile's backends (bench/profile.ts). */
export async function startBenchWorker(config: Config, temporalAddress: string, env: Record<string, string> = {}): Promise<BenchWorker> {
  const logFile = path.join(config.dataDir, 'worker.log');
  const out = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [path.join(config.rootDir, 'bin', 'cairn.js'), 'worker'], {
    env: { ...process.env, ...env, CAIRN_DATA_DIR: config.dataDir, TEMPORAL_ADDRESS: temporalAddress, CAIRN_TASK_QUEUE: config.taskQueue, LOG_LEVEL: 'warn' },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const lifecycle = childLifecycle(child, 15_000);
  const logTail = (bytes = 2000) => {
    try {
      const text = fs.readFileSync(logFile, 'utf8');
      return text.slice(-bytes);
    } catch {
      return '';
    }
  };
  const worker: BenchWorker = {
    child,
    logFile,
    rss: () => {
      try {
        const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        return m ? Number(m[1]) * 1024 : NaN;
      } catch {
        return NaN;
      }
    },
    cpuSeconds: () => {
      try {
        const stat = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime in USER_HZ (100 on Linux)
      } catch {
        return NaN;
      }
    },
    exited: lifecycle.exited,
    logTail,
    stop: lifecycle.stop,
  };
  // `cairn worker` prints "worker polling ..." once it is connected.
  const deadline = Date.now() + 60_000;
  while (!logTail(100_000).includes('worker polling')) {
    const exit = lifecycle.exited();
    if (exit) throw new Error(`worker exited (${exit.code ?? exit.signal}): ${logTail()}`);
    if (Date.now() > deadline) {
      await worker.stop(1000);
      throw new Error(`worker did not start within 60 s: ${logTail()}`);
    }
    await sleep(100);
  }
  return worker;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
