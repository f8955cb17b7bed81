import path from 'node:path';
import type { Config } from '../config.js';
import { openDatabase } from '../store/db.js';
import { buildActivityDeps } from '../wiring.js';
import { startWorkers } from '../engine/worker.js';
import { createActivities } from '../../activities/index.js';

/** A worker without the HTTP API, for scaling parsing out to more processes. */
export async function runWorkerOnly(config: Config): Promise<() => Promise<void>> {
  if (!config.temporalAddress) throw new Error('cairn worker needs TEMPORAL_ADDRESS (host:port of the Temporal server)');
  const db = await openDatabase(path.join(config.dataDir, 'cairn.db'));
  const worker = await startWorkers({
    address: config.temporalAddress,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    rootDir: config.rootDir,
    activities: createActivities(buildActivityDeps(config, db)),
  });
  console.log(`worker polling task queue '${config.taskQueue}' on ${config.temporalAddress}`);
  return async () => {
    await worker.stop();
    await db.close();
  };
}
