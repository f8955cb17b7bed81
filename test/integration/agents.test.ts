import assert from 'node:assert/strict';
import { echoAnswer, fixedAnswer, lastUserMessage, toolRoundTrip, type AnswerScript, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import { eventually, type Api } from './client.js';
import { parsedDataset, postSse, userWithModel } from './chat-helpers.js';
import { canvas, createAgent, fixture, llmCanvas, runStream, streamedText } from './agent-helpers.js';
import { harness } from './harness.js';

describe('agents: runs over HTTP (the worker is a separate `cairn worker` process)', function () {
  this.timeout(180_000);
  let fake: FakeOpenAI;
  let api: Api;

  before(async () => {
    fake = await startFakeOpenAI();
    ({ api } = await userWithModel('agents', fake.baseUrl));
  });
  beforeEach(() => {
    fake.behaviour = { ...fake.behaviour, answer: echoAnswer, ttftMs: 0, tokenDelayMs: 0, failure: undefined };
  });
  after(() => fake.close());

  const chatRequests = () => fake.requests.filter((r) => r.path === '/v1/chat/completions');

  it('Begin → LLM → Message answers; the non-stream answer aggregates the content and the session holds the turn once', async () => {
    const agentId = await createAgent(api, llmCanvas());
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'hello agent', stream: false });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.data.content, 'Echo: hello agent');
    assert.equal(res.body.data.event, 'workflow_finished');
    assert.equal(res.body.data.data.usage.calls, 1);
    const sessionId = res.body.data.session_id;
    const session = (await api.get(`/agents/${agentId}/sessions/${sessionId}`)).body.data;
    assert.equal(session.source, 'workflow');
    assert.deepEqual(session.message.map((m: any) => [m.role, m.content]), [
      ['assistant', 'Hi, I am an agent.'],
      ['user', 'hello agent'],
      ['assistant', 'Echo: hello agent'],
    ]);
  });

  it('streams RAGFlow canvas events in order: the LLM streams through its Message and finishes after it', async () => {
    const agentId = await createAgent(api, llmCanvas());
    fake.behaviour.tokenDelayMs = 20;
    const { events } = await runStream(api, { agent_id: agentId, query: 'stream me please now' });
    const kinds = events.map((e) => (e.event === 'node_started' || e.event === 'node_finished' ? `${e.event}:${e.data.component_id}` : e.event));
    const compact = kinds.filter((k, i) => k !== 'message' || kinds[i - 1] !== 'message');
    assert.deepEqual(compact, [
      'workflow_started',
      'node_started:begin',
      'node_finished:begin',
      'node_started:LLM:Answer',
      'node_started:Message:Out',
      'message',
      'message_end',
      'node_finished:LLM:Answer',
      'node_finished:Message:Out',
      'workflow_finished',
    ]);
    assert.ok(kinds.filter((k) => k === 'message').length > 1, 'tokens arrive as several message deltas');
    assert.equal(streamedText(events), 'Echo: stream me please now');
    const first = events[0];
    assert.equal(first.task_id, first.session_id);
    assert.match(first.message_id, /^[0-9a-f]{32}$/);
    const llmDone = events.find((e) => e.event === 'node_finished' && e.data.component_id === 'LLM:Answer');
    assert.equal(llmDone.data.component_name, 'node LLM:Answer');
    assert.equal(llmDone.data.outputs.content, 'Echo: stream me please now');
  });

  it('a conversational session keeps history: the next turn sends the earlier exchange to the model', async () => {
    const agentId = await createAgent(api, llmCanvas());
    const session = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    assert.deepEqual(session.message.map((m: any) => m.content), ['Hi, I am an agent.']);
    await api.post('/agents/chat/completions', { agent_id: agentId, session_id: session.id, query: 'first', stream: false });
    await api.post('/agents/chat/completions', { agent_id: agentId, session_id: session.id, query: 'second', stream: false });
    const messages = chatRequests().at(-1)!.body.messages.map((m: any) => [m.role, m.content]);
    assert.deepEqual(messages, [
      ['system', 'Be brief.'],
      ['user', 'first'],
      ['assistant', 'Echo: first'],
      ['user', 'second'],
    ]);
  });

  it('the next turn of a session may start as soon as the previous answer arrived', async () => {
    const agentId = await createAgent(api, llmCanvas());
    const session = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    for (let i = 0; i < 5; i++) {
      const res = await api.post('/agents/chat/completions', { agent_id: agentId, session_id: session.id, query: `turn ${i}`, stream: i % 2 === 0 });
      assert.equal(res.status, 200, `turn ${i}: ${JSON.stringify(res.body)}`);
    }
    const stored = (await api.get(`/agents/${agentId}/sessions/${session.id}`)).body.data.message;
    assert.equal(stored.filter((m: any) => m.role === 'assistant').length, 6);
  });

  it('a dataset chatbot (Begin → Agent with the Retrieval tool → Message) answers from the dataset with references', async () => {
    const ds = await parsedDataset(api, `agent-docs-${Date.now()}`, { 'cairns.txt': 'A cairn is a human-made pile of stones. Hikers use cairns to mark trails.' });
    const dsl = fixture('your_starter_dataset_chatbot');
    dsl.components['Agent:StalePandasDream'].obj.params.tools[0].params.kb_ids = [ds.id];
    const agentId = await createAgent(api, dsl);
    fake.behaviour.answer = toolRoundTrip('search_my_dateset', (q) => ({ query: q }), (result) => (result.includes('mark trails') ? 'Hikers use cairns to mark trails [ID:0].' : 'Nothing found.'));
    const { events } = await runStream(api, { agent_id: agentId, query: 'what do hikers use cairns for' });
    assert.equal(streamedText(events), 'Hikers use cairns to mark trails [ID:0].');
    const end = events.find((e) => e.event === 'message_end');
    assert.equal(end.data.reference.chunks.length, 1);
    assert.match(end.data.reference.chunks[0].content, /mark trails/);
    assert.equal(end.data.reference.chunks[0].document_name, 'cairns.txt');
    const agentDone = events.find((e) => e.event === 'node_finished' && e.data.component_id === 'Agent:StalePandasDream');
    assert.deepEqual(agentDone.data.tool_calls.map((c: any) => [c.tool_name, c.arguments]), [['search_my_dateset', { query: 'The user query is what do hikers use cairns for' }]]);
    const toolCall = chatRequests().at(-2)!.body;
    assert.equal(toolCall.tools[0].function.name, 'search_my_dateset');
    const session = (await api.get(`/agents/${agentId}/sessions/${events[0].session_id}`)).body.data;
    assert.equal(session.message.at(-1).reference.chunks[0].document_name, 'cairns.txt');
  });

  it('an Agent calls a sub-Agent as a tool: the sub-agent answers the task with its own prompt, the caller uses its answer', async () => {
    const dsl = canvas([
      ['begin', 'Begin', {}, ['Agent:Lead']],
      ['Agent:Lead', 'Agent', { sys_prompt: 'You lead.', prompts: [{ role: 'user', content: '{sys.query}' }], tools: [{ component_name: 'Agent', name: 'researcher', params: { sys_prompt: 'You research facts.', description: 'Finds facts.' } }] }, ['Message:M']],
      ['Message:M', 'Message', { content: ['{Agent:Lead@content}'] }, []],
    ]);
    const agentId = await createAgent(api, dsl);
    fake.behaviour.answer = (messages) => {
      const system = messages.find((m) => m.role === 'system')?.content ?? '';
      if (system === 'You research facts.') return { answer: `Fact for "${lastUserMessage(messages)}": 42` };
      const result = messages.find((m) => m.role === 'tool');
      if (result) return { answer: `Lead says: ${result.content}` };
      return { answer: '', tool_calls: [{ name: 'researcher', arguments: { user_prompt: 'the answer to everything' } }] };
    };
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'what is the answer?', stream: false });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.data.content, 'Lead says: Fact for "the answer to everything": 42');
  });

  it('Categorize routes by the model answer, VariableAggregator joins the branches (customer feedback template)', async () => {
    const agentId = await createAgent(api, fixture('customer_feedback_dispatcher'));
    const classify: AnswerScript = (messages) => {
      const system = messages.find((m) => m.role === 'system')?.content ?? '';
      const review = lastUserMessage(messages);
      if (system.includes('Positive review')) return { answer: /love|great/.test(review) ? 'Positive review' : 'Negative review' };
      return { answer: /late|delay/.test(review) ? 'Transportation issue' : 'After-sales issues' };
    };
    fake.behaviour.answer = classify;
    const positive = await api.post('/agents/chat/completions', { agent_id: agentId, stream: false, inputs: { customer_review: { type: 'line', value: 'I love it, great' } } });
    assert.equal(positive.status, 200, JSON.stringify(positive.body));
    assert.match(positive.body.data.data.content, /Final review category is: Positive review/);
    const late = await api.post('/agents/chat/completions', { agent_id: agentId, stream: false, inputs: { customer_review: { value: 'the parcel came late' } } });
    assert.match(late.body.data.data.content, /Customer's original review: the parcel came late/);
    assert.match(late.body.data.data.content, /Final review category is: \nTransportation issue/);
  });

  it('Switch sends the run down the first matching condition, else to end_cpn_ids', async () => {
    const dsl = canvas([
      ['begin', 'Begin', { mode: 'conversational' }, ['Switch:Route']],
      ['Switch:Route', 'Switch', { conditions: [{ logical_operator: 'and', items: [{ cpn_id: 'sys.query', operator: 'contains', value: 'refund' }], to: ['Message:Refund'] }], end_cpn_ids: ['Message:Other'] }, ['Message:Refund', 'Message:Other']],
      ['Message:Refund', 'Message', { content: ['Refund desk: {sys.query}'] }, []],
      ['Message:Other', 'Message', { content: ['General desk'] }, []],
    ]);
    const agentId = await createAgent(api, dsl);
    fake.clear();
    const refund = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'I want a refund', stream: false });
    assert.equal(refund.body.data.data.content, 'Refund desk: I want a refund');
    const other = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'hello', stream: false });
    assert.equal(other.body.data.data.content, 'General desk');
    assert.equal(chatRequests().length, 0, 'a canvas without models calls no model');
  });

  it('UserFillUp pauses durably: user_inputs ends the turn, Cairn restarts, and the next call with inputs resumes there', async () => {
    const ds = await parsedDataset(api, `agent-plan-${Date.now()}`, { 'plan.txt': 'Stone cairns mark mountain trails.' });
    const dsl = fixture('user_interaction');
    dsl.components['Agent:TangyWordsType'].obj.params.tools[0].params.kb_ids = [ds.id];
    // The template names a hosted model; use the tenant's default one.
    for (const id of ['Agent:LargeFliesMelt', 'Agent:TangyWordsType']) dsl.components[id].obj.params.llm_id = '';
    const agentId = await createAgent(api, dsl);
    fake.behaviour.answer = (messages) => {
      const user = lastUserMessage(messages);
      if (user.startsWith('User query:')) return { answer: 'PLAN: search cairns' };
      if (messages.some((m) => m.role === 'tool')) return { answer: 'Final: cairns mark trails' };
      return { answer: '', tool_calls: [{ name: 'search_my_dateset', arguments: { query: 'cairns' } }] };
    };
    const session = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    const first = await runStream(api, { agent_id: agentId, session_id: session.id, query: 'tell me about cairns' });
    const pause = first.events.find((e) => e.event === 'user_inputs');
    assert.ok(pause, 'the first call ends with user_inputs');
    assert.deepEqual(Object.keys(pause.data.inputs), ['instructions']);
    assert.match(pause.data.tips, /PLAN: search cairns/);
    assert.ok(!first.events.some((e) => e.event === 'workflow_finished'));

    await (await harness()).restart();
    api = new (api.constructor as any)((await harness()).url, api.key);

    const second = await runStream(api, { agent_id: agentId, session_id: session.id, query: '', inputs: { instructions: { value: 'go ahead' } } });
    assert.ok(!second.events.some((e) => e.event === 'workflow_started'), 'a resumed turn does not start the workflow again');
    assert.equal(second.events.find((e) => e.event === 'node_started').data.component_id, 'UserFillUp:GoldBroomsRelate');
    assert.equal(streamedText(second.events), 'Final: cairns mark trails');
    const searchPrompt = chatRequests().find((r) => lastUserMessage(r.body.messages).startsWith('Search Plan'))!;
    assert.match(lastUserMessage(searchPrompt.body.messages), /Search Plan: PLAN: search cairns[\s\S]*feedback:go ahead/);
  });

  it('a hung model fails its component after the component timeout; the error frame names the component and nothing waits', async () => {
    const agentId = await createAgent(api, llmCanvas({ timeout: 2 }));
    fake.behaviour.ttftMs = 60_000;
    const started = Date.now();
    const res = await postSse(api, '/agents/chat/completions', { agent_id: agentId, query: 'hang', stream: true });
    const elapsed = Date.now() - started;
    const error = res.frames.find((f) => f !== '[DONE]' && f.code === 400);
    assert.ok(error, res.raw);
    assert.match(error.message, /Component 'LLM:Answer' \(LLM.*\) failed: timed out after 2 s/);
    assert.equal(error.data.component_id, 'LLM:Answer', 'the frame names the component');
    assert.equal(res.frames.at(-1), '[DONE]');
    assert.ok(elapsed < 15_000, `ended after ${elapsed} ms`);
    const whole = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'hang', stream: false });
    assert.equal(whole.status, 400, 'a timeout of the configured model is the canvas\'s to fix, not a fault of Cairn');
    assert.equal(whole.body.code, 400);
    assert.match(whole.body.message, /LLM:Answer.*timed out/);
    assert.equal(whole.body.data.component_id, 'LLM:Answer');
  });

  it('a component error with exception_method comment answers the default value and the run goes on', async () => {
    const agentId = await createAgent(api, llmCanvas({ timeout: 1, exception_method: 'comment', exception_default_value: 'Sorry, try later.' }));
    fake.behaviour.ttftMs = 60_000;
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'x', stream: false });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.data.data.content, /Sorry, try later\./);
  });

  it('max_retries retries a failing model call after delay_after_error', async () => {
    const agentId = await createAgent(api, llmCanvas({ max_retries: 2, delay_after_error: 0.1 }));
    fake.behaviour.failure = { status: 500, message: 'overloaded', times: 2, path: '/v1/chat' };
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'retry me', stream: false });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.data.content, 'Echo: retry me');
    assert.equal(chatRequests().filter((r) => lastUserMessage(r.body.messages) === 'retry me').length, 3);
  });

  it('stop (POST /tasks/{session}/cancel) ends the run within 2 s, stops the model stream and records the turn as cancelled', async () => {
    const agentId = await createAgent(api, llmCanvas());
    fake.behaviour.answer = fixedAnswer(Array.from({ length: 200 }, (_, i) => `w${i}`).join(' '));
    fake.behaviour.tokenDelayMs = 100;
    const session = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    const res = await fetch(new URL('/api/v1/agents/chat/completions', api.url), {
      method: 'POST',
      headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_id: agentId, session_id: session.id, query: 'long', stream: true }),
    });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('"event":"message"')) text += new TextDecoder().decode((await reader.read()).value);
    const busy = await api.post('/agents/chat/completions', { agent_id: agentId, session_id: session.id, query: 'again', stream: false });
    assert.equal(busy.status, 409, 'a second turn of a running session is refused');
    assert.match(busy.body.message, /still running/);
    const stopAt = Date.now();
    const cancel = await api.post(`/tasks/${session.id}/cancel`);
    assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
    assert.equal(cancel.body.data.cancelled, true);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const ended = Date.now() - stopAt;
    assert.ok(ended < 2000, `the stream ended ${ended} ms after the stop`);
    assert.match(text, /Task has been canceled/);
    await eventually(async () => fake.open === 0, 2000, 50);
    const stored = (await api.get(`/agents/${agentId}/sessions/${session.id}`)).body.data.message.at(-1);
    assert.equal(stored.status, 'cancelled');
    assert.equal(stored.content, 'Task has been canceled');
  });

  it('closing the HTTP stream is not a cancel: the turn runs to its end and is recorded', async () => {
    const agentId = await createAgent(api, llmCanvas());
    fake.behaviour.answer = fixedAnswer('one two three four five six');
    fake.behaviour.tokenDelayMs = 100;
    const session = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;
    const controller = new AbortController();
    const res = await fetch(new URL('/api/v1/agents/chat/completions', api.url), {
      method: 'POST',
      headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_id: agentId, session_id: session.id, query: 'go', stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('"event":"message"')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const stored = await eventually(async () => {
      const last = (await api.get(`/agents/${agentId}/sessions/${session.id}`)).body.data.message.at(-1);
      return last.role === 'assistant' && last.content !== 'Hi, I am an agent.' ? last : undefined;
    }, 10_000, 100);
    assert.equal(stored.content, 'one two three four five six');
    assert.equal(stored.status, undefined);
  });

  it('the bot route streams by default and passes chat_template_kwargs to the model call', async () => {
    const agentId = await createAgent(api, llmCanvas());
    const res = await postSse(api, `/agentbots/${agentId}/completions`, { query: 'bot', chat_template_kwargs: { enable_thinking: false } });
    assert.equal(res.status, 200);
    assert.equal(streamedText(res.frames.filter((f) => f !== '[DONE]')), 'Echo: bot');
    assert.deepEqual(chatRequests().at(-1)!.body.chat_template_kwargs, { enable_thinking: false });
  });

  it('structured output: an LLM with an output schema asks for JSON and returns it under structured', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const dsl = canvas([
      ['begin', 'Begin', {}, ['LLM:Extract']],
      ['LLM:Extract', 'LLM', { sys_prompt: 'Extract the city.', outputs: { structured: { type: 'object', value: {}, schema } } }, ['Message:Out']],
      ['Message:Out', 'Message', { content: ['City: {LLM:Extract@structured.city}'] }, []],
    ]);
    const agentId = await createAgent(api, dsl);
    fake.behaviour.answer = fixedAnswer('{"city": "Oslo"}');
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'I live in Oslo', stream: false, return_trace: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.data.content, 'City: Oslo');
    assert.deepEqual(res.body.data.data.structured, { 'LLM:Extract': { city: 'Oslo' } });
    assert.deepEqual(chatRequests().at(-1)!.body.response_format.json_schema.schema, schema);
    assert.deepEqual(res.body.data.data.trace.map((t: any) => t.component_id), ['begin', 'LLM:Extract', 'Message:Out']);
  });
});
