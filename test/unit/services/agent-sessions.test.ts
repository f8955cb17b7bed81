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
  /** How many starts to refuse before accepting (a previous turn's workflow still closing). */
  refuse = 0;
  waited: string[] = [];
  async startAgentRun(input: AgentRunInput) {
    if (this.busy) return false;
    if (this.refuse > 0) {
      this.refuse--;
      return false;
    }
    this.started.push(input);
    return true;
  }
  submitted: { input: AgentRunInput; strategy: string }[] = [];
  async submitAgentTurn(input: AgentRunInput, strategy: string) {
    this.submitted.push({ input, strategy });
  }
  async cancelAgentRun(_agentId: string, sessionId: string) {
    this.cancelled.push(sessionId);
    return true;
  }
  async agentRunOpen() {
    return false;
  }
  openKey?: string;
  /** The open workflow never moves on: no worker takes it. */
  stuck = false;
  async openAgentRun() {
    const runKey = this.busy?.key ?? this.openKey;
    return runKey === undefined ? undefined : { runKey, runId: `run-of-${runKey}` };
  }
  async waitAgentRunMovedOn(_agentId: string, sessionId: string, runId: string) {
    this.waited.push(`${sessionId} ${runId}`);
    return !this.stuck;
  }
}

/** Run events: only what sessions do with them (dropping the logs of deleted sessions' turns). */
class FakeEvents implements RunEvents {
  removed: string[] = [];
  async publish() {}
  async read() {
    return [];
  }
  async ended() {
    return false;
  }
  async wait() {}
  async remove(keys: string[]) {
    this.removed.push(...keys);
  }
  async purgeLogs() {
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

  it('a turn with multitask_strategy enqueue, interrupt or rollback is handed to the session workflow with it, never refused', async () => {
    const session = await sessions.create(owner, agentId, {});
    runs.busy = { key: 'still-running' };
    for (const strategy of ['enqueue', 'interrupt', 'rollback'] as const) {
      const turn = await sessions.startTurn(owner, { agent_id: agentId, session_id: session.id as string, query: strategy, multitask_strategy: strategy });
      assert.equal(runs.submitted.at(-1)!.input.runKey, turn.messageId);
      assert.equal(runs.submitted.at(-1)!.strategy, strategy);
    }
    assert.deepEqual(runs.started, [], 'nothing was started past the workflow');
    await refused(sessions.startTurn(owner, { agent_id: agentId, session_id: session.id as string, query: 'x', multitask_strategy: 'reject' }), 409, /still running/);
  });

  it('the same UserFillUp answer twice resumes once: both calls name one turn, the second starts nothing, before and after the first is recorded', async () => {
    const session = await sessions.create(owner, agentId, {});
    const row = (await store.agentSessions.byId(session.id as string))!;
    const pausedTurn = 'c'.repeat(32);
    const paused = [...JSON.parse(row.messages), { id: pausedTurn, role: 'user', content: 'plan', created_at: 1 }, { id: pausedTurn, role: 'assistant', content: 'Tell me more', created_at: 2, status: 'paused' }];
    await store.agentSessions.update(row.id, { messages: JSON.stringify(paused), dsl: JSON.stringify({ ...JSON.parse(row.dsl), paused: true, path: ['begin'] }) });
    const answer = (inputs: Record<string, unknown>) => sessions.startTurn(owner, { agent_id: agentId, session_id: row.id, inputs: inputs as never });
    const first = await answer({ feedback: { type: 'line', value: 'ok' }, extra: { value: 1, type: 'integer' } });
    assert.equal(runs.started.length, 1);
    runs.busy = { key: first.messageId };
    const again = await answer({ extra: { type: 'integer', value: 1 }, feedback: { value: 'ok', type: 'line' } });
    assert.equal(again.messageId, first.messageId, 'the same answer (keys in any order) names the same turn');
    assert.equal(runs.started.length, 1, 'the second call started nothing');
    // The first turn recorded its answer, the session is no longer paused: a late repeat still starts nothing.
    runs.busy = undefined;
    const recorded = [...paused, { id: first.messageId, role: 'assistant', content: 'Thanks', created_at: 3 }];
    await store.agentSessions.update(row.id, { messages: JSON.stringify(recorded), dsl: JSON.stringify({ ...JSON.parse(row.dsl), paused: false }) });
    const late = await answer({ feedback: { type: 'line', value: 'ok' }, extra: { value: 1, type: 'integer' } });
    assert.equal(late.messageId, first.messageId);
    assert.equal(runs.started.length, 1);
    const other = await answer({ feedback: { type: 'line', value: 'something else' } });
    assert.notEqual(other.messageId, first.messageId, 'another answer is a turn of its own');
    assert.equal(runs.started.length, 2);
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

  /** The DSL with another prologue and Begin form, and globals/history a previous run left behind. */
  const variant = (prologue: string, inputs: Record<string, unknown> = DSL.components.begin.obj.params.inputs) => ({
    ...DSL,
    components: { ...DSL.components, begin: { ...DSL.components.begin, obj: { ...DSL.components.begin.obj, params: { ...DSL.components.begin.obj.params, prologue, inputs } } } },
  });
  type Message = { id: string; role: string; content: string };

  it('with release a session runs the latest published version and names it; without one published it is a 400', async () => {
    const agents = new AgentService(store);
    const draftOnly = ((await agents.create(owner, { title: 'draft only', dsl: DSL })) as { id: string }).id;
    await refused(sessions.create(owner, draftOnly, { release: true }), 400, /^No available published version$/);
    const published = ((await agents.create(owner, { title: 'published', dsl: variant('Published hello.'), release: true })) as { id: string }).id;
    await agents.update(owner, published, { dsl: variant('Draft hello.') });
    const released = await sessions.create(owner, published, { release: 'true' });
    assert.deepEqual((released.message as Message[]).map((m) => m.content), ['Published hello.']);
    assert.match(String(released.version_title), /^published_/);
    const draft = await sessions.create(owner, published, {});
    assert.deepEqual((draft.message as Message[]).map((m) => m.content), ['Draft hello.']);
    assert.equal(draft.version_title, null);
  });

  it("a new session's canvas starts clean: the sys.* globals and the run state reset, the agent's own globals kept", async () => {
    const agents = new AgentService(store);
    const used = { ...DSL, globals: { 'sys.query': 'old question', 'sys.conversation_turns': 7, 'env.region': 'alps' }, history: [['user', 'old question']], path: ['begin'] };
    const id = ((await agents.create(owner, { title: 'used', dsl: used })) as { id: string }).id;
    const dsl = (await sessions.create(owner, id, {})).dsl as { globals: Record<string, unknown>; history: unknown[]; path: unknown[]; paused: boolean };
    assert.deepEqual(dsl.globals, { 'sys.query': '', 'sys.user_id': '', 'sys.conversation_turns': 0, 'sys.files': [], 'sys.history': [], 'env.region': 'alps' });
    assert.deepEqual([dsl.history, dsl.path, dsl.paused], [[], [], false]);
  });

  it('name and user_id fill Begin fields only when its form declares them; user_id is stored on the session', async () => {
    const agents = new AgentService(store);
    const id = ((await agents.create(owner, { title: 'form', dsl: variant('Hi.', { name: { type: 'line', name: 'Name' } }) })) as { id: string }).id;
    const session = await sessions.create(owner, id, { name: 'Ann', user_id: 'u-1', unknown_field: 'x' });
    const inputs = (session.dsl as { components: { begin: { obj: { params: { inputs: Record<string, { value?: unknown }> } } } } }).components.begin.obj.params.inputs;
    assert.deepEqual(inputs, { name: { type: 'line', name: 'Name', value: 'Ann' } });
    assert.equal(session.user_id, 'u-1');
    assert.equal(session.name, 'Ann');
  });

  it("a turn arriving while the previous turn's workflow closes after recording its answer waits for it, then starts", async () => {
    const session = await sessions.create(owner, agentId, {});
    const recorded = (session.message as Message[])[0]!.id; // an assistant message of the session
    runs.refuse = 1;
    runs.openKey = recorded;
    const turn = await sessions.startTurn(owner, { agent_id: agentId, session_id: session.id as string, query: 'next' });
    assert.deepEqual(runs.waited, [`${session.id} run-of-${recorded}`], 'it waited for the run of the recorded turn');
    assert.deepEqual(runs.started.map((r) => r.runKey), [turn.messageId]);
  });

  it("a turn whose previous turn ended but whose workflow never closes (no worker takes it) is a 503 with Retry-After, storing nothing", async () => {
    const session = await sessions.create(owner, agentId, {});
    const recorded = (session.message as Message[])[0]!.id;
    runs.refuse = 1;
    runs.openKey = recorded;
    runs.stuck = true;
    await assert.rejects(sessions.startTurn(owner, { agent_id: agentId, session_id: session.id as string, query: 'next' }), (err: { status: number; retryAfterSeconds: number; message: string }) => {
      assert.equal(err.status, 503);
      assert.equal(err.retryAfterSeconds, 5);
      assert.match(err.message, /has ended, but its workflow has not closed within 30 s: no agents worker is taking it.*Nothing was stored/);
      return true;
    });
    assert.equal(runs.started.length, 0);
    assert.deepEqual((await sessions.detail(owner, agentId, session.id as string)).message, session.message, 'the session is unchanged');
  });

  it('a turn that waited for the previous workflow and then finds another turn on the session is a 409', async () => {
    const session = await sessions.create(owner, agentId, {});
    const recorded = (session.message as Message[])[0]!.id;
    runs.refuse = 2;
    runs.openKey = recorded;
    await refused(sessions.startTurn(owner, { agent_id: agentId, session_id: session.id as string, query: 'q' }), 409, /is still running/);
    assert.equal(runs.waited.length, 1, 'it waited once, not again for the turn that took the session');
  });

  it('a turn refused while no workflow is open (it closed in between) tries again: started, or a 409 when refused each time', async () => {
    const session = await sessions.create(owner, agentId, {});
    runs.refuse = 3;
    await refused(sessions.startTurn(owner, { agent_id: agentId, session_id: session.id as string, query: 'q' }), 409, /is still running/);
    runs.refuse = 2;
    runs.openKey = undefined;
    await sessions.startTurn(owner, { agent_id: agentId, session_id: session.id as string, query: 'q' });
    assert.equal(runs.started.length, 1);
    assert.deepEqual(runs.waited, [], 'nothing to wait for');
  });

  it("a turn without a session names the new one after the question's first 250 characters, or 'New session' without a question", async () => {
    const long = await sessions.startTurn(owner, { agent_id: agentId, query: 'x'.repeat(300) });
    assert.equal((await sessions.detail(owner, agentId, long.sessionId)).name, 'x'.repeat(250));
    const blank = await sessions.startTurn(owner, { agent_id: agentId, inputs: {} });
    assert.equal((await sessions.detail(owner, agentId, blank.sessionId)).name, 'New session');
  });

  it("a workspace member's turn on a team agent runs for the owner's tenant, as the member unless a user is given; a private agent is a 403", async () => {
    const agents = new AgentService(store);
    const shared = ((await agents.create(owner, { title: 'shared', dsl: DSL, permission: 'team' })) as { id: string }).id;
    const member = { ...tenantPrincipal('c'.repeat(32)), teamTenants: [owner.tenantId] };
    await sessions.startTurn(member, { agent_id: shared, query: 'q' });
    assert.deepEqual([runs.started[0]!.tenantId, runs.started[0]!.request.userId], [owner.tenantId, member.userId]);
    await refused(sessions.startTurn(member, { agent_id: agentId, query: 'q' }), 403, /private to its owner/);
    assert.equal(runs.started.length, 1, "the owner's private agent started nothing");
  });

  it("naming another tenant's session in a turn is a 404, telling nothing of the session or its agent", async () => {
    const mine = await sessions.create(owner, agentId, {});
    const theirs = ((await new AgentService(store).create(stranger, { title: 'theirs', dsl: DSL })) as { id: string }).id;
    await refused(sessions.startTurn(stranger, { agent_id: theirs, session_id: mine.id as string }), 404, new RegExp(`^Session '${mine.id}' not found$`));
    assert.deepEqual(runs.started, []);
  });

  it("a session is read only through its own agent; delete_all removes this agent's sessions and their logs only", async () => {
    const other = ((await new AgentService(store).create(owner, { title: 'other', dsl: DSL })) as { id: string }).id;
    const elsewhere = await sessions.create(owner, other, {});
    await refused(sessions.detail(owner, agentId, elsewhere.id as string), 404, new RegExp(`^Session '${elsewhere.id}' not found for agent '${agentId}'$`));
    const a = await sessions.create(owner, agentId, {});
    const b = await sessions.create(owner, agentId, {});
    assert.deepEqual(await sessions.delete(owner, agentId, null, true), { success_count: 2, errors: [] });
    assert.deepEqual(events.removed.sort(), [a, b].map((s) => (s.message as Message[])[0]!.id).sort());
    assert.equal((await sessions.detail(owner, other, elsewhere.id as string)).id, elsewhere.id);
    assert.equal((await sessions.list(owner, agentId, { page: 1, page_size: 10, orderby: 'create_time', desc: true })).total, 0);
  });

  it('lists by user_id and by id', async () => {
    const s1 = await sessions.create(owner, agentId, { user_id: 'u1' });
    await sessions.create(owner, agentId, { user_id: 'u2' });
    await sessions.create(owner, agentId, { user_id: 'u1' });
    const base = { page: 1, page_size: 10, orderby: 'create_time' as const, desc: true };
    const byUser = await sessions.list(owner, agentId, { ...base, user_id: 'u1' });
    assert.equal(byUser.total, 2);
    assert.ok(byUser.sessions.every((s) => s.user_id === 'u1'));
    assert.deepEqual((await sessions.list(owner, agentId, { ...base, id: s1.id as string })).sessions.map((s) => s.id), [s1.id]);
  });

  it('stopping an unknown task, or one that is not an id, is a 404 naming it', async () => {
    await refused(sessions.cancel(owner, 'f'.repeat(32)), 404, /^Task 'f{32}' not found$/);
    await refused(sessions.cancel(owner, 'not-an-id'), 404, /^Task 'not-an-id' not found$/);
    assert.deepEqual(runs.cancelled, []);
  });
});
