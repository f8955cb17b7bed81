import assert from 'node:assert/strict';
import { runCanvas, type CallOptions, type Executor } from '../../../src/agents/interpreter.js';
import type { CanvasDsl } from '../../../src/agents/dsl.js';
import type { AgentRunInput, ComponentCall, ComponentResult } from '../../../src/agents/run-types.js';
import type { RunEvent } from '../../../src/events/types.js';

type Row = [string, string, Record<string, unknown>, string[]];

function dsl(rows: Row[]): CanvasDsl {
  const components: CanvasDsl['components'] = {};
  for (const [id, name, params, downstream] of rows) components[id] = { obj: { component_name: name, params }, downstream, upstream: [] };
  return { components, globals: {}, history: [], path: [], retrieval: [] };
}

/** An executor whose I/O components answer from `answer`; records calls and events. */
function fakeExecutor(answer: (call: ComponentCall, options: CallOptions) => ComponentResult | Promise<ComponentResult>) {
  const calls: { call: ComponentCall; options: CallOptions }[] = [];
  const events: RunEvent[] = [];
  let clock = 1_700_000_000_000;
  const exec: Executor = {
    call: async (call, options) => {
      calls.push({ call, options });
      return answer(call, options);
    },
    emit: (e) => events.push(...e),
    now: () => (clock += 10),
    random: () => 0,
  };
  return { exec, calls, events };
}

function input(canvas: CanvasDsl, query = 'hi', inputs = {}): AgentRunInput {
  return { runKey: 'r1', agentId: 'a', sessionId: 's', tenantId: 't', createdAt: 1, canvas, names: {}, request: { query, inputs, files: [], userId: 'u' } };
}

const kinds = (events: RunEvent[]) => events.map((e) => (e.event.startsWith('node_') ? `${e.event}:${(e.data as any).component_id}` : e.event));

