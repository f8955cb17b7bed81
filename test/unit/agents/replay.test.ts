import assert from 'node:assert/strict';
import { runCanvas, type Executor } from '../../../src/agents/interpreter.js';
import type { CanvasDsl } from '../../../src/agents/dsl.js';
import type { AgentRunInput, ComponentCall, ComponentResult } from '../../../src/agents/run-types.js';
import type { RunEvent } from '../../../src/events/types.js';
import { STEP_INPUTS, STEP_REFERENCE } from '../../../src/events/types.js';
import { stepInputEvents, stepReferenceEvents, stepsFromEvents } from '../../../src/agents/run-steps.js';

type Row = [string, string, Record<string, unknown>, string[]];

function dsl(rows: Row[]): CanvasDsl {
  const components: CanvasDsl['components'] = {};
  for (const [id, name, params, downstream] of rows) components[id] = { obj: { component_name: name, params }, downstream, upstream: [] };
  return { components, globals: {}, history: [], path: [], retrieval: [] };
}

/** I/O components answer `<id> ran`; calls and events are recorded. */
function fakeExecutor() {
  const calls: ComponentCall[] = [];
  const events: RunEvent[] = [];
  let clock = 1_700_000_000_000;
  const exec: Executor = {
    call: async (call): Promise<ComponentResult> => {
      calls.push(call);
      if (call.kind === 'Message') return { outputs: { content: 'final' }, producers: Object.fromEntries(Object.keys(call.producers).map((p) => [p, { outputs: { content: `${p} ran` } }])) };
      return { outputs: { content: `${call.id} ran` } };
    },
    emit: (e) => events.push(...e),
    now: () => (clock += 10),
    random: () => 0,
  };
  return { exec, calls, events };
}

const twoLlms = () =>
  dsl([
    ['begin', 'Begin', { inputs: { topic: { name: 'topic', type: 'line' } } }, ['LLM:a']],
    ['LLM:a', 'LLM', { prompts: [{ role: 'user', content: '{sys.query} {begin@topic}' }] }, ['LLM:b']],
    ['LLM:b', 'LLM', { prompts: [{ role: 'user', content: 'B: {LLM:a@content} {begin@topic}' }] }, ['Message:m']],
    ['Message:m', 'Message', { content: ['{LLM:b@content}'] }, []],
  ]);

function input(canvas: CanvasDsl, reuse?: AgentRunInput['reuse'], inputs = {}): AgentRunInput {
  return { runKey: 'r2', agentId: 'a', sessionId: 's', tenantId: 't', createdAt: 1, canvas, names: {}, request: { query: 'q', inputs, files: [], userId: 'u' }, reuse };
}

const finished = (events: RunEvent[], id: string) => events.find((e) => e.event === 'node_finished' && (e.data as any).component_id === id)?.data as any;

