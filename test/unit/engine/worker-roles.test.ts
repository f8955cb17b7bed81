import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as workflows from '../../../workflows/index.js';
import { createActivities, type ActivityDeps } from '../../../activities/index.js';
import { roleActivities } from '../../../activities/roles.js';
import { loadConfig } from '../../../src/config.js';
import { openBackends, type Backends } from '../../../src/wiring.js';
import { ROLE_WORKFLOWS, WORKER_ROLES, WORKFLOWS, roleOfWorkflow, roleTaskQueue, workflowTaskQueue, type WorkerRole } from '../../../src/engine/task-queues.js';
import { COMPONENT_ACTIVITY } from '../../../src/agents/run-types.js';

const root = path.resolve(import.meta.dirname, '..', '..', '..');
let deps: ActivityDeps;
const activityNames = (role: WorkerRole) => Object.keys(roleActivities(role, deps));
let allActivities: string[];

/** Activity names a workflow's source calls (every activity is called by its name in the workflow code). */
function activitiesCalledBy(workflow: string): string[] {
  const file = fs.readdirSync(path.join(root, 'workflows')).find((f) => f.endsWith('.ts') && f !== 'index.ts' && fs.readFileSync(path.join(root, 'workflows', f), 'utf8').includes(`export async function ${workflow}(`));
  assert.ok(file, `no file in workflows/ defines ${workflow}`);
  const source = fs.readFileSync(path.join(root, 'workflows', file), 'utf8');
  // A workflow that runs agent components calls them through the shared table of their activities.
  const byTable = source.includes('COMPONENT_ACTIVITY') ? Object.values(COMPONENT_ACTIVITY) : [];
  return allActivities.filter((name) => new RegExp(`\\b${name}\\b`).test(source) || (byTable as string[]).includes(name));
}

describe('worker roles', () => {
  let backends: Backends;
  let dataDir: string;
  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-roles-'));
    backends = await openBackends(loadConfig({ CAIRN_DATA_DIR: dataDir }));
    deps = backends;
    allActivities = Object.keys(createActivities(deps));
  });
  after(async () => {
    await backends?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('puts every workflow in exactly one role', () => {
    const exported = Object.keys(workflows).sort();
    assert.deepEqual(Object.values(WORKFLOWS).sort(), exported, 'WORKFLOWS names the exported workflows');
    const assigned = WORKER_ROLES.flatMap((r) => ROLE_WORKFLOWS[r]);
    assert.deepEqual([...assigned].sort(), exported);
  });

  it("registers, on each role's queue, every activity its workflows call", () => {
    for (const role of WORKER_ROLES) {
      for (const workflow of ROLE_WORKFLOWS[role]) {
        const called = activitiesCalledBy(workflow);
        assert.ok(called.length > 0, `${workflow} calls no activity?`);
        assert.deepEqual(called.filter((a) => !activityNames(role).includes(a)), [], `${workflow} runs on the ${role} queue`);
      }
    }
  });

  it('reaches every activity through some role', () => {
    const reachable = new Set(WORKER_ROLES.flatMap(activityNames));
    assert.deepEqual(allActivities.filter((a) => !reachable.has(a)), []);
  });

  it('gives an agents-only worker no parse, dataset or memory activity', () => {
    const agents = activityNames('agents');
    for (const other of activitiesCalledBy(WORKFLOWS.parseDocument).concat(activitiesCalledBy(WORKFLOWS.deleteDatasets), activitiesCalledBy(WORKFLOWS.memoryExtraction))) {
      assert.ok(!agents.includes(other), `${other} is registered for agents`);
    }
    assert.ok(!activityNames('memory').includes('extractDocument'));
    assert.ok(!activityNames('parse').includes('agentLLM'));
  });

  it('derives one task queue per role from CAIRN_TASK_QUEUE; parsing keeps the bare name', () => {
    assert.deepEqual(WORKER_ROLES.map((r) => roleTaskQueue(r, 'cairn')), ['cairn', 'cairn-agents', 'cairn-memory']);
    assert.equal(workflowTaskQueue(WORKFLOWS.memoryExtraction, 'q'), 'q-memory');
    assert.equal(workflowTaskQueue(WORKFLOWS.deleteDatasets, 'q'), 'q');
    assert.equal(roleOfWorkflow(WORKFLOWS.agentRun), 'agents');
  });
});
