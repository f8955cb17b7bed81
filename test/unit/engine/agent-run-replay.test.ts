import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { bundleIsStale, workflowBundlePath, writeWorkflowBundle } from '../../../src/engine/bundle-workflows.js';
import { installRuntimeOnce } from '../../../src/engine/worker.js';

const root = path.resolve(import.meta.dirname, '..', '..', '..');
const dir = path.join(root, 'test', 'fixtures', 'histories');

/**
 * agentRun histories recorded from live runs of the workflow code before multitask strategies
 * (test/fixtures/histories/record-agent-run.ts, label v1): a finished turn and a stopped one. Replaying
 * them under the current code proves turns in flight during an upgrade still finish; what new runs do
 * (signals, interrupt, continue-as-new) is proven live in test/integration/agents-multitask.test.ts.
 */
const recorded = fs.readdirSync(dir).filter((f) => /^agent-run-.*\.json$/.test(f)).sort();

interface HistoryEvent {
  eventType: string;
  workflowExecutionStartedEventAttributes?: { workflowType?: { name: string } };
  activityTaskScheduledEventAttributes?: { activityType?: { name: string } };
}

function events(file: string): HistoryEvent[] {
  return (JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { events: HistoryEvent[] }).events;
}

describe('agentRun replays the histories recorded before multitask strategies', function () {
  this.timeout(120_000);
  before(async () => {
    installRuntimeOnce();
    if (bundleIsStale(root)) await writeWorkflowBundle(root);
  });

  it('has a finished and a stopped turn, each an agentRun that streamed through agentMessage', () => {
    assert.deepEqual(recorded, ['agent-run-v1-cancel.json', 'agent-run-v1-done.json']);
    for (const [file, end] of [['agent-run-v1-done.json', 'COMPLETED'], ['agent-run-v1-cancel.json', 'CANCELED']] as const) {
      const all = events(file);
      assert.equal(all[0]!.workflowExecutionStartedEventAttributes?.workflowType?.name, 'agentRun');
      assert.equal(all.at(-1)!.eventType, `EVENT_TYPE_WORKFLOW_EXECUTION_${end}`);
      assert.ok(all.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'agentMessage'), file);
    }
  });

  it('a history the current code would not produce fails to replay (the replays below can fail)', async () => {
    const json = JSON.parse(fs.readFileSync(path.join(dir, 'agent-run-v1-done.json'), 'utf8')) as { events: HistoryEvent[] };
    json.events.find((e) => e.activityTaskScheduledEventAttributes)!.activityTaskScheduledEventAttributes!.activityType!.name = 'agentLLM';
    await assert.rejects(Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath(root) } }, historyFromJSON(json), 'tampered'), (err: Error) => err.name === 'DeterminismViolationError');
  });

  for (const file of recorded) {
    it(`replays ${file} without a nondeterminism error`, async () => {
      await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath(root) } }, historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'))), file);
    });
  }
});
