import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { bundleIsStale, workflowBundlePath, writeWorkflowBundle } from '../../../src/engine/bundle-workflows.js';
import { installRuntimeOnce } from '../../../src/engine/worker.js';

const root = path.resolve(import.meta.dirname, '..', '..', '..');
const dir = path.join(root, 'test', 'fixtures', 'histories');

/**
 * Histories recorded from live runs (test/fixtures/histories/record.ts): v1 = four steps, v2 = two. Replaying
 * them proves runs started by older code still finish; the steps new runs take are proven live in
 * test/integration/parse-document-steps.test.ts.
 */
const recorded = fs.readdirSync(dir).filter((f) => /^parse-document-.*\.json$/.test(f)).sort();

/** The parts of a history event (its JSON form) the shape check reads. */
interface HistoryEvent {
  eventType: string;
  workflowExecutionStartedEventAttributes?: { workflowType?: { name: string } };
  activityTaskScheduledEventAttributes?: { activityType?: { name: string } };
}

function history(file: string) {
  return historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));
}

describe('parseDocument replays every recorded history', function () {
  this.timeout(120_000);
  before(async () => {
    installRuntimeOnce();
    if (bundleIsStale(root)) await writeWorkflowBundle(root);
  });

  /** What each recorded history must be a run of, so that replaying it covers the path its name claims. */
  const SHAPES: Record<string, { end: string; steps: string[] }> = {
    done: { end: 'COMPLETED', steps: [] },
    enriched: { end: 'COMPLETED', steps: ['enrichChunks'] },
    indexes: { end: 'COMPLETED', steps: ['raptorAfterParse', 'requestGraphAfterParse'] },
    fail: { end: 'COMPLETED', steps: ['markFailed'] },
    cancel: { end: 'CANCELED', steps: ['markCancelled'] },
  };
  const FIRST_STEP: Record<string, string> = { v1: 'extractDocument', v2: 'extractAndChunk' };

  function summary(file: string) {
    const events = (JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { events: HistoryEvent[] }).events;
    const scheduled = events.flatMap((e) => (e.activityTaskScheduledEventAttributes?.activityType ? [e.activityTaskScheduledEventAttributes.activityType.name] : []));
    return {
      type: events[0]!.workflowExecutionStartedEventAttributes?.workflowType?.name,
      end: events.at(-1)!.eventType.replace('EVENT_TYPE_WORKFLOW_EXECUTION_', ''),
      scheduled,
    };
  }

  it('has histories of both shapes (v1: four steps, v2: two), each a parseDocument run that took the path its name says', () => {
    for (const shape of ['v1', 'v2']) {
      for (const end of ['done', 'enriched', 'fail', 'cancel']) assert.ok(recorded.includes(`parse-document-${shape}-${end}.json`), `${shape}-${end}`);
    }
    for (const file of recorded) {
      const [, shape, label] = /^parse-document-(v\d+)-([a-z]+)\.json$/.exec(file)!;
      const expected = SHAPES[label!];
      assert.ok(expected && FIRST_STEP[shape!], `${file}: a label and shape the test knows`);
      const got = summary(file);
      assert.equal(got.type, 'parseDocument', file);
      assert.equal(got.end, expected.end, `${file} ends ${expected.end}`);
      assert.equal(got.scheduled[0], FIRST_STEP[shape!], `${file} starts with ${FIRST_STEP[shape!]}`);
      for (const step of expected.steps) assert.ok(got.scheduled.includes(step), `${file} runs ${step}`);
    }
  });

  it('a history the current code would not produce fails to replay (the replays below can fail)', async () => {
    const file = 'parse-document-v2-done.json';
    const json = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { events: { activityTaskScheduledEventAttributes?: { activityType: { name: string } } }[] };
    const first = json.events.find((e) => e.activityTaskScheduledEventAttributes)!;
    first.activityTaskScheduledEventAttributes!.activityType.name = 'notAnActivityOfParseDocument';
    await assert.rejects(
      Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath(root) } }, historyFromJSON(json), 'tampered'),
      (err: Error) => err instanceof DeterminismViolationError || err.name === 'DeterminismViolationError',
    );
  });

  for (const file of recorded) {
    it(`replays ${file} without a nondeterminism error`, async () => {
      await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath(root) } }, history(file), file);
    });
  }
});
