import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { lastUserMessage, startFakeOpenAI, type FakeMessage, type FakeOpenAI } from '../fakes/index.js';
import type { Api } from './client.js';
import { datasetWithChunk, postSse, userWithModel } from './chat-helpers.js';
import { canvas, createAgent, streamedText } from './agent-helpers.js';
import { harness, type Harness } from './harness.js';
import { workflowIds } from '../../src/engine/task-queues.js';

/**
 * Crash conformance: a six-component canvas with a tool call (Agent → Retrieval), a UserFillUp and an
 * outside side effect (Invoke), run once per activity boundary with the worker killed (SIGKILL) at that
 * boundary. Every run must end exactly as the run without a kill: the same session messages, each once;
 * the caller's streamed text whole and never repeated; the Invoke request made with one idempotency key
 * however often Temporal ran its activity.
 */

const FINAL = Array.from({ length: 12 }, (_, i) => `final${i}`).join(' ');
const RESEARCH = 'Research done: granite cairns mark the summit trail';

/** Begin → Agent (Retrieval tool) → UserFillUp → Invoke → LLM → Message. */
function crashCanvas(datasetId: string, hookUrl: string) {
  return canvas([
    ['begin', 'Begin', { mode: 'conversational', prologue: '' }, ['Agent:Research']],
    [
      'Agent:Research',
      'Agent',
      {
        sys_prompt: 'Research with the tool.',
        prompts: [{ role: 'user', content: 'Research: {sys.query}' }],
        max_rounds: 3,
        tools: [{ component_name: 'Retrieval', name: 'Retrieval', params: { kb_ids: [datasetId], top_n: 3, similarity_threshold: 0 } }],
      },
      ['UserFillUp:Confirm'],
    ],
    [
      'UserFillUp:Confirm',
      'UserFillUp',
      { enable_tips: true, tips: 'Plan: {Agent:Research@content}. Go on?', inputs: { approve: { name: 'approve', type: 'line', optional: false } } },
      ['Invoke:Notify'],
    ],
    ['Invoke:Notify', 'Invoke', { url: hookUrl, method: 'post', variables: [{ key: 'note', ref: 'Agent:Research@content' }], timeout: 30 }, ['LLM:Final']],
    ['LLM:Final', 'LLM', { sys_prompt: 'Write up.', prompts: [{ role: 'user', content: 'Write up: {Invoke:Notify@result} ({UserFillUp:Confirm@approve})' }] }, ['Message:Out']],
    ['Message:Out', 'Message', { content: ['{LLM:Final@content}'] }, []],
  ]);
}

function script(messages: FakeMessage[]) {
  const user = lastUserMessage(messages);
  if (user.startsWith('Write up:')) return { answer: FINAL };
  if (messages.some((m) => m.role === 'tool')) return { answer: RESEARCH };
  return { answer: '', tool_calls: [{ name: 'search_my_dateset', arguments: { query: 'cairns' } }] };
}