describe('canvas interpreter', () => {
  it('an LLM whose downstream Message shows its content runs inside that Message (its tokens stream), and finishes after it', async () => {
    const canvas = dsl([
      ['begin', 'Begin', {}, ['LLM:a']],
      ['LLM:a', 'LLM', { sys_prompt: 'S', prompts: [{ role: 'user', content: 'Q: {sys.query}' }] }, ['Message:m']],
      ['Message:m', 'Message', { content: ['> {LLM:a@content}'] }, []],
    ]);
    const { exec, calls, events } = fakeExecutor((call) => {
      assert.equal(call.kind, 'Message');
      return { outputs: { content: '> hello' }, producers: { 'LLM:a': { outputs: { content: 'hello' } } } };
    });
    const outcome = await runCanvas(input(canvas), exec);
    assert.equal(outcome.status, 'finished');
    assert.equal(outcome.answer, '> hello');
    assert.equal(calls.length, 1);
    const call = calls[0]!.call as Extract<ComponentCall, { kind: 'Message' }>;
    assert.deepEqual(call.pieces, [{ text: '> ' }, { producer: 'LLM:a', path: 'content' }]);
    assert.deepEqual(call.producers['LLM:a']!.messages, [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'Q: hi' },
    ]);
    assert.equal(calls[0]!.options.stream, true);
    assert.deepEqual(kinds(events), [
      'workflow_started',
      'node_started:begin',
      'node_finished:begin',
      'node_started:LLM:a',
      'node_started:Message:m',
      'message_end',
      'node_finished:LLM:a',
      'node_finished:Message:m',
      'workflow_finished',
    ]);
    assert.deepEqual(outcome.canvas.history, [['user', 'hi'], ['assistant', '> hello']]);
  });

  it('an LLM with structured output runs on its own (the whole answer is needed first)', async () => {
    const canvas = dsl([
      ['begin', 'Begin', {}, ['LLM:a']],
      ['LLM:a', 'LLM', { outputs: { structured: { schema: { type: 'object', properties: { x: { type: 'number' } } } } } }, ['Message:m']],
      ['Message:m', 'Message', { content: ['x={LLM:a@structured.x}'] }, []],
    ]);
    const { exec, calls } = fakeExecutor(() => ({ outputs: { content: '{"x":2}', structured: { x: 2 } } }));
    const outcome = await runCanvas(input(canvas), exec);
    assert.equal(calls[0]!.call.kind, 'LLM');
    assert.deepEqual((calls[0]!.call as any).schema, { type: 'object', properties: { x: { type: 'number' } } });
    assert.equal(outcome.answer, 'x=2');
  });

  it('a component that reads two upstreams waits until both have run (the implicit join)', async () => {
    const canvas = dsl([
      ['begin', 'Begin', {}, ['Retrieval:a', 'Retrieval:b']],
      ['Retrieval:a', 'Retrieval', { kb_ids: ['d'] }, ['Message:m']],
      ['Retrieval:b', 'Retrieval', { kb_ids: ['d'], timeout: 1 }, ['Message:m']],
      ['Message:m', 'Message', { content: ['{Retrieval:a@formalized_content}+{Retrieval:b@formalized_content}'] }, []],
    ]);
    const { exec, calls } = fakeExecutor((call) => ({ outputs: { formalized_content: call.id } }));
    const outcome = await runCanvas(input(canvas), exec);
    assert.equal(outcome.answer, 'Retrieval:a+Retrieval:b');
    assert.deepEqual(calls.map((c) => c.options.timeoutSec), [12, 1], 'Retrieval defaults to 12 s; `timeout` overrides it');
  });

  it('a failed component with exception_method goto continues at exception_goto', async () => {
    const canvas = dsl([
      ['begin', 'Begin', {}, ['Retrieval:a']],
      ['Retrieval:a', 'Retrieval', { kb_ids: ['d'], exception_method: 'goto', exception_goto: ['Message:sorry'] }, ['Message:ok']],
      ['Message:ok', 'Message', { content: ['ok'] }, []],
      ['Message:sorry', 'Message', { content: ['sorry: {Retrieval:a@_ERROR}'] }, []],
    ]);
    const { exec } = fakeExecutor(() => ({ outputs: {}, error: 'boom' }));
    const outcome = await runCanvas(input(canvas), exec);
    assert.equal(outcome.status, 'finished');
    assert.equal(outcome.answer, 'sorry: boom');
  });

  it('a failed component without an exception method ends the run with an error naming it', async () => {
    const canvas = dsl([
      ['begin', 'Begin', {}, ['Retrieval:a']],
      ['Retrieval:a', 'Retrieval', { kb_ids: ['d'] }, []],
    ]);
    const { exec, events } = fakeExecutor(() => ({ outputs: {}, error: 'no dataset' }));
    const outcome = await runCanvas(input(canvas), exec);
    assert.equal(outcome.status, 'failed');
    assert.equal(outcome.error, "Component 'Retrieval:a' (Retrieval) failed: no dataset");
    assert.equal(events.at(-1)!.event, 'run_error');
    assert.ok(!events.some((e) => e.event === 'workflow_finished'));
  });

  it('a canvas that loops without end is stopped', async () => {
    const canvas = dsl([
      ['begin', 'Begin', {}, ['Switch:a']],
      ['Switch:a', 'Switch', { conditions: [], end_cpn_ids: ['Switch:b'] }, []],
      ['Switch:b', 'Switch', { conditions: [], end_cpn_ids: ['Switch:a'] }, []],
    ]);
    const { exec } = fakeExecutor(() => ({ outputs: {} }));
    const outcome = await runCanvas(input(canvas), exec);
    assert.equal(outcome.status, 'failed');
    assert.match(outcome.error!, /more than 10000 steps, the limit of steps per turn \(setting CAIRN_AGENT_MAX_STEPS\): the canvas loops without end/);
    assert.equal(outcome.failure?.kind, 'user');
  });

  it("a component's failure is the canvas's (kind user) and names the component's id, display name and type", async () => {
    const canvas = dsl([
      ['begin', 'Begin', {}, ['Retrieval:a']],
      ['Retrieval:a', 'Retrieval', {}, []],
    ]);
    const { exec, events } = fakeExecutor(() => ({ outputs: {}, error: "Dataset 'x' not found" }));
    const outcome = await runCanvas({ ...input(canvas), names: { 'Retrieval:a': 'Find docs' } }, exec);
    assert.equal(outcome.error, "Component 'Retrieval:a' (Retrieval, named 'Find docs') failed: Dataset 'x' not found");
    assert.deepEqual(outcome.failure, { kind: 'user', message: outcome.error, component_id: 'Retrieval:a', component_name: 'Find docs', component_type: 'Retrieval' });
    assert.deepEqual(events.at(-1)!.data, outcome.failure, 'the run_error event carries the classification');
  });

  it('a bad variable reference fails its component as the canvas\'s fault', async () => {
    const canvas = dsl([
      ['begin', 'Begin', {}, ['Message:m']],
      ['Message:m', 'Message', { content: ['{Nowhere:x@content}'] }, []],
    ]);
    const { exec } = fakeExecutor(() => ({ outputs: {} }));
    const outcome = await runCanvas(input(canvas), exec);
    assert.equal(outcome.status, 'failed');
    assert.equal(outcome.failure?.kind, 'user', outcome.error);
    assert.equal(outcome.failure?.component_id, 'Message:m');
  });

  it('a programming error or an activity the engine gave up on is a fault of Cairn (kind internal)', async () => {
    const canvas = dsl([
      ['begin', 'Begin', {}, ['Retrieval:a']],
      ['Retrieval:a', 'Retrieval', {}, []],
    ]);
    const bug = fakeExecutor(() => {
      throw new TypeError("Cannot read properties of undefined (reading 'x')");
    });
    assert.equal((await runCanvas(input(canvas), bug.exec)).failure?.kind, 'internal');
    const lost = fakeExecutor(() => ({ outputs: {}, error: 'worker lost', internal: true }));
    const outcome = await runCanvas(input(dsl([['begin', 'Begin', {}, ['Retrieval:a']], ['Retrieval:a', 'Retrieval', {}, []]])), lost.exec);
    assert.equal(outcome.failure?.kind, 'internal');
    assert.equal(outcome.failure?.component_id, 'Retrieval:a');
  });

  it('a UserFillUp with unanswered fields pauses; the next turn with inputs resumes at it and keeps earlier outputs', async () => {
    const canvas = dsl([
      ['begin', 'Begin', {}, ['Retrieval:a']],
      ['Retrieval:a', 'Retrieval', { kb_ids: ['d'] }, ['UserFillUp:f']],
      ['UserFillUp:f', 'UserFillUp', { inputs: { ok: { name: 'ok', type: 'line' } }, tips: 'Found {Retrieval:a@formalized_content}. OK?' }, ['Message:m']],
      ['Message:m', 'Message', { content: ['{UserFillUp:f@ok} / {Retrieval:a@formalized_content}'] }, []],
    ]);
    const first = fakeExecutor(() => ({ outputs: { formalized_content: 'X' } }));
    const paused = await runCanvas(input(canvas), first.exec);
    assert.equal(paused.status, 'paused');
    const ask = first.events.find((e) => e.event === 'user_inputs')!;
    assert.deepEqual(ask.data, { inputs: { ok: { name: 'ok', type: 'line', value: null } }, tips: 'Found X. OK?' });
    assert.deepEqual(paused.canvas.path, ['UserFillUp:f']);

    const second = fakeExecutor(() => assert.fail('nothing runs again before the UserFillUp'));
    const resumed = await runCanvas(input(paused.canvas, '', { ok: { value: 'yes' } }), second.exec);
    assert.equal(resumed.status, 'finished');
    assert.equal(resumed.answer, 'yes / X');
    assert.ok(!second.events.some((e) => e.event === 'workflow_started'));
  });

  it('sampling settings follow the *Enabled flags; numbers given as text are numbers', async () => {
    const canvas = dsl([
      ['begin', 'Begin', {}, ['LLM:a']],
      ['LLM:a', 'LLM', { temperature: '0.1', temperatureEnabled: true, top_p: 0.5, topPEnabled: false, max_tokens: 64 }, []],
    ]);
    const { exec, calls } = fakeExecutor(() => ({ outputs: { content: '' } }));
    await runCanvas(input(canvas), exec);
    assert.deepEqual((calls[0]!.call as any).settings, { temperature: 0.1, max_tokens: 64 });
  });

  it('the history window sends the last n exchanges before the question', async () => {
    const canvas = dsl([
      ['begin', 'Begin', {}, ['LLM:a']],
      ['LLM:a', 'LLM', { message_history_window_size: 1 }, []],
    ]);
    canvas.history = [['user', 'q1'], ['assistant', 'a1'], ['user', 'q2'], ['assistant', 'a2']];
    const { exec, calls } = fakeExecutor(() => ({ outputs: { content: '' } }));
    await runCanvas(input(canvas, 'q3'), exec);
    assert.deepEqual((calls[0]!.call as any).messages, [
      { role: 'user', content: 'q2' },
      { role: 'assistant', content: 'a2' },
      { role: 'user', content: 'q3' },
    ]);
  });

  it('a component that needs an outside service fails when it runs, naming what is missing; its exception handler applies', async () => {
    const canvas = dsl([
      ['begin', 'Begin', {}, ['TavilySearch:T']],
      ['TavilySearch:T', 'TavilySearch', { exception_method: 'comment', exception_default_value: 'No web search here.' }, ['Message:m']],
      ['Message:m', 'Message', { content: [' (done)'] }, []],
    ]);
    const { exec, calls, events } = fakeExecutor(() => assert.fail('nothing is called'));
    const outcome = await runCanvas(input(canvas), exec);
    assert.equal(calls.length, 0);
    assert.equal(outcome.answer, 'No web search here. (done)');
    const failed = events.find((e) => e.event === 'node_finished' && (e.data as any).component_id === 'TavilySearch:T')!;
    assert.match((failed.data as any).error, /TavilySearch needs Tavily's web search API, an outside service Cairn does not provide/);
  });

  describe('containers', () => {
    type ParentRow = [string, string, Record<string, unknown>, string[], string?];
    function nested(rows: ParentRow[]): CanvasDsl {
      const canvas = dsl(rows.map(([id, name, params, down]) => [id, name, params, down]));
      for (const [id, , , , parent] of rows) if (parent) canvas.components[id]!.parent_id = parent;
      return canvas;
    }
    const echo = (call: ComponentCall): ComponentResult => ({ outputs: { content: `S(${(call as any).messages.at(-1).content})` } });

    it('an Iteration runs its children once per item, each pass seeing its own {item}, and collects the outputs as a list', async () => {
      const canvas = nested([
        ['begin', 'Begin', { inputs: { items: { type: 'list' } } }, ['Iteration:it']],
        ['Iteration:it', 'Iteration', { items_ref: 'begin@items', outputs: { answers: { ref: 'LLM:x@content' } } }, ['Message:m']],
        ['IterationItem:i', 'IterationItem', {}, ['LLM:x'], 'Iteration:it'],
        ['LLM:x', 'LLM', { prompts: [{ role: 'user', content: 'Summarise {item} ({index})' }] }, [], 'Iteration:it'],
        ['Message:m', 'Message', { content: ['{Iteration:it@answers}'] }, []],
      ]);
      const { exec, calls, events } = fakeExecutor(echo);
      const outcome = await runCanvas(input(canvas, '', { items: { value: ['a', 'b', 'c'] } }), exec);
      assert.equal(outcome.status, 'finished', outcome.error);
      assert.deepEqual(calls.map((c) => (c.call as any).messages.at(-1).content), ['Summarise a (0)', 'Summarise b (1)', 'Summarise c (2)']);
      assert.deepEqual(JSON.parse(outcome.answer), ['S(Summarise a (0))', 'S(Summarise b (1))', 'S(Summarise c (2))']);
      const finished = events.filter((e) => e.event === 'node_finished').map((e) => (e.data as any).component_id);
      assert.equal(finished.filter((id) => id === 'Iteration:it').length, 1, 'the Iteration finishes once, after its last pass');
      assert.ok(finished.indexOf('Iteration:it') < finished.indexOf('Message:m'));
    });

    it('an Iteration over something that is not a list fails naming items_ref', async () => {
      const canvas = nested([
        ['begin', 'Begin', {}, ['Iteration:it']],
        ['Iteration:it', 'Iteration', { items_ref: 'sys.query' }, []],
        ['IterationItem:i', 'IterationItem', {}, [], 'Iteration:it'],
      ]);
      const { exec } = fakeExecutor(echo);
      const outcome = await runCanvas(input(canvas, 'plain text'), exec);
      assert.equal(outcome.status, 'failed');
      assert.match(outcome.error!, /Iteration:it.*items_ref 'sys.query' must resolve to a list/);
    });

    it('an Iteration over more items than CAIRN_AGENT_ITERATION_MAX_ITEMS fails naming the Iteration, the limit and the setting; one at the limit runs', async () => {
      const rows: ParentRow[] = [
        ['begin', 'Begin', { inputs: { items: { type: 'list' } } }, ['Iteration:it']],
        ['Iteration:it', 'Iteration', { items_ref: 'begin@items', outputs: {} }, ['Message:m']],
        ['IterationItem:i', 'IterationItem', {}, [], 'Iteration:it'],
        ['Message:m', 'Message', { content: ['ok'] }, []],
      ];
      const limits = { maxSteps: 10_000, iterationMaxItems: 3 };
      const over = await runCanvas({ ...input(nested(rows), '', { items: { value: [1, 2, 3, 4] } }), limits }, fakeExecutor(echo).exec);
      assert.equal(over.status, 'failed');
      assert.match(over.error!, /Iteration 'Iteration:it' has 4 items, which exceeds the limit of 3 items \(setting CAIRN_AGENT_ITERATION_MAX_ITEMS\)/);
      assert.equal(over.failure?.kind, 'user');
      assert.equal(over.failure?.component_id, 'Iteration:it');
      const at = await runCanvas({ ...input(nested(rows), '', { items: { value: [1, 2, 3] } }), limits }, fakeExecutor(echo).exec);
      assert.equal(at.status, 'finished', at.error);
    });

    it('a Loop that outlives the step budget fails naming the Loop and CAIRN_AGENT_MAX_STEPS', async () => {
      const canvas = nested([
        ['begin', 'Begin', {}, ['Loop:l']],
        ['Loop:l', 'Loop', { loop_variables: [], maximum_loop_count: 1_000_000 }, []],
        ['LoopItem:i', 'LoopItem', {}, ['StringTransform:s'], 'Loop:l'],
        ['StringTransform:s', 'StringTransform', { method: 'merge', script: 'x' }, [], 'Loop:l'],
      ]);
      const outcome = await runCanvas({ ...input(canvas), limits: { maxSteps: 50, iterationMaxItems: 10 } }, fakeExecutor(echo).exec);
      assert.equal(outcome.status, 'failed');
      assert.match(outcome.error!, /more than 50 steps \(still inside Loop 'Loop:l'\), the limit of steps per turn \(setting CAIRN_AGENT_MAX_STEPS\)/);
      assert.equal(outcome.failure?.component_id, 'Loop:l');
    });

    it('a Loop runs its children until maximum_loop_count, then goes on downstream with its loop variables', async () => {
      const canvas = nested([
        ['begin', 'Begin', {}, ['Loop:l']],
        ['Loop:l', 'Loop', { loop_variables: [{ variable: 'draft', type: 'string', input_mode: 'constant', value: 'v0' }], maximum_loop_count: 3 }, ['Message:m']],
        ['LoopItem:i', 'LoopItem', {}, ['LLM:x'], 'Loop:l'],
        ['LLM:x', 'LLM', { prompts: [{ role: 'user', content: 'improve {Loop:l@draft}' }] }, [], 'Loop:l'],
        ['Message:m', 'Message', { content: ['done: {Loop:l@draft}'] }, []],
      ]);
      const { exec, calls } = fakeExecutor(echo);
      const outcome = await runCanvas(input(canvas), exec);
      assert.equal(outcome.status, 'finished', outcome.error);
      assert.equal(calls.length, 3);
      assert.equal(outcome.answer, 'done: v0');
    });

    it('a Loop ends when its termination condition holds after a pass', async () => {
      const canvas = nested([
        ['begin', 'Begin', {}, ['Loop:l']],
        ['Loop:l', 'Loop', { loop_variables: [], maximum_loop_count: 10, loop_termination_condition: [{ variable: 'LoopItem:i@index', operator: '≥', input_mode: 'constant', value: 1 }] }, ['Message:m']],
        ['LoopItem:i', 'LoopItem', {}, ['LLM:x'], 'Loop:l'],
        ['LLM:x', 'LLM', {}, [], 'Loop:l'],
        ['Message:m', 'Message', { content: ['end'] }, []],
      ]);
      const { exec, calls } = fakeExecutor(echo);
      const outcome = await runCanvas(input(canvas), exec);
      assert.equal(outcome.answer, 'end');
      assert.equal(calls.length, 2, 'passes 0 and 1, then the condition index >= 1 holds');
    });

    it('a VariableAssigner updates a Loop variable each pass; the Loop ends when its condition on that variable holds', async () => {
      const canvas = nested([
        ['begin', 'Begin', {}, ['Loop:l']],
        ['Loop:l', 'Loop', { loop_variables: [{ variable: 'n', type: 'number', input_mode: 'constant', value: 0 }], maximum_loop_count: 10, loop_termination_condition: [{ variable: 'n', operator: '≥', input_mode: 'constant', value: 3 }] }, ['Message:m']],
        ['LoopItem:i', 'LoopItem', {}, ['VariableAssigner:inc'], 'Loop:l'],
        ['VariableAssigner:inc', 'VariableAssigner', { variables: [{ variable: 'Loop:l@n', operator: '+=', parameter: 1 }] }, [], 'Loop:l'],
        ['Message:m', 'Message', { content: ['n={Loop:l@n}'] }, []],
      ]);
      const { exec } = fakeExecutor(echo);
      const outcome = await runCanvas(input(canvas), exec);
      assert.equal(outcome.status, 'finished', outcome.error);
      assert.equal(outcome.answer, 'n=3');
    });

    it('ExitLoop leaves the Loop at once for its downstream', async () => {
      const canvas = nested([
        ['begin', 'Begin', {}, ['Loop:l']],
        ['Loop:l', 'Loop', { maximum_loop_count: 10 }, ['Message:m']],
        ['LoopItem:i', 'LoopItem', {}, ['LLM:x'], 'Loop:l'],
        ['LLM:x', 'LLM', {}, ['ExitLoop:e'], 'Loop:l'],
        ['ExitLoop:e', 'ExitLoop', {}, [], 'Loop:l'],
        ['Message:m', 'Message', { content: ['out'] }, []],
      ]);
      const { exec, calls } = fakeExecutor(echo);
      const outcome = await runCanvas(input(canvas), exec);
      assert.equal(outcome.answer, 'out');
      assert.equal(calls.length, 1);
    });
  });
});
