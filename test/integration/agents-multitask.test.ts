import assert from 'node:assert/strict';
import { callGate, echoAnswer, lastUserMessage, startFakeOpenAI, type FakeOpenAI, type FakeMessage } from '../fakes/index.js';
import { Api, eventually } from './client.js';
import { sseFrames, userWithModel } from './chat-helpers.js';
import { createAgent, llmCanvas, userFillUpCanvas, runStream, streamedText } from './agent-helpers.js';
import { harness } from './harness.js';
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { workflowBundlePath } from '../../src/engine/bundle-workflows.js';
import { workflowIds } from '../../src/engine/task-queues.js';
import { installRuntimeOnce } from '../../src/engine/worker.js';

/** A long answer to "long" (streamed slowly, so a test can stop it midway); "Echo: <question>" otherwise. */
const LONG = Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ');
const script = (messages: FakeMessage[], model: string) => (lastUserMessage(messages) === 'long' ? { answer: LONG } : echoAnswer(messages, model));

/** An open SSE call: its frames as they come, and the whole list once it ended. */
function openStream(api: Api, body: Record<string, unknown>) {
  const frames: any[] = [];
  let firstText = () => {};
  const textArrived = new Promise<void>((resolve) => (firstText = resolve));
  const done = (async () => {
    const res = await fetch(new URL('/api/v1/agents/chat/completions', api.url), {
      method: 'POST',
      headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ stream: true, ...body }),
    });
    if (res.status !== 200) assert.fail(`${res.status}: ${await res.text()}`);
    for await (const frame of sseFrames(res)) {
      frames.push(frame);
      if (streamedText(frames.filter((f) => f !== '[DONE]')).split(' ').length >= 3) firstText();
    }
    return frames;
  })();
  return { frames, textArrived, done };
}

const pairs = (session: any) => session.message.map((m: any) => [m.role, m.content]);