/** The outside service the Invoke calls: slow enough that a kill can land while the request is open. */
async function startHook() {
  const calls: { key: string | undefined; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      calls.push({ key: req.headers['idempotency-key'] as string | undefined, body });
      setTimeout(() => res.end('notified'), 400);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`, calls, close: () => new Promise((r) => server.close(r)) };
}

/** An activity boundary: the nth ActivityTaskStarted/Completed event of a turn's workflow run. */
interface Boundary {
  turn: 1 | 2;
  index: number;
  label: string;
}

type Kill = { turn: 1 | 2; index: number } | undefined;

describe('agents: crash conformance (SIGKILL at every activity boundary)', function () {
  this.timeout(900_000);
  let h: Harness;
  let fake: FakeOpenAI;
  let api: Api;
  let hook: Awaited<ReturnType<typeof startHook>>;
  let agentId: string;
  let temporal: Client;
  let connection: Connection;

  before(async () => {
    h = await harness();
    fake = await startFakeOpenAI({ answer: script, tokenDelayMs: 40 });
    ({ api } = await userWithModel('crash', fake.baseUrl));
    hook = await startHook();
    const ds = await datasetWithChunk(api, { name: `crash-${Date.now()}` });
    agentId = await createAgent(api, crashCanvas(ds.id, hook.url));
    connection = await Connection.connect({ address: h.temporal.address });
    temporal = new Client({ connection });
  });
  after(async () => {
    await connection?.close();
    await hook?.close();
    await fake?.close();
  });

  /** Activity events of the session's current workflow run (not `skipRunId`), in order. */
  async function activityEvents(sessionId: string, skipRunId?: string): Promise<{ runId: string; events: string[] } | undefined> {
    const handle = temporal.workflow.getHandle(workflowIds.agentRun(agentId, sessionId));
    try {
      const { runId } = await handle.describe();
      if (runId === skipRunId) return undefined;
      const history = await temporal.workflow.getHandle(handle.workflowId, runId).fetchHistory();
      const events: string[] = [];
      const types = new Map<string, string>();
      for (const e of history.events ?? []) {
        const scheduled = e.activityTaskScheduledEventAttributes;
        if (scheduled) types.set(String(e.eventId), scheduled.activityType?.name ?? '?');
        const started = e.activityTaskStartedEventAttributes;
        if (started) events.push(`${types.get(String(started.scheduledEventId))} started`);
        const completed = e.activityTaskCompletedEventAttributes;
        if (completed) events.push(`${types.get(String(completed.scheduledEventId))} completed`);
      }
      return { runId, events };
    } catch {
      return undefined;
    }
  }

  /**
   * Runs one turn, streaming; when `killAt` is this turn's, kills the worker as soon as the turn's history
   * shows that boundary. Returns the stream's events and the boundaries the turn went through.
   */
  async function turn(sessionId: string, body: Record<string, unknown>, turnNo: 1 | 2, kill: Kill, skipRunId?: string) {
    let done = false;
    let killed = false;
    let seen: string[] = [];
    let runId: string | undefined;
    /** Kills the worker once, when this turn is the one to kill and its history has passed the boundary. */
    const killIfPassed = async (events: string[]) => {
      if (kill?.turn === turnNo && !killed && events.length > kill.index) {
        killed = true;
        await h.killWorker();
      }
    };
    const watcher = (async () => {
      while (!done) {
        const now = await activityEvents(sessionId, skipRunId);
        if (now) {
          runId = now.runId;
          seen = now.events;
          await killIfPassed(seen);
        }
        await new Promise((r) => setTimeout(r, 15));
      }
    })();
    const res = await postSse(api, '/agents/chat/completions', { agent_id: agentId, session_id: sessionId, stream: true, ...body });
    done = true;
    await watcher;
    const final = await activityEvents(sessionId, skipRunId);
    // Temporal records an activity's start with its completion, so the last boundaries of a turn can be
    // followed by its end within one poll of the watcher (seen under load: the Agent's, before the UserFillUp
    // pause). The worker is then killed as soon as the stream ended, the boundary passed and nothing after it
    // left but the closing of the turn.
    await killIfPassed(final?.events ?? []);
    assert.equal(res.status, 200, res.raw);
    return { events: res.frames.filter((f) => f !== '[DONE]'), frames: res.frames, boundaries: final?.events ?? seen, runId: final?.runId ?? runId, killed };
  }

  async function run(kill: Kill) {
    const sessionId = (await api.post(`/agents/${agentId}/sessions`, {})).body.data.id as string;
    fake.clear();
    hook.calls.length = 0;
    const first = await turn(sessionId, { query: 'tell me about cairns' }, 1, kill);
    const second = await turn(sessionId, { query: '', inputs: { approve: { value: 'yes' } } }, 2, kill, first.runId);
    const session = (await api.get(`/agents/${agentId}/sessions/${sessionId}`)).body.data;
    const runs = (await api.get(`/agents/${agentId}/sessions/${sessionId}/runs`)).body.data as { status: string }[];
    return {
      runStatuses: runs.map((r) => r.status).sort(),
      first,
      second,
      messages: (session.message as { role: string; content: string }[]).map((m) => [m.role, m.content]),
      modelCalls: fake.requests.filter((r) => r.path.endsWith('/chat/completions')).length,
      invokeKeys: hook.calls.map((c) => c.key),
    };
  }

  it('each run ends exactly once: same messages once, the stream whole and unrepeated, one idempotency key per Invoke', async () => {
    const baseline = await run(undefined);
    assert.ok(baseline.first.events.some((e) => e.event === 'user_inputs'), 'the first turn pauses at the UserFillUp');
    assert.equal(streamedText(baseline.second.events), FINAL);
    assert.equal(baseline.invokeKeys.length, 1);
    assert.deepEqual(baseline.runStatuses, ['finished', 'paused']);
    const boundaries: Boundary[] = [
      ...baseline.first.boundaries.map((label, index) => ({ turn: 1 as const, index, label })),
      ...baseline.second.boundaries.map((label, index) => ({ turn: 2 as const, index, label })),
    ];
    assert.ok(boundaries.length >= 6, `the canvas runs through activity boundaries: ${JSON.stringify(boundaries)}`);

    for (const b of boundaries) {
      const label = `killed at turn ${b.turn} "${b.label}"`;
      const r = await run({ turn: b.turn, index: b.index });
      assert.ok(r.first.killed || r.second.killed, `${label}: the worker was killed`);
      for (const t of [r.first, r.second]) {
        assert.ok(!t.frames.some((f) => typeof f === 'object' && f && 'code' in f && f.code !== 0), `${label}: no error frame: ${JSON.stringify(t.frames.filter((f) => f?.code))}`);
      }
      assert.equal(r.first.events.filter((e) => e.event === 'user_inputs').length, 1, `${label}: the first turn pauses once`);
      assert.equal(streamedText(r.second.events), FINAL, `${label}: the caller gets the whole answer, no token twice`);
      assert.equal(r.second.events.filter((e) => e.event === 'workflow_finished').length, 1, `${label}: the turn finishes once`);
      assert.deepEqual(r.messages, baseline.messages, `${label}: the session holds each message once, as without a kill`);
      assert.deepEqual(r.runStatuses, ['finished', 'paused'], `${label}: one run record per turn`);
      assert.ok(r.invokeKeys.length >= 1, `${label}: the Invoke request was made`);
      assert.equal(new Set(r.invokeKeys).size, 1, `${label}: every attempt of the Invoke request carries the same Idempotency-Key`);
      assert.ok(r.invokeKeys.length <= 2, `${label}: the Invoke request was sent at most once more than without a kill (${r.invokeKeys.length})`);
      assert.ok(r.modelCalls <= baseline.modelCalls + 2, `${label}: only the killed component's model calls ran again (${r.modelCalls} vs ${baseline.modelCalls})`);
    }
  });
});
