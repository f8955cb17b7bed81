import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { agentTaskQueue } from './task-queues.js';
import { bundleIsStale, workflowBundlePath, writeWorkflowBundle } from './bundle-workflows.js';

export interface RunningWorker {
  stop(): Promise<void>;
}

/** Starts a worker on the task queue with the pre-bundled workflow code (re-bundled only when stale). */
let runtimeInstalled = false;

/** The SDK logs to the console; only its warnings are worth an operator's attention. */
export function installRuntimeOnce(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by someone else in this process: keep theirs.
  }
}

export async function startWorker(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  rootDir: string;
  activities: object;
  maxConcurrentActivities?: number;
  /** Upper bound between heartbeats sent to the server (cancellation arrives with their answers). */
  maxHeartbeatThrottleInterval?: string;
  onFatal?: (err: unknown) => void;
}): Promise<RunningWorker> {
  installRuntimeOnce();
  if (bundleIsStale(opts.rootDir)) await writeWorkflowBundle(opts.rootDir);
  const connection = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    workflowBundle: { codePath: workflowBundlePath(opts.rootDir) },
    activities: opts.activities,
    shutdownGraceTime: '5 seconds',
    // Parse steps are CPU-bound on a few threads: more concurrent activities only queue inside them and
    // starve the short steps (chunk, index, bookkeeping) of slots.
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities ?? 16,
    ...(opts.maxHeartbeatThrottleInterval ? { maxHeartbeatThrottleInterval: opts.maxHeartbeatThrottleInterval as '1s' } : {}),
  });
  const running = worker.run().catch((err) => opts.onFatal?.(err));
  return {
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

/**
 * The worker roles of a Cairn process: parsing and other long work on the main queue, agent runs on
 * their own queue (heartbeats at least every 300 ms, so a stop reaches a model stream at once).
 */
export async function startWorkers(opts: Parameters<typeof startWorker>[0]): Promise<RunningWorker> {
  const main = await startWorker(opts);
  const agents = await startWorker({ ...opts, taskQueue: agentTaskQueue(opts.taskQueue), maxConcurrentActivities: 64, maxHeartbeatThrottleInterval: '300 milliseconds' }).catch(async (err) => {
    await main.stop();
    throw err;
  });
  return {
    async stop() {
      await Promise.all([main.stop(), agents.stop()]);
    },
  };
}
