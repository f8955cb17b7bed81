import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadConfig, type Config } from '../../src/config.js';
import { startDevServer, type DevServer } from '../../src/engine/dev-server.js';
import { WORKER_ROLES, roleTaskQueue, workflowIds, type WorkerRole } from '../../src/engine/task-queues.js';
import { Api, eventually } from './client.js';
import { adminKeyOf, cairnEnv, runCairn, startCairnProcess, type CairnProcess } from './cairn-process.js';
import { startWorkerProcess, type WorkerProcess } from './worker-process.js';
import { upload, waitForRun } from './documents-helpers.js';
import { createAgent, messageCanvas } from './agent-helpers.js';

/**
 * The scale-out process split on one machine: an API replica (`cairn start --no-worker`) and `cairn
 * worker` processes limited to some queue roles, all on one Temporal dev server and one data dir.
 */
describe('processes apart: cairn start --no-worker and cairn worker --queues', function () {
  this.timeout(300_000);
  const taskQueue = `cairn-roles-${process.pid}`;
  let dataDir: string;
  let temporal: DevServer;
  let connection: Connection;
  let client: Client;
  let apiProcess: CairnProcess;
  let api: Api;
  let config: Config;
  const workers: WorkerProcess[] = [];

  /** The workers polling a role's queue right now, by the identity each reports (for workflow tasks, or activity tasks). */
  async function pollers(role: WorkerRole, kind: 'workflow' | 'activity'): Promise<string[]> {
    const res = await client.workflowService.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: roleTaskQueue(role, taskQueue), kind: 1 },
      taskQueueType: kind === 'workflow' ? 1 : 2,
    });
    return (res.pollers ?? []).map((p) => p.identity ?? '');
  }

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-roles-'));
    const rootDir = loadConfig().rootDir;
    temporal = await startDevServer({ rootDir, dbFile: path.join(dataDir, 'temporal.db'), port: 0 });
    connection = await Connection.connect({ address: temporal.address });
    client = new Client({ connection });
    const shared = { TEMPORAL_ADDRESS: temporal.address, CAIRN_TASK_QUEUE: taskQueue };
    apiProcess = await startCairnProcess(dataDir, undefined, { args: ['--no-worker'], env: shared });
    api = new Api(apiProcess.url, adminKeyOf(dataDir));
    config = loadConfig({ ...cairnEnv(dataDir), ...shared });
  });

  after(async () => {
    for (const w of workers) await w.stop();
    await apiProcess?.stop();
    await connection?.close();
    await temporal?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('an API started with --no-worker polls no task queue', async () => {
    assert.equal((await api.get('/system/healthz')).status, 200, 'the API serves, Temporal reachable');
    for (const role of WORKER_ROLES) {
      assert.deepEqual(await pollers(role, 'workflow'), [], `nobody polls the ${role} queue`);
      assert.deepEqual(await pollers(role, 'activity'), [], `nobody polls the ${role} queue's activities`);
    }
  });

  it('a worker started with --queues parse polls only the parse queue, and documents parse on it', async () => {
    const worker = await startWorkerProcess(config, temporal.address, {}, ['--queues', 'parse']);
    workers.push(worker);
    assert.match(worker.output(), new RegExp(`worker polling task queues '${taskQueue}' \\(parse\\) on `));
    await eventually(async () => (await pollers('parse', 'workflow')).length > 0 && (await pollers('parse', 'activity')).length > 0, 30_000);
    assert.deepEqual(await pollers('agents', 'workflow'), []);
    assert.deepEqual(await pollers('memory', 'activity'), []);

    const ds = (await api.post('/datasets', { name: `roles-${Date.now()}` })).body.data;
    const up = await upload(api, ds.id, [{ name: 'cairns.txt', bytes: Buffer.from('A cairn is a human-made pile of stones.\nHikers use cairns to mark trails.') }]);
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const docId = up.body.data[0].id;
    assert.equal((await api.post(`/datasets/${ds.id}/chunks`, { document_ids: [docId] })).status, 200);
    const doc = await waitForRun(api, ds.id, docId);
    assert.equal(doc.run, 'DONE', doc.progress_msg);
    assert.ok(doc.chunk_count > 0);
  });

  it('an agent turn waits in its queue while no worker polls agents, and completes once one starts', async () => {
    const agentId = await createAgent(api, messageCanvas('Cairns mark the trail.'));
    const session = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    let settled = false;
    const turn = api.post('/agents/chat/completions', { agent_id: agentId, session_id: session.id, query: 'what marks the trail?', stream: false }).finally(() => (settled = true));

    const handle = client.workflow.getHandle(workflowIds.agentRun(agentId, session.id));
    const queued = await eventually(async () => handle.describe().catch(() => undefined), 30_000);
    assert.equal(queued.taskQueue, roleTaskQueue('agents', taskQueue));
    // The parse worker polls all the while: it would have taken the turn's first workflow task within a second.
    await new Promise((r) => setTimeout(r, 4000));
    const waiting = await handle.describe();
    assert.equal(waiting.status.name, 'RUNNING');
    assert.equal(waiting.historyLength, 2, 'only WorkflowExecutionStarted and WorkflowTaskScheduled: no worker took it');
    assert.equal(settled, false, 'the caller is still waiting for the answer');

    const agentsWorker = await startWorkerProcess(config, temporal.address, {}, ['--queues', 'agents']);
    workers.push(agentsWorker);
    assert.match(agentsWorker.output(), new RegExp(`worker polling task queues '${taskQueue}-agents' \\(agents\\) on `));
    const res = await turn;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.code, 0, JSON.stringify(res.body));
    assert.match(JSON.stringify(res.body.data), /Cairns mark the trail\./);
    // The answer is recorded just before the workflow closes.
    await eventually(async () => (await handle.describe()).status.name === 'COMPLETED', 30_000);
  });

  it('refuses unknown arguments and roles with a usage error (exit 2) naming the valid ones', async () => {
    const env = cairnEnv(dataDir);
    const start = await runCairn(['start', '--no-workers'], env);
    assert.equal(start.code, 2);
    assert.match(start.stderr, /cairn start: unknown argument '--no-workers' \(accepted: --no-worker\)/);
    assert.match(start.stderr, /usage: cairn <command>/);

    const worker = await runCairn(['worker', '--queues', 'parse,ocr'], { ...env, TEMPORAL_ADDRESS: temporal.address });
    assert.equal(worker.code, 2);
    assert.match(worker.stderr, /unknown worker role 'ocr'; valid roles are parse, agents, memory/);

    const fromEnv = await runCairn(['worker'], { ...env, TEMPORAL_ADDRESS: temporal.address, CAIRN_WORKER_QUEUES: 'agent' });
    assert.equal(fromEnv.code, 1);
    assert.match(fromEnv.stderr, /invalid configuration: CAIRN_WORKER_QUEUES="agent": unknown worker role 'agent'; valid roles are parse, agents, memory/);

    const ignored = await runCairn(['start', '--no-worker'], { ...env, CAIRN_WORKER_QUEUES: 'parse' });
    assert.equal(ignored.code, 2);
    assert.match(ignored.stderr, /CAIRN_WORKER_QUEUES chooses the queues of in-process workers, but this API runs none/);
  });
});
