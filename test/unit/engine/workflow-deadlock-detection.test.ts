import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, Worker, type ReplayWorkerOptions, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { installRuntimeOnce } from '../../../src/engine/worker.js';
import { setProcessSetting } from '../../../src/config-schema.js';

const root = path.resolve(import.meta.dirname, '..', '..', '..');

interface Event {
  eventId: string;
  workflowExecutionStartedEventAttributes?: { workflowType: { name: string }; input: { payloads: { data: string }[] } };
  workflowExecutionCompletedEventAttributes?: { workflowTaskCompletedEventId: string };
}

/**
 * A recorded history cut to a run of `spin` (test/fixtures/spin-workflow.ts) with `rounds` as its argument: the
 * workflow started, its one task ran and completed it. Replaying it runs that one long task again.
 */
function spinHistory(rounds: number) {
  const recorded = JSON.parse(fs.readFileSync(path.join(root, 'test/fixtures/histories/agent-run-v1-done.json'), 'utf8')) as { events: Event[] };
  const completed = recorded.events.at(-1)!;
  completed.eventId = '5';
  completed.workflowExecutionCompletedEventAttributes!.workflowTaskCompletedEventId = '4';
  const events = [...recorded.events.slice(0, 4), completed];
  const started = events[0]!.workflowExecutionStartedEventAttributes!;
  started.workflowType.name = 'spin';
  started.input.payloads = [{ ...started.input.payloads[0]!, data: Buffer.from(JSON.stringify(rounds)).toString('base64') }];
  return historyFromJSON({ events });
}

/** Replays the long task with a deadlock timeout far shorter than it: the error, if the SDK enforced the timeout. */
async function replaySpin(bundle: WorkflowBundleWithSourceMap): Promise<Error | undefined> {
  // The SDK reads its deadlock timeout from the options (default 5 s) though its types do not expose it.
  const options: ReplayWorkerOptions & { isolateExecutionTimeout: string } = { workflowBundle: bundle, isolateExecutionTimeout: '100ms' };
  const replayed = Worker.runReplayHistories(options, [{ workflowId: 'spin', history: spinHistory(1e9) }]);
  for await (const result of replayed) return result.error;
  throw new Error('nothing was replayed');
}

/**
 * CAIRN_WORKFLOW_DEADLOCK_DETECTION (docs/operations.md, "Workflow deadlock detection"): Cairn's patch of
 * @temporalio/worker gives calls into workflow code the SDK's deadlock timeout only when it is true.
 */
describe('workflow deadlock detection (CAIRN_WORKFLOW_DEADLOCK_DETECTION)', function () {
  this.timeout(180_000);
  const saved = process.env.CAIRN_WORKFLOW_DEADLOCK_DETECTION;
  let bundle: WorkflowBundleWithSourceMap;

  before(async () => {
    installRuntimeOnce();
    bundle = await bundleWorkflowCode({ workflowsPath: path.join(root, 'test/fixtures/spin-workflow.ts'), logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } });
  });

  after(() => setProcessSetting('CAIRN_WORKFLOW_DEADLOCK_DETECTION', saved ?? 'false'));

  it('off (the default): a workflow task longer than the timeout runs to its end', async () => {
    setProcessSetting('CAIRN_WORKFLOW_DEADLOCK_DETECTION', 'false');
    assert.equal(await replaySpin(bundle), undefined);
  });

  it('on: a workflow task longer than the timeout fails as the SDK reports a deadlock', async () => {
    setProcessSetting('CAIRN_WORKFLOW_DEADLOCK_DETECTION', 'true');
    const error = await replaySpin(bundle);
    assert.ok(error, 'the replay failed');
    assert.match(`${error.message} ${String((error as { cause?: unknown }).cause ?? '')}`, /timed out|deadlock/i);
  });
});