describe('replay in the canvas interpreter', () => {
  it('a component with recorded outputs is not called: it takes them, marked reused, and the walk goes on with them', async () => {
    const { exec, calls, events } = fakeExecutor();
    const outcome = await runCanvas(input(twoLlms(), { 'LLM:a': { content: 'recorded A' } }), exec);
    assert.equal(outcome.status, 'finished');
    assert.deepEqual(calls.map((c) => c.kind), ['Message'], 'only the Message (running LLM:b) is called');
    const message = calls[0] as Extract<ComponentCall, { kind: 'Message' }>;
    assert.match(message.producers['LLM:b']!.messages.at(-1)!.content, /^B: recorded A /);
    assert.equal(finished(events, 'LLM:a').reused, true);
    assert.equal(finished(events, 'LLM:a').outputs.content, 'recorded A');
    assert.equal(finished(events, 'LLM:b').reused, undefined);
    const started = events.find((e) => e.event === 'node_started' && (e.data as any).component_id === 'LLM:a')!.data as any;
    assert.equal(started.reused, true);
  });

  it('reusing every component up to the Message runs no I/O at all; the Message shows the recorded text as its message', async () => {
    const { exec, calls, events } = fakeExecutor();
    const outcome = await runCanvas(input(twoLlms(), { 'LLM:a': { content: 'A' }, 'LLM:b': { content: 'B' } }), exec);
    assert.equal(calls.length, 0);
    assert.equal(outcome.answer, 'B');
    assert.deepEqual(events.filter((e) => e.event === 'message').map((e) => (e.data as any).content), ['B']);
  });

  it('Begin always runs anew, so a replay\'s inputs reach the components that run again', async () => {
    const { exec, calls } = fakeExecutor();
    await runCanvas(input(twoLlms(), { begin: { topic: 'old' }, 'LLM:a': { content: 'A' } }, { topic: { value: 'new' } }), exec);
    const message = calls[0] as Extract<ComponentCall, { kind: 'Message' }>;
    assert.equal(message.producers['LLM:b']!.messages.at(-1)!.content, 'B: A new');
  });

  it("a reused component's recorded reference joins the turn's reference and the replay's own record", async () => {
    const { exec, events } = fakeExecutor();
    const chunk = { id: 'c1', content: 'Granite cairns', document_id: 'd1', document_name: 'a.txt' };
    const reference = { chunks: { c1: chunk }, doc_aggs: { d1: { doc_name: 'a.txt', doc_id: 'd1', count: 1 } } };
    const run = { ...input(twoLlms(), { 'LLM:a': { content: 'A' } }), reuseReferences: { 'LLM:a': reference } };
    const outcome = await runCanvas(run, exec);
    assert.deepEqual(outcome.reference.chunks, { c1: chunk });
    const end = events.find((e) => e.event === 'message_end')!.data as any;
    assert.deepEqual(end.reference.chunks.map((c: any) => c.id), ['c1']);
    const steps = stepsFromEvents(events, 'finished');
    assert.deepEqual(steps.find((s) => s.component_id === 'LLM:a')!.reference, reference, 'a replay of the replay reuses it again');
    assert.equal(steps.find((s) => s.component_id === 'LLM:b')!.reference, null);
  });

  it('an activity result yields a reference event for the component and each producer that found something', () => {
    const found = { chunks: { c: { id: 'c' } }, doc_aggs: {} } as any;
    const events = stepReferenceEvents('M', { outputs: {}, reference: { chunks: {}, doc_aggs: {} }, producers: { A: { outputs: {}, reference: found }, B: { outputs: {} } } });
    assert.deepEqual(events, [{ event: STEP_REFERENCE, data: { component_id: 'A', reference: found } }]);
  });

  it('without recorded outputs a run is unchanged: every I/O component is called and nothing is marked reused', async () => {
    const { exec, calls, events } = fakeExecutor();
    await runCanvas(input(twoLlms()), exec);
    assert.deepEqual(calls.map((c) => c.kind), ['LLM', 'Message']);
    assert.equal(events.some((e) => (e.data as any)?.reused), false);
  });
});

describe('run steps from a run\'s events', () => {
  it('pairs each node_started with its node_finished in start order, takes the activity inputs, drops timing keys', async () => {
    const { exec, events } = fakeExecutor();
    const canvas = twoLlms();
    await runCanvas(input(canvas), exec);
    // What the activities publish: the resolved call of each I/O component.
    const inputs = stepInputEvents({ kind: 'LLM', id: 'LLM:a', messages: [{ role: 'user', content: 'q ' }], settings: {} });
    const steps = stepsFromEvents([...events.slice(0, 4), ...inputs, ...events.slice(4)], 'finished');
    assert.deepEqual(steps.map((s) => [s.component_id, s.status]), [
      ['begin', 'finished'],
      ['LLM:a', 'finished'],
      ['LLM:b', 'finished'],
      ['Message:m', 'finished'],
    ]);
    assert.deepEqual(steps[1]!.inputs, { messages: [{ role: 'user', content: 'q ' }], settings: {} });
    assert.deepEqual(steps[1]!.outputs, { content: 'LLM:a ran' });
    assert.ok(steps.every((s) => s.duration !== null && s.duration >= 0));
  });

  it('a streaming Message gives its producers their own inputs; a memory write adds none', () => {
    const events = stepInputEvents({ kind: 'Message', id: 'M', pieces: [{ producer: 'L', path: 'content' }], producers: { L: { kind: 'LLM', id: 'L', messages: [], settings: {} } } });
    assert.deepEqual(events.map((e) => [e.event, (e.data as any).component_id]), [[STEP_INPUTS, 'M'], [STEP_INPUTS, 'L']]);
    assert.deepEqual(stepInputEvents({ kind: 'Memory', id: 'M', memory_ids: ['x'], user_input: '', agent_response: '' }), []);
  });

  it('a step that never finished takes the end of its run', () => {
    const started: RunEvent = { event: 'node_started', data: { component_id: 'U', component_name: 'U', component_type: 'UserFillUp', created_at: 5 } };
    assert.equal(stepsFromEvents([started], 'paused')[0]!.status, 'paused');
    assert.equal(stepsFromEvents([started], 'cancelled')[0]!.status, 'cancelled');
  });
});
