/**
 * What the Temporal dev server's CPU is spent on (prints numbers; not a timed test).
 *
 *   npx tsx bench/ingest/temporal-cost.ts [--workflows N] [--idle SECONDS] [--heartbeat-seconds S] [--pollers N]
 *                                         [--dev-arg ARG]...
 *
 * Starts a dev server as Cairn does (src/engine/dev-server.ts: file database, WAL, GOGC) and, in this
 * process, workers laid out as `cairn start` lays them out (startWorkers: parse, its extraction queue,
 * agents, memory), then measures the server's CPU (and this process's: the SDK's side) for:
 *   - idle without workers, and idle with the workers' pollers waiting;
 *   - N empty workflows (start, one workflow task, close);
 *   - N workflows of parseDocument's shape (an activity on the extraction queue, one on the workflow's queue),
 *     and N of parseDocument itself (in the bundle of all Cairn's workflows) with steps that answer at once;
 *   - heartbeats: 16 activities heartbeating every second for S seconds, with the SDK's throttle set by a
 *     heartbeat timeout of 2 s (a heartbeat sent every 1.6 s) and of 10 s (every 8 s, parse's setting);
 *     `--heartbeat-seconds 0` skips them.
 * Each figure is the CPU above the idle rate of the same layout. `--pollers N` caps the workflow and
 * activity pollers of every worker (the SDK's default is up to 10 each); `--dev-arg` passes an argument to
 * `temporal server start-dev` (repeatable), e.g. `--dev-arg --dynamic-config-value --dev-arg K=V`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Context, heartbeat } from '@temporalio/activity';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { startDevServer } from '../../src/engine/dev-server.js';
import { installRuntimeOnce } from '../../src/engine/worker.js';
import { findDevServer, processCpuSeconds } from '../processes.js';
import type { StepsInput } from './temporal-cost-workflows.js';

function argument(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} needs a non-negative number, got ${process.argv[i + 1]}`);
  return n;
}

const devArgs = process.argv.flatMap((a, i) => (a === '--dev-arg' ? [process.argv[i + 1]!] : []));
const opts = {
  workflows: argument('workflows', 100),
  idleSec: argument('idle', 15),
  heartbeatSec: argument('heartbeat-seconds', 30),
  pollers: argument('pollers', 0),
};

/** Waits `ms` while heartbeating every second, as parse's keepAlive does. */
const activities = {
  /** parseDocument's two steps (Cairn's own workflow bundle), answering at once. */
  async extractAndChunk() {
    return { chunksKey: 'k', chunks: 1, tokens: 1, enrich: { keywords: 0, questions: 0 }, pages: 1, sections: 1 };
  },
  async embedAndIndex() {
    return { chunks: 1, tokens: 1, raptor: false, graph: false };
  },
  async step(ms: number): Promise<void> {
    if (ms <= 0) return;
    const end = Date.now() + ms;
    const signal = Context.current().cancellationSignal;
    while (Date.now() < end && !signal.aborted) {
      heartbeat();
      await new Promise((r) => setTimeout(r, Math.min(1000, end - Date.now())));
    }
  },
};
export type CostActivities = typeof activities;

interface Meter {
  server: number;
  own: number;
  at: number;
}