describe('agents: overlapping turns (multitask_strategy)', function () {
  this.timeout(180_000);
  let fake: FakeOpenAI;
  let api: Api;

  before(async () => {
    fake = await startFakeOpenAI();
    ({ api } = await userWithModel('multitask', fake.baseUrl));
  });
  beforeEach(() => {
    fake.behaviour = { ...fake.behaviour, answer: script, ttftMs: 0, tokenDelayMs: 50, gate: undefined };
    fake.clear();
  });
  after(() => fake.close());

  /** The user messages of the model calls, in the order the model got them. */
  const asked = () => fake.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => lastUserMessage(r.body.messages));
  const promptOf = (question: string) => fake.requests.find((r) => r.path === '/v1/chat/completions' && lastUserMessage(r.body.messages) === question)!.body.messages as FakeMessage[];
  const session = async (agentId: string, id: string) => (await api.get(`/agents/${agentId}/sessions/${id}`)).body.data;

  it('reject is the default (409 while a turn runs); an unknown strategy is a 400 naming the four', async () => {
    const agentId = await createAgent(api, llmCanvas());
    const bad = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'x', multitask_strategy: 'queue' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /multitask_strategy.*"reject", "enqueue", "interrupt", "rollback"/);
    const gate = callGate((m) => lastUserMessage(m) === 'first');
    fake.behaviour.gate = gate;
    const { id } = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    const first = openStream(api, { agent_id: agentId, session_id: id, query: 'first' });
    await eventually(async () => gate.held === 1);
    for (const strategy of [undefined, 'reject']) {
      const busy = await api.post('/agents/chat/completions', { agent_id: agentId, session_id: id, query: 'second', multitask_strategy: strategy });
      assert.equal(busy.status, 409, JSON.stringify(busy.body));
      assert.match(busy.body.message, /still running.*multitask_strategy/);
    }
    gate.release();
    assert.equal(streamedText((await first.done).filter((f) => f !== '[DONE]')), 'Echo: first');
  });

  it('enqueue: turns submitted while one runs wait for it, then run in the order submitted; each caller gets its own turn, which sees the turns before it', async () => {
    const agentId = await createAgent(api, llmCanvas());
    const gate = callGate((m) => lastUserMessage(m) === 'first');
    fake.behaviour.gate = gate;
    const { id } = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    const first = openStream(api, { agent_id: agentId, session_id: id, query: 'first' });
    await eventually(async () => gate.held === 1);
    const second = openStream(api, { agent_id: agentId, session_id: id, query: 'second', multitask_strategy: 'enqueue' });
    await new Promise((r) => setTimeout(r, 300));
    const third = api.post('/agents/chat/completions', { agent_id: agentId, session_id: id, query: 'third', stream: false, multitask_strategy: 'enqueue' });
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(second.frames, [], 'a queued turn streams nothing while the one before it runs');
    assert.deepEqual(asked(), ['first']);
    gate.release();
    const [a, b, c] = await Promise.all([first.done, second.done, third]);
    assert.equal(streamedText(a.filter((f) => f !== '[DONE]')), 'Echo: first');
    const secondEvents = b.filter((f) => f !== '[DONE]');
    assert.equal(secondEvents[0].event, 'workflow_started', "the queued caller's stream starts when its turn starts");
    assert.equal(streamedText(secondEvents), 'Echo: second');
    assert.notEqual(secondEvents[0].message_id, a[0].message_id);
    assert.equal(c.status, 200, JSON.stringify(c.body));
    assert.equal(c.body.data.data.content, 'Echo: third');
    assert.deepEqual(asked(), ['first', 'second', 'third']);
    assert.ok(promptOf('third').some((m) => m.role === 'assistant' && m.content === 'Echo: second'), 'the third turn saw the second one in its history');
    assert.deepEqual(pairs(await session(agentId, id)), [
      ['assistant', 'Hi, I am an agent.'],
      ['user', 'first'], ['assistant', 'Echo: first'],
      ['user', 'second'], ['assistant', 'Echo: second'],
      ['user', 'third'], ['assistant', 'Echo: third'],
    ]);
  });

  it('interrupt: the running turn stops, keeps the text it streamed as its answer (status interrupted), and the new turn runs at once and sees it', async () => {
    const agentId = await createAgent(api, llmCanvas());
    const { id } = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    const long = openStream(api, { agent_id: agentId, session_id: id, query: 'long' });
    await long.textArrived;
    const now = await api.post('/agents/chat/completions', { agent_id: agentId, session_id: id, query: 'now', stream: false, multitask_strategy: 'interrupt' });
    assert.equal(now.status, 200, JSON.stringify(now.body));
    assert.equal(now.body.data.data.content, 'Echo: now');
    const events = (await long.done).filter((f) => f !== '[DONE]');
    const partial = streamedText(events);
    assert.ok(partial.startsWith('w0 w1 w2') && partial.length < LONG.length, `partial: ${partial}`);
    const finished = events.find((e) => e.event === 'workflow_finished');
    assert.equal(finished.data.outputs.content, partial, 'the interrupted caller ends with the text it got');
    const stored = await session(agentId, id);
    assert.deepEqual(pairs(stored), [
      ['assistant', 'Hi, I am an agent.'],
      ['user', 'long'], ['assistant', partial],
      ['user', 'now'], ['assistant', 'Echo: now'],
    ]);
    assert.equal(stored.message[2].status, 'interrupted');
    assert.ok(promptOf('now').some((m) => m.role === 'assistant' && m.content === partial), 'the new turn saw the partial answer');
    await eventually(async () => fake.open === 0, 5000, 50);
    // Both runs (the interrupted turn, which took the signal and continued as new, and the new turn) replay deterministically.
    const h = await harness();
    const connection = await Connection.connect({ address: h.temporal.address });
    try {
      const client = new Client({ connection });
      const runs = await eventually(async () => {
        const found: string[] = [];
        for await (const ex of client.workflow.list({ query: `WorkflowId = '${workflowIds.agentRun(agentId, id)}'` })) found.push(ex.runId);
        return found.length === 2 ? found : undefined;
      }, 10_000, 200);
      installRuntimeOnce();
      for (const runId of runs) {
        const history = await client.workflow.getHandle(workflowIds.agentRun(agentId, id), runId).fetchHistory();
        await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath(h.config.rootDir) } }, history);
      }
    } finally {
      await connection.close();
    }
  });

  it('rollback: the running turn stops and leaves nothing: its messages are gone and the next turn does not see it', async () => {
    const agentId = await createAgent(api, llmCanvas());
    const { id } = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    await api.post('/agents/chat/completions', { agent_id: agentId, session_id: id, query: 'before', stream: false });
    const canvasBefore = (await session(agentId, id)).dsl;
    const long = openStream(api, { agent_id: agentId, session_id: id, query: 'long' });
    await long.textArrived;
    const now = await api.post('/agents/chat/completions', { agent_id: agentId, session_id: id, query: 'now', stream: false, multitask_strategy: 'rollback' });
    assert.equal(now.status, 200, JSON.stringify(now.body));
    assert.equal(now.body.data.data.content, 'Echo: now');
    const events = (await long.done).filter((f) => f !== '[DONE]');
    assert.equal(events.find((e) => e.event === 'workflow_finished').data.outputs.content, 'Task has been canceled');
    const stored = await session(agentId, id);
    assert.deepEqual(pairs(stored), [
      ['assistant', 'Hi, I am an agent.'],
      ['user', 'before'], ['assistant', 'Echo: before'],
      ['user', 'now'], ['assistant', 'Echo: now'],
    ]);
    const prompt = promptOf('now');
    assert.ok(!prompt.some((m) => m.content === 'long' || m.content.startsWith('w0')), `the rolled-back turn is not in the history: ${JSON.stringify(prompt)}`);
    assert.ok(prompt.some((m) => m.content === 'Echo: before'));
    assert.deepEqual(stored.dsl.history, [...canvasBefore.history, ['user', 'now'], ['assistant', 'Echo: now']], "the canvas went on from the state before the rolled-back turn");
    assert.equal(stored.reference.length, 2, 'one reference bucket per kept turn');
  });

  it('the same UserFillUp answer submitted twice, concurrently and then again after it ran, resumes the run once; every caller gets that turn', async () => {
    const dsl = userFillUpCanvas();
    const agentId = await createAgent(api, dsl);
    const { id } = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    const paused = await runStream(api, { agent_id: agentId, session_id: id, query: 'start' });
    assert.ok(paused.events.some((e) => e.event === 'user_inputs'));
    const gate = callGate((m) => lastUserMessage(m) === 'yes please');
    fake.behaviour.gate = gate;
    const inputs = { answer: { type: 'line', value: 'yes please' } };
    const first = openStream(api, { agent_id: agentId, session_id: id, inputs });
    await eventually(async () => gate.held === 1);
    const twin = api.post('/agents/chat/completions', { agent_id: agentId, session_id: id, inputs, stream: false });
    await new Promise((r) => setTimeout(r, 300));
    gate.release();
    const [a, b] = await Promise.all([first.done, twin]);
    const events = a.filter((f) => f !== '[DONE]');
    assert.equal(streamedText(events), 'Echo: yes please');
    assert.equal(b.status, 200, JSON.stringify(b.body));
    assert.equal(b.body.data.data.content, 'Echo: yes please');
    assert.equal(b.body.data.message_id, events[0].message_id, 'the concurrent twin got the same turn');
    const late = await api.post('/agents/chat/completions', { agent_id: agentId, session_id: id, inputs: { answer: { value: 'yes please', type: 'line' } }, stream: false });
    assert.equal(late.status, 200, JSON.stringify(late.body));
    assert.equal(late.body.data.data.content, 'Echo: yes please');
    assert.equal(late.body.data.message_id, events[0].message_id, 'a late repeat gets the recorded turn');
    assert.deepEqual(asked(), ['yes please'], 'the model was asked once');
    const stored = await session(agentId, id);
    assert.equal(stored.message.filter((m: any) => m.content === 'Echo: yes please').length, 1);
  });

  it('enqueue survives a restart of Cairn and of the worker: the queued turns run after the held one, in order', async () => {
    const h = await harness();
    const agentId = await createAgent(api, llmCanvas());
    const gate = callGate((m) => lastUserMessage(m) === 'first');
    fake.behaviour.gate = gate;
    const { id } = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    // The callers' connections go with the old process: their failures are expected.
    const calls: Promise<unknown>[] = [openStream(api, { agent_id: agentId, session_id: id, query: 'first' }).done.catch(() => undefined)];
    await eventually(async () => gate.held === 1);
    for (const query of ['second', 'third']) {
      calls.push(api.post('/agents/chat/completions', { agent_id: agentId, session_id: id, query, stream: false, multitask_strategy: 'enqueue' }).catch(() => undefined));
      await new Promise((r) => setTimeout(r, 300));
    }
    await h.restart();
    await h.killWorker();
    await Promise.all(calls);
    api = new Api(h.url, api.key);
    // The run resumes on the new worker, which asks the model again: held again, then let go.
    await eventually(async () => gate.held === 1, 30_000, 100);
    gate.release();
    const stored = await eventually(async () => {
      const s = await session(agentId, id);
      return s.message.length === 7 ? s : undefined;
    }, 30_000, 200);
    assert.deepEqual(pairs(stored), [
      ['assistant', 'Hi, I am an agent.'],
      ['user', 'first'], ['assistant', 'Echo: first'],
      ['user', 'second'], ['assistant', 'Echo: second'],
      ['user', 'third'], ['assistant', 'Echo: third'],
    ]);
    assert.deepEqual(asked().filter((q) => q !== 'first'), ['second', 'third']);
  });
});
