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
 * Histories recorded from live runs (test/fixtures/histories/record.ts): v1 = four steps, v2 = two. Replaying
 * them proves runs started by older code still finish; the steps new runs take are proven live in
 * test/integration/parse-document-steps.test.ts.
 */
const recorded = fs.readdirSync(dir).filter((f) => /^parse-document-.*\.json$/.test(f)).sort();

function history(file: string) {
  return historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));
}

describe('parseDocument replays every recorded history', function () {
  this.timeout(120_000);
  before(async () => {
    installRuntimeOnce();
    if (bundleIsStale(root)) await writeWorkflowBundle(root);
  });

  it('has histories of both shapes: DONE, with keywords, FAIL and CANCEL', () => {
    for (const shape of ['v1', 'v2']) {
      for (const end of ['done', 'enriched', 'fail', 'cancel']) assert.ok(recorded.includes(`parse-document-${shape}-${end}.json`), `${shape}-${end}`);
    }
  });

  for (const file of recorded) {
    it(`replays ${file} without a nondeterminism error`, async () => {
      await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath(root) } }, history(file), file);
    });
  }
});
