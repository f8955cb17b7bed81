import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { AgentService } from '../../../src/services/agents.js';
import { AgentSessionService, type AgentRunControl } from '../../../src/services/agent-sessions.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import type { AgentRunInput } from '../../../src/agents/run-types.js';
import type { RunEvents } from '../../../src/events/types.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

/** Begin (with a prologue and a `topic` form field) → Message: a canvas that needs no model. */
const DSL = {
  components: {
    begin: { obj: { component_name: 'Begin', params: { mode: 'conversational', prologue: 'Hello there.', inputs: { topic: { type: 'line', name: 'Topic' } } } }, downstream: ['Message:Out'], upstream: [] },
    'Message:Out': { obj: { component_name: 'Message', params: { content: ['Fine.'] } }, downstream: [], upstream: ['begin'] },
  },
  globals: {},
  history: [],
  path: [],
  retrieval: [],
  graph: { nodes: [{ id: 'begin', data: { name: 'Start' } }, { id: 'Message:Out', data: { name: 'Reply' } }], edges: [] },
};

/** The workflow side: records starts and cancels; `busy` makes the next start find a turn already running. */
class FakeRuns implements AgentRunControl {
  started: AgentRunInput[] = [];
  cancelled: string[] = [];
  busy?: { key: string };
  async startAgentRun(input: AgentRunInput) {
    if (this.busy) return false;
    this.started.push(input);
    return true;
  }
  async cancelAgentRun(_agentId: string, sessionId: string) {
    this.cancelled.push(sessionId);
    return true;
  }
  async agentRunOpen() {
    return false;
  }
  async openAgentRunKey() {
    return this.busy?.key;
  }
  async waitAgentRun() {}
}

/** Run events: only what sessions do with them (dropping the logs of deleted sessions' turns). */
class FakeEvents implements RunEvents {
  removed: string[] = [];
  async publish() {}
  async read() {
    return [];
  }
  async wait() {}
  async remove(keys: string[]) {
    this.removed.push(...keys);
  }
  async purgeOlderThan() {
    return 0;
  }
}

async function refused(call: Promise<unknown>, code: number, message: RegExp): Promise<void> {
  await assert.rejects(call, (err: { status?: number; code?: number; message: string }) => {
    assert.equal(err.status ?? err.code, code, err.message);
    assert.match(err.message, message);
    return true;
  });
}

