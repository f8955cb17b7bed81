import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../../config.js';
import type { MetaStore } from '../../store/index.js';
import { startDevServer } from '../../engine/dev-server.js';
import { WORKER_ROLES, roleTaskQueue } from '../../engine/task-queues.js';

/** At most this many runs are named in the refusal. */
const NAMED = 10;

/**
 * Work in progress in the source installation, described for the refusal (empty: nothing runs).
 * Workflow history is not migrated, so a parse, agent run, memory extraction or dataset deletion
 * that is still open would be lost half-way: documents stuck in RUNNING, turns never answered.
 * Two sources are asked: the metadata (documents RUNNING, also when their workflow is gone), and
 * Temporal's open workflows (agent runs leave no trace in the metadata until they end).
 */
export async function runsInProgress(config: Config, store: MetaStore, say: (line: string) => void): Promise<string[]> {
  const found: string[] = [];
  const running = await store.db.kysely
    .selectFrom('documents')
    .select(['id', 'name', 'dataset_id'])
    .where('run', '=', 'RUNNING')
    .orderBy('id')
    .limit(NAMED + 1)
    .execute();
  for (const d of running) found.push(`document ${d.id} (${d.name}) of dataset ${d.dataset_id} is being parsed (RUNNING)`);
  found.push(...(await openWorkflows(config, say)));
  return found;
}

/** Open workflows of this installation: in TEMPORAL_ADDRESS on its task queues, or in the data dir's own dev server database. */
async function openWorkflows(config: Config, say: (line: string) => void): Promise<string[]> {
  if (config.temporalAddress) {
    const queues = WORKER_ROLES.map((role) => roleTaskQueue(role, config.taskQueue));
    const onQueues = queues.map((q) => `TaskQueue = '${q.replace(/'/g, "\\'")}'`).join(' OR ');
    say(`checking Temporal at ${config.temporalAddress} for open workflows on the task queues ${queues.join(', ')}`);
    return listOpen(config.temporalAddress, config.temporalNamespace, `ExecutionStatus = 'Running' AND (${onQueues})`);
  }
  const dbFile = path.join(config.dataDir, 'temporal.db');
  if (!fs.existsSync(dbFile)) {
    say(`no ${dbFile} and no TEMPORAL_ADDRESS: no workflow state to check (if this installation ran on an external Temporal, set TEMPORAL_ADDRESS and CAIRN_TASK_QUEUE as it had them)`);
    return [];
  }
  // The dev server Cairn ran is stopped with it; its state is read through a dev server of our own on the
  // same file (no worker polls it, so nothing runs meanwhile).
  say(`checking ${dbFile} for open workflows (starting a Temporal dev server on it for a moment)`);
  const dev = await startDevServer({ rootDir: config.rootDir, temporalBin: config.temporalBin, dbFile, port: 0 });
  try {
    return await listOpen(dev.address, config.temporalNamespace, `ExecutionStatus = 'Running'`);
  } finally {
    await dev.stop();
  }
}

async function listOpen(address: string, namespace: string, query: string): Promise<string[]> {
  let connection: Connection;
  try {
    connection = await Connection.connect({ address, connectTimeout: 10_000 });
  } catch (err) {
    throw new Error(`cannot check for runs in progress: Temporal at ${address} does not answer (${(err as Error).message}); migrate-to needs it to make sure no workflow is open`);
  }
  try {
    const client = new Client({ connection, namespace });
    const open: string[] = [];
    for await (const wf of client.workflow.list({ query, pageSize: NAMED + 1 })) {
      open.push(`workflow ${wf.workflowId} (${wf.type}) is open`);
      if (open.length > NAMED) break;
    }
    return open;
  } finally {
    await connection.close();
  }
}
