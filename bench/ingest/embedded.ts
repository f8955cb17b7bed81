/**
 * `cairn start` as users run it (`make run`): one process with the API and the worker, which starts its
 * own Temporal dev server as a child. The benchmark's `--embedded` mode measures this installation: its
 * memory is the figure issue 17 sets a bound on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../../src/engine/dev-server.js';
import { bundleIsStale, writeWorkflowBundle } from '../../src/engine/bundle-workflows.js';
import { compiledEntry } from '../../bin/compiled.js';
import { childLifecycle } from './child-lifecycle.js';

export interface EmbeddedCairn {
  child: ChildProcess;
  url: string;
  adminKey: string;
  temporalAddress: string;
  exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  logTail(chars?: number): string;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** Which of Cairn's process entries run compiled JavaScript (dist/node/) rather than TypeScript through tsx. */
  compiled: Record<string, boolean>;
}

const ENTRIES = { 'cairn start': 'src/cli/main.ts', 'embedding process': 'src/models/builtin/embedding-process.ts', 'parser process': 'src/parsing/parser-process.ts' };

/** Starts `cairn start` on `dataDir`; `env` adds the profile's backends (bench/profile.ts), `nodeArgs` go to its node (e.g. --cpu-prof). */
export async function startEmbeddedCairn(rootDir: string, dataDir: string, taskQueue: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<EmbeddedCairn> {
  // As `make run` has it (make install): the bundle is current before Cairn starts. Otherwise the worker
  // writes it at start from a short-lived child process (~300 MB for a few seconds), which would show
  // among the run's children.
  if (bundleIsStale(rootDir)) await writeWorkflowBundle(rootDir);
  const compiled = Object.fromEntries(Object.entries(ENTRIES).map(([name, entry]) => [name, compiledEntry(path.join(rootDir, entry)) !== undefined]));
  const port = await freePort();
  const temporalPort = await freePort();
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ...env,
    CAIRN_DATA_DIR: dataDir,
    PORT: String(port),
    TEMPORAL_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: '0',
    CAIRN_TASK_QUEUE: taskQueue,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    // As `make run` starts it (Makefile).
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
    MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '131072',
  };
  delete childEnv.TEMPORAL_ADDRESS;
  // As `make run` starts it (Makefile), unless the caller chooses the young generation.
  const youngGeneration = nodeArgs.some((a) => a.startsWith('--max-semi-space-size')) ? [] : ['--max-semi-space-size=2'];
  const child = spawn(process.execPath, [...youngGeneration, ...nodeArgs, path.join(rootDir, 'bin', 'cairn.js'), 'start'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString()).slice(-200_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const { exited, stop } = childLifecycle(child, 20_000);
  const deadline = Date.now() + 120_000;
  let url: string | undefined;
  while (!(url = /Cairn is listening on (\S+)/.exec(text)?.[1])) {
    const exit = exited();
    if (exit) throw new Error(`cairn start exited (${exit.code ?? exit.signal}): ${text.slice(-3000)}`);
    if (Date.now() > deadline) {
      await stop(1000);
      throw new Error(`cairn start did not listen within 120 s: ${text.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url,
    adminKey: fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim(),
    temporalAddress: `127.0.0.1:${temporalPort}`,
    exited,
    logTail: (chars = 2000) => text.slice(-chars),
    stop,
    compiled,
  };
}
