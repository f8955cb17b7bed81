import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import type { AgentRunRow, AgentRunStepRow } from '../../../src/store/agent-runs.js';
import { newId } from '../../../src/ids.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

function runRow(sessionId: string, patch: Partial<AgentRunRow> = {}): AgentRunRow {
  return {
    id: newId(), agent_id: newId(), session_id: sessionId, tenant_id: newId(), status: 'running', trigger: 'completion', request: '{"query":"q"}',
    replay_of: null, from_component: null, error: null, start_time: 1_700_000_000_123, end_time: null, ...patch,
  };
}

function step(runId: string, index: number, componentId: string): AgentRunStepRow {
  return {
    run_id: runId, step_index: index, component_id: componentId, component_name: componentId, component_type: 'LLM', status: 'finished', reused: 0,
    started_at: 1_700_000_000_200 + index, duration: 0.5, inputs: '{}', outputs: JSON.stringify({ content: componentId }), error: null, trace: '[]', reference: null,
  };
}

for (const profile of testProfiles()) {
  describe(`agent run records [${profile}]`, () => {
    let db: MetaDb;
    let store: MetaStore;

    before(async () => {
      db = await openTestMetaDb(profile);
      store = new MetaStore(db);
    });
    after(() => db.close());

    it('an end written twice (a retried local activity) leaves one run with one set of steps', async () => {
      const sessionId = newId();
      const row = runRow(sessionId);
      await store.agentRuns.started(row);
      const ended = { ...row, status: 'finished' as const, end_time: row.start_time + 900 };
      await store.agentRuns.ended({ ...ended, start_time: 1_700_000_000_000 }, [step(row.id, 0, 'begin'), step(row.id, 1, 'LLM:a')]);
      await store.agentRuns.ended({ ...ended, start_time: 1_700_000_000_000 }, [step(row.id, 0, 'begin'), step(row.id, 1, 'LLM:a')]);
      assert.equal(await store.agentRuns.countOfSession(sessionId), 1);
      const stored = await store.agentRuns.byId(row.id);
      assert.equal(stored?.status, 'finished');
      assert.equal(Number(stored?.start_time), row.start_time, 'the start written as the run began (with milliseconds) is kept');
      assert.deepEqual((await store.agentRuns.steps([row.id])).map((s) => s.component_id), ['begin', 'LLM:a']);
    });

    it('a start recorded after the end (a very short turn) changes nothing', async () => {
      const sessionId = newId();
      const row = runRow(sessionId, { status: 'finished', end_time: 1_700_000_001_000 });
      await store.agentRuns.ended(row, [step(row.id, 0, 'begin')]);
      await store.agentRuns.started({ ...row, status: 'running', end_time: null });
      assert.equal((await store.agentRuns.byId(row.id))?.status, 'finished');
    });

    it("lists a session's runs newest first, and deleting the session deletes its runs and steps", async () => {
      const sessionId = newId();
      const older = runRow(sessionId, { start_time: 1_000 });
      const newer = runRow(sessionId, { start_time: 2_000 });
      await store.agentRuns.ended(older, [step(older.id, 0, 'begin')]);
      await store.agentRuns.ended(newer, [step(newer.id, 0, 'begin')]);
      assert.deepEqual((await store.agentRuns.ofSession(sessionId, 0, 10)).map((r) => r.id), [newer.id, older.id]);
      assert.deepEqual((await store.agentRuns.ofSession(sessionId, 1, 10)).map((r) => r.id), [older.id]);
      await store.agentRuns.deleteSessions([sessionId]);
      assert.equal(await store.agentRuns.countOfSession(sessionId), 0);
      assert.deepEqual(await store.agentRuns.steps([older.id, newer.id]), []);
    });
  });
}
