import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { WORKER_ROLES, extractTaskQueue, roleTaskQueue, type WorkerRole } from './task-queues.js';
import { workflowBundlePath } from './bundle-workflows.js';
import { ensureWorkflowBundle } from './workflow-bundle-process.js';
import { setProcessSetting } from '../config-schema.js';

export interface RunningWorker {
  stop(): Promise<void>;
}

/** A worker that polls workflow tasks, with the connection it polls on (a client on it can start workflows eagerly). */
interface RunningWorkflowWorker extends RunningWorker {
  connection: NativeConnection;
}

let runtimeInstalled = false;

/**
 * SDK warnings that describe Cairn's design, not a fault: the extraction queue's worker polls activities
 * only (`workflows: false`), and the SDK warns about that at every start.
 */
const EXPECTED_WARNINGS = [/^No workflows registered, not polling for workflow tasks/];

/** Whether an SDK log entry is worth an operator's attention: warnings and errors, less the expected ones. */
export function worthLogging(entry: { level: string; message: string }): boolean {
  if (entry.level !== 'WARN') return true;
  return !EXPECTED_WARNINGS.some((re) => re.test(entry.message));
}

const consoleLogger = new DefaultLogger('WARN');

/** The SDK logs to the console; only its warnings are worth an operator's attention. */
export function installRuntimeOnce(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    const logger = new DefaultLogger('WARN', (entry) => {
      if (worthLogging(entry)) consoleLogger.log(entry.level, entry.message, entry.meta as Record<string, unknown> | undefined);
    });
    Runtime.install({ logger });
  } catch {
    // Already installed by someone else in this process: keep theirs.
  }
}

/**
 * Two choices for the SDK's workflow threads, each made by a patch of @temporalio/worker (patches/, applied by
 * patch-package at npm install) that reads the thread's environment: the SDK's threads copy the environment when
 * they are created, so the choices are written there (setProcessSetting) before Worker.create.
 * - CAIRN_WORKFLOW_STACK_TRACES: record a stack trace for every promise (Temporal's stack-trace query); the
 *   hook cost ~35% of a replayed agent turn's CPU here.
 * - CAIRN_WORKFLOW_DEADLOCK_DETECTION: pass the SDK's deadlock timeout to each call into workflow code; Node
 *   starts and joins a watchdog thread per call, ~35% of a turn's CPU and half its wall time on the thread.
 * docs/operations.md, "Workflow stack traces" and "Workflow deadlock detection".
 */
function chooseWorkflowThreadSettings(opts: { stackTraces: boolean; deadlockDetection: boolean }): void {
  setProcessSetting('CAIRN_WORKFLOW_STACK_TRACES', String(opts.stackTraces));
  setProcessSetting('CAIRN_WORKFLOW_DEADLOCK_DETECTION', String(opts.deadlockDetection));
}

/**
 * Starts a worker on the task queue with the pre-bundled workflow code (re-bundled only when stale, in a
 * child process: ensureWorkflowBundle);
 * `workflows: false` polls activities only.
 */
