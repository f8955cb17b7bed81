import assert from 'node:assert/strict';
import { worthLogging } from '../../../src/engine/worker.js';

describe("the Temporal SDK's log at start", () => {
  it("drops the warning about the extraction queue's worker polling activities only (by design, not a fault)", () => {
    assert.equal(worthLogging({ level: 'WARN', message: 'No workflows registered, not polling for workflow tasks' }), false);
  });

  it('keeps every other warning and every error', () => {
    assert.equal(worthLogging({ level: 'WARN', message: 'Activity heartbeat timed out' }), true);
    assert.equal(worthLogging({ level: 'ERROR', message: 'No workflows registered, not polling for workflow tasks' }), true);
  });
});
