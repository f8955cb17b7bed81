import type { Config } from '../config.js';
import { openBackends } from '../wiring.js';
import { startWorkers } from '../engine/worker.js';
import { createActivities } from '../../activities/index.js';

/** A worker without the HTTP API, for scaling parsing out to more processes. */
export async function runWorkerOnly(config: Config): Promise<() => Promise<void>> {
  if (!config.temporalAddress) throw new Error('cairn worker needs TEMPORAL_ADDRESS (host:port of the Temporal server)');
  const backends = await openBackends(config);
  const worker = await startWorkers({
    address: config.temporalAddress,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    rootDir: config.rootDir,
    activities: createActivities(backends),
  }).catch(async (err: unknown) => {
    await backends.close();
    throw err;
  });
  console.log(`worker polling task queue '${config.taskQueue}' on ${config.temporalAddress}`);
  return async () => {
    await worker.stop();
    await backends.close();
  };
}