for (const profile of testProfiles()) describe(`AgentSessionService: sessions and the turns they start [${profile}]`, () => {
  let db: MetaDb;
  let store: MetaStore;
  let runs: FakeRuns;
  let events: FakeEvents;
  let sessions: AgentSessionService;
  let agentId: string;
  const owner = tenantPrincipal('a'.repeat(32));
  const stranger = tenantPrincipal('b'.repeat(32));

  beforeEach(async () => {
    db = await openTestMetaDb(profile);
    store = new MetaStore(db);
    const agents = new AgentService(store);
    runs = new FakeRuns();
    events = new FakeEvents();
    sessions = new AgentSessionService(store, agents, runs, events);
    agentId = ((await agents.create(owner, { title: 'helper', dsl: DSL })) as { id: string }).id;
  });
  afterEach(() => db.close());

  it("opens a session with the agent's prologue as its first message, and fills the Begin form from keyword values", async () => {
    const session = await sessions.create(owner, agentId, { name: 'first', topic: 'rivers' });
    assert.equal(session.name, 'first');
    assert.deepEqual((session.message as { role: string; content: string }[]).map((m) => [m.role, m.content]), [['assistant', 'Hello there.']]);
    const begin = (session.dsl as typeof DSL).components.begin.obj.params.inputs.topic as { value?: unknown };
    assert.equal(begin.value, 'rivers');
  });

  it("a stranger cannot open, read, list or stop another tenant's sessions: each is a 404", async () => {
    const session = await sessions.create(owner, agentId, {});
    await refused(sessions.create(stranger, agentId, {}), 404, /not found/);
    await refused(sessions.detail(stranger, agentId, session.id as string), 404, /not found/);
    await refused(sessions.list(stranger, agentId, { page: 1, page_size: 10, orderby: 'create_time', desc: true }), 404, /not found/);
    await refused(sessions.cancel(stranger, session.id as string), 404, new RegExp(`Task '${session.id}' not found`));
    assert.deepEqual(runs.cancelled, [], 'nothing was stopped');
  });

  it('a turn runs the canvas without its editor graph, passing the node names, the question and the user', async () => {
    const session = await sessions.create(owner, agentId, {});
    const turn = await sessions.startTurn(owner, { agent_id: agentId, session_id: session.id as string, query: 'How deep is the Nile?', user_id: 'end-user' });
    assert.equal(turn.sessionId, session.id);
    const [run] = runs.started;
    assert.equal(run!.runKey, turn.messageId);
    assert.equal(run!.tenantId, owner.tenantId);
    assert.equal('graph' in run!.canvas, false);
    assert.deepEqual(run!.names, { begin: 'Start', 'Message:Out': 'Reply' });
    assert.deepEqual({ query: run!.request.query, userId: run!.request.userId }, { query: 'How deep is the Nile?', userId: 'end-user' });
  });

  it('a turn without a session opens one named after the question, of source "workflow"', async () => {
    const turn = await sessions.startTurn(owner, { agent_id: agentId, query: 'What is the tallest tree?' });
    const created = await sessions.detail(owner, agentId, turn.sessionId);
    assert.equal(created.name, 'What is the tallest tree?');
    assert.equal(created.source, 'workflow');
  });

  it('refuses a second turn while one of the same session runs (409, naming how to stop it)', async () => {
    const session = await sessions.create(owner, agentId, {});
    runs.busy = { key: 'still-running' };
    await refused(sessions.startTurn(owner, { agent_id: agentId, session_id: session.id as string, query: 'again' }), 409, /is still running: .*POST \/api\/v1\/tasks\/.*\/cancel/);
  });

  it("refuses a turn naming another agent's session, and an unknown session, without starting anything", async () => {
    const other = ((await new AgentService(store).create(owner, { title: 'other', dsl: DSL })) as { id: string }).id;
    const session = await sessions.create(owner, other, {});
    await refused(sessions.startTurn(owner, { agent_id: agentId, session_id: session.id as string }), 400, /Session does not belong to the requested agent/);
    await refused(sessions.startTurn(owner, { agent_id: agentId, session_id: 'f'.repeat(32) }), 404, /Session 'f{32}' not found/);
    await refused(sessions.startTurn(owner, { agent_id: '' }), 400, /`agent_id` is required/);
    assert.deepEqual(runs.started, []);
  });

  it('deleting sessions drops their turns’ event logs too, and reports ids it could not delete', async () => {
    const session = await sessions.create(owner, agentId, {});
    const result = await sessions.delete(owner, agentId, [session.id as string, 'f'.repeat(32)], false);
    assert.equal(result.success_count, 1);
    assert.equal(result.errors?.length, 1);
    await refused(sessions.detail(owner, agentId, session.id as string), 404, /not found/);
    const opening = (session.message as { id: string }[])[0]!.id;
    assert.deepEqual(events.removed, [opening]);
  });

  it('lists sessions a page at a time, with the total of all of them', async () => {
    for (const name of ['a', 'b', 'c']) await sessions.create(owner, agentId, { name });
    const page = await sessions.list(owner, agentId, { page: 1, page_size: 2, orderby: 'create_time', desc: true, dsl: false });
    assert.equal(page.total, 3);
    assert.equal(page.sessions.length, 2);
    assert.equal('dsl' in page.sessions[0]!, false, 'dsl=false leaves the canvas out');
  });

  it('stopping is by session id and idempotent', async () => {
    const session = await sessions.create(owner, agentId, {});
    assert.deepEqual(await sessions.cancel(owner, session.id as string), { cancelled: true });
    assert.deepEqual(runs.cancelled, [session.id]);
  });
});
