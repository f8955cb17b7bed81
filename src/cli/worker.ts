import type { Config } from '../config.js';
import { openBackends } from '../wiring.js';
import { markChildrenOf } from '../engine/orphaned-children.js';
import { describeQueues, startWorkers } from '../engine/worker.js';
import { roleActivities } from '../../activities/roles.js';

export interface WorkerOnly {
  /** Settles when a Temporal worker stops on its own (lost server, bad bundle): the process should exit. */
  failed: Promise<unknown>;
  stop(): Promise<void>;
}

/** Temporal workers without the HTTP API, polling the task queues of `config.workerRoles`. */
export async function runWorkerOnly(config: Config): Promise<WorkerOnly> {
  if (!config.temporalAddress) throw new Error('cairn worker needs TEMPORAL_ADDRESS (host:port of the Temporal server)');
  // Its children carry its mark: a `cairn start` on the same data dir stops them if this process dies.
  markChildrenOf(config.dataDir);
  const backends = await openBackends(config);
  let fail: (err: unknown) => void = () => {};
  const failed = new Promise<unknown>((resolve) => (fail = resolve));
  const workers = await startWorkers({
    address: config.temporalAddress,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    rootDir: config.rootDir,
    roles: config.workerRoles,
    workflowStackTraces: config.workflowStackTraces,
    workflowDeadlockDetection: config.workflowDeadlockDetection,
    parserProcesses: config.parsing.ceilings.processes,
    parserWaitingFiles: config.parsing.ceilings.waitingFiles,
    activitiesOf: (role) => roleActivities(role, backends),
    onFatal: (err) => fail(err),
  }).catch(async (err: unknown) => {
    await backends.close();
    throw err;
  });
  console.log(`worker polling task queues ${describeQueues(workers.queues)} on ${config.temporalAddress}`);
  return {
    failed,
    async stop() {
      await workers.stop();
      await backends.close();
    },
  };
}