export async function startWorker(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  rootDir: string;
  activities: object;
  workflows?: boolean;
  maxConcurrentActivities?: number;
  /** Upper bound between heartbeats sent to the server (cancellation arrives with their answers). */
  maxHeartbeatThrottleInterval?: string;
  /** How long a workflow task waits for the worker that ran the workflow's last one before any worker may take it. */
  stickyQueueScheduleToStartTimeout?: string;
  onFatal?: (err: unknown) => void;
  /** CAIRN_WORKFLOW_STACK_TRACES: the stack-trace query, at ~a third of each workflow task's CPU. */
  workflowStackTraces?: boolean;
  /** CAIRN_WORKFLOW_DEADLOCK_DETECTION: the SDK's 5 s deadlock timeout, at ~a third of each workflow task's CPU. */
  workflowDeadlockDetection?: boolean;
}): Promise<RunningWorkflowWorker> {
  installRuntimeOnce();
  const workflows = opts.workflows ?? true;
  chooseWorkflowThreadSettings({ stackTraces: opts.workflowStackTraces ?? false, deadlockDetection: opts.workflowDeadlockDetection ?? true });
  if (workflows) await ensureWorkflowBundle(opts.rootDir);
  const connection = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    ...(workflows ? { workflowBundle: { codePath: workflowBundlePath(opts.rootDir) } } : {}),
    activities: opts.activities,
    shutdownGraceTime: '5 seconds',
    // Parse steps are CPU-bound on a few threads: more concurrent activities only queue inside them and
    // starve the short steps (chunk, index, bookkeeping) of slots.
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities ?? 16,
    ...(opts.maxHeartbeatThrottleInterval ? { maxHeartbeatThrottleInterval: opts.maxHeartbeatThrottleInterval as '1s' } : {}),
    ...(opts.stickyQueueScheduleToStartTimeout ? { stickyQueueScheduleToStartTimeout: opts.stickyQueueScheduleToStartTimeout as '1s' } : {}),
  });
  const running = worker.run().catch((err) => opts.onFatal?.(err));
  return {
    connection,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

/** How each role's worker is tuned. */
const ROLE_OPTIONS: Record<WorkerRole, { maxConcurrentActivities: number; maxHeartbeatThrottleInterval?: string; stickyQueueScheduleToStartTimeout?: string }> = {
  // A cancel reaches a running step with the answer to its next heartbeat: at most a second after it was asked
  // (the SDK's default holds heartbeats back for 0.8 × the heartbeat timeout, 8 s, a stopped graph or RAPTOR job
  // then waited that long on a slow model call).
  parse: { maxConcurrentActivities: 16, maxHeartbeatThrottleInterval: '1 second' },
  // Heartbeats at least every 300 ms, so a stop reaches a model stream at once; model calls mostly wait.
  // A turn's next workflow task waits for the worker that ran the last one (its sticky queue) at most
  // 2 s instead of 10, then any worker takes it: a caller waits that much less after a worker died.
  agents: { maxConcurrentActivities: 64, maxHeartbeatThrottleInterval: '300 milliseconds', stickyQueueScheduleToStartTimeout: '2 seconds' },
  memory: { maxConcurrentActivities: 16, maxHeartbeatThrottleInterval: '1 second' },
};


export interface RunningWorkers extends RunningWorker {
  /** The task queue polled for each role, in WORKER_ROLES order. */
  queues: { role: WorkerRole; queue: string }[];
  /** The connection each role's workflow worker polls on. */
  connections: Partial<Record<WorkerRole, NativeConnection>>;
}

/**
 * One Temporal worker per role on the role's task queue (roleTaskQueue), each registering only the
 * activities `activitiesOf(role)` gives it; the parse role also polls its extraction queue (extractTaskQueue). `cairn start` runs every role in-process; `cairn worker
 * --queues` the chosen ones.
 */
export async function startWorkers(
  opts: Omit<Parameters<typeof startWorker>[0], 'activities' | 'maxConcurrentActivities' | 'maxHeartbeatThrottleInterval' | 'stickyQueueScheduleToStartTimeout'> & {
    roles: readonly WorkerRole[];
    activitiesOf: (role: WorkerRole) => object;
    /** Parser processes per worker process (Config.parsing.ceilings.processes): sizes the extraction queue's slots. */
    parserProcesses: number;
    /** Files that may wait for a parser on top of those being parsed (CAIRN_PARSE_WAITING_FILES). */
    parserWaitingFiles: number;
  },
): Promise<RunningWorkers> {
  if (opts.roles.length === 0) throw new Error(`a worker needs at least one role (${WORKER_ROLES.join(', ')})`);
  const roles = WORKER_ROLES.filter((r) => opts.roles.includes(r));
  const started: RunningWorker[] = [];
  const connections: RunningWorkers['connections'] = {};
  const stopAll = async () => {
    await Promise.all(started.map((w) => w.stop()));
  };
  try {
    for (const role of roles) {
      const queue = roleTaskQueue(role, opts.taskQueue);
      const activities = opts.activitiesOf(role);
      const worker = await startWorker({ ...opts, ...ROLE_OPTIONS[role], taskQueue: queue, activities });
      started.push(worker);
      connections[role] = worker.connection;
      // Extraction slots: a file for each parser process, and CAIRN_PARSE_WAITING_FILES more that wait for their
      // tenant's turn (round robin, docs/parsing-limits.md "Fair parsing"). A waiting file holds no bytes and no
      // parser, only a heartbeat; taking many from Temporal is what lets another tenant's file get ahead of them.
      if (role === 'parse') {
        const slots = opts.parserProcesses + opts.parserWaitingFiles;
        started.push(await startWorker({ ...opts, taskQueue: extractTaskQueue(queue), activities, workflows: false, maxConcurrentActivities: slots }));
      }
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  return { queues: roles.map((role) => ({ role, queue: roleTaskQueue(role, opts.taskQueue) })), connections, stop: stopAll };
}

/** `'cairn' (parse), 'cairn-agents' (agents)`: for the line a worker logs when it starts. */
export function describeQueues(queues: RunningWorkers['queues']): string {
  return queues.map(({ role, queue }) => `'${queue}' (${role})`).join(', ');
}