async function main(): Promise<void> {
  console.log(`Temporal dev server cost: node ${process.version}, ${os.availableParallelism()} CPUs, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-temporal-cost-'));
  const rootDir = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
  const dev = await startDevServer({ rootDir, dbFile: path.join(dir, 'temporal.db'), port: 0, extraArgs: devArgs }).catch((err: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const serverPid = findDevServer(process.pid);
  if (!serverPid) throw new Error('dev server process not found');
  const workers: { worker: Worker; running: Promise<void>; connection: NativeConnection }[] = [];
  try {
    installRuntimeOnce();
    const connection = await Connection.connect({ address: dev.address });
    const client = new Client({ connection, namespace: 'default' });
    const meter = (): Meter => {
      const u = process.cpuUsage();
      return { server: processCpuSeconds(serverPid), own: (u.user + u.system) / 1e6, at: performance.now() };
    };
    const since = (m: Meter) => {
      const now = meter();
      return { server: now.server - m.server, own: now.own - m.own, seconds: (now.at - m.at) / 1000 };
    };
    const idleRate = async (label: string) => {
      const m = meter();
      await sleep(opts.idleSec * 1000);
      const d = since(m);
      console.log(`${label.padEnd(52)} server ${ms(d.server / d.seconds)} CPU-ms/s, this process ${ms(d.own / d.seconds)} CPU-ms/s`);
      return { server: d.server / d.seconds, own: d.own / d.seconds };
    };

    const idleBare = await idleRate(`idle, no worker (${opts.idleSec} s)`);

    const taskQueue = 'cost';
    const bundle = (workflowsPath: string) =>
      bundleWorkflowCode({ workflowsPath, logger: { info() {}, warn: console.warn, error: console.error, debug() {}, trace() {}, log() {} } });
    // Cairn's bundle (every workflow) beside the bench's own: parseDocument runs in it.
    const { code } = await bundle(path.join(rootDir, 'bench', 'ingest', 'temporal-cost-all-workflows.ts'));
    const pollers = opts.pollers ? { maxConcurrentWorkflowTaskPolls: Math.max(2, opts.pollers), maxConcurrentActivityTaskPolls: opts.pollers } : {};
    // As startWorkers lays them out for `cairn start`: parse (and its extraction queue), agents, memory.
    const layout = [
      { queue: taskQueue, workflows: true, slots: 16 },
      { queue: `${taskQueue}-extract`, workflows: false, slots: 3 },
      { queue: `${taskQueue}-agents`, workflows: true, slots: 64, throttle: '300 milliseconds' },
      { queue: `${taskQueue}-memory`, workflows: true, slots: 16 },
    ];
    for (const w of layout) {
      const nc = await NativeConnection.connect({ address: dev.address });
      const worker = await Worker.create({
        connection: nc,
        namespace: 'default',
        taskQueue: w.queue,
        ...(w.workflows ? { workflowBundle: { code } } : {}),
        activities,
        maxConcurrentActivityTaskExecutions: w.slots,
        ...(w.throttle ? { maxHeartbeatThrottleInterval: w.throttle as '1s' } : {}),
        ...(w.workflows ? pollers : { ...pollers, maxConcurrentWorkflowTaskPolls: undefined }),
      });
      workers.push({ worker, connection: nc, running: worker.run() });
    }
    await sleep(3000);
    const idle = await idleRate(`idle, Cairn's 4 workers polling${opts.pollers ? ` (${opts.pollers} pollers each)` : ''} (${opts.idleSec} s)`);

    let batch = 0;
    /** Runs n workflows at once (starts 20 at a time, as a parse request of many documents does) and reports their cost above idle. */
    const measure = async (label: string, n: number, workflowType: string, args: unknown[], per: (n: number) => { count: number; unit: string }) => {
      batch++;
      const m = meter();
      const handles = [];
      for (let i = 0; i < n; i += 20) {
        handles.push(...(await Promise.all(Array.from({ length: Math.min(20, n - i) }, (_, j) => client.workflow.start(workflowType, { taskQueue, workflowId: `b${batch}-${i + j}`, args })))));
      }
      await Promise.all(handles.map((h) => h.result()));
      const busy = since(m);
      // What the server still does after the last result (closing, visibility, timers), at idle's rate once done.
      await sleep(3000);
      const d = since(m);
      const server = d.server - idle.server * d.seconds;
      const own = d.own - idle.own * d.seconds;
      const { count, unit } = per(n);
      console.log(
        `${label.padEnd(52)} ${busy.seconds.toFixed(1).padStart(5)} s: server ${server.toFixed(2)} CPU-s above idle = ${ms(server / count)} CPU-ms per ${unit}; ` +
          `this process ${own.toFixed(2)} CPU-s = ${ms(own / count)} CPU-ms per ${unit}`,
      );
      return { server, own };
    };

    const N = opts.workflows;
    const perWorkflow = (n: number) => ({ count: n, unit: 'workflow' });
    await measure(`${N} empty workflows`, N, 'emptyWorkflow', [], perWorkflow);
    const steps = (input: Partial<StepsInput>): StepsInput[] => [{ stepMs: 0, extractQueue: true, ...input }];
    await measure(`${N} workflows of 2 activities (extract queue + own)`, N, 'twoStepsWorkflow', steps({}), perWorkflow);
    await measure(`${N} workflows of 2 activities, same queue`, N, 'twoStepsWorkflow', steps({ extractQueue: false }), perWorkflow);
    await measure(`${N} workflows of 2 activities, heartbeat timeout 10 s`, N, 'twoStepsWorkflow', steps({ heartbeatTimeout: '10 seconds' }), perWorkflow);
    await measure(`${N} parseDocument (Cairn's workflow, steps answer at once)`, N, 'parseDocument', [{ documentId: 'd', datasetId: 'ds', runSeq: 1 }], perWorkflow);

    // Heartbeats: 16 activities at once (the parse worker's slots), each heartbeating every second; the SDK
    // sends one every 0.8 x heartbeat timeout at most.
    const hbMs = opts.heartbeatSec * 1000;
    for (const timeout of opts.heartbeatSec > 0 ? [2, 10] : []) {
      const sent = 16 * 2 * Math.floor(hbMs / 1000 / (0.8 * timeout)); // two steps per workflow, after the first (immediate) one
      await measure(
        `16 workflows, 2 x ${opts.heartbeatSec} s steps, heartbeat timeout ${timeout} s`,
        16,
        'twoStepsWorkflow',
        steps({ stepMs: hbMs, heartbeatTimeout: `${timeout} seconds`, extractQueue: false }),
        () => ({ count: Math.max(1, sent), unit: `heartbeat (~${sent} sent)` }),
      );
    }
    console.log(`(idle rates: no worker ${ms(idleBare.server)} CPU-ms/s, with workers ${ms(idle.server)} CPU-ms/s on the server)`);
    await connection.close();
  } finally {
    for (const w of workers) w.worker.shutdown();
    await Promise.all(workers.map((w) => w.running.catch(() => undefined)));
    for (const w of workers) await w.connection.close();
    await dev.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const ms = (seconds: number) => (1000 * seconds).toFixed(1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
