import assert from 'node:assert/strict';
import { ToolCallAssembler } from '../../../src/models/openai-compat.js';
import { createModel } from '../../../src/models/registry.js';
import type { ChatDelta, ChatMessage, ChatModel, ToolCall, ToolSpec } from '../../../src/models/types.js';
import {
  DEFAULT_OLLAMA_MODELS,
  startFakeOllama,
  startFakeOpenAI,
  toolRoundTrip,
  type FakeOpenAI,
  type FakeServer,
} from '../../fakes/index.js';
import { collect, joined, rejectsModelError } from './helpers.js';

const SEARCH: ToolSpec = {
  name: 'search',
  description: 'Search the knowledge base.',
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
};

const QUESTION: ChatMessage = { role: 'user', content: 'What marks a trail?' };
const TOOL_RESULT = 'Hikers use cairns to mark trails.';

/** The one tool_calls delta of a stream (asserting there is exactly one). */
function onlyToolCalls(deltas: ChatDelta[]): ToolCall[] {
  const found = deltas.filter((d) => d.kind === 'tool_calls');
  assert.equal(found.length, 1, `expected one tool_calls delta, got ${found.length}`);
  return (found[0] as Extract<ChatDelta, { kind: 'tool_calls' }>).calls;
}

/** The conversation after the model's tool call: its call, then our result for it. */
function withToolResult(calls: ToolCall[], result = TOOL_RESULT): ChatMessage[] {
  return [
    QUESTION,
    { role: 'assistant', content: '', tool_calls: calls },
    ...calls.map((c): ChatMessage => ({ role: 'tool', content: result, tool_call_id: c.id })),
  ];
}

describe('models: tool calls through OpenAIChatModel (fake OpenAI server)', () => {
  let fake: FakeOpenAI;
  let model: ChatModel;
  beforeEach(async () => {
    fake = await startFakeOpenAI({ answer: toolRoundTrip('search', (q) => ({ query: q }), (result) => `Answer: ${result}`) });
    model = createModel({ factory: 'OpenAI-API-Compatible', model_name: 'fake-chat', model_type: 'chat', base_url: fake.baseUrl });
  });
  afterEach(() => fake.close());

  it('a streamed tool call is assembled from its pieces and reported once, after the text, with the JSON arguments', async () => {
    const deltas = await collect(model.stream([QUESTION], { tools: [SEARCH] }));
    const calls = onlyToolCalls(deltas);
    assert.deepEqual(calls, [{ id: 'call_1', name: 'search', arguments: JSON.stringify({ query: QUESTION.content }) }]);
    assert.equal(joined(deltas, 'answer'), '');
    assert.deepEqual(deltas.map((d) => d.kind), ['tool_calls', 'usage'], 'tool calls, then usage, close the stream');

    const sent = fake.requests.at(-1)!.body;
    assert.deepEqual(sent.tools, [{ type: 'function', function: SEARCH }], 'tools go out in OpenAI function format');
  });

  it('the tool result goes back as a tool message answering the call id, and the model answers from it', async () => {
    const calls = onlyToolCalls(await collect(model.stream([QUESTION], { tools: [SEARCH] })));
    fake.clear();
    const deltas = await collect(model.stream(withToolResult(calls), { tools: [SEARCH] }));
    assert.equal(joined(deltas, 'answer'), `Answer: ${TOOL_RESULT}`);
    assert.ok(!deltas.some((d) => d.kind === 'tool_calls'), 'no further tool call');

    // The fake checks these as OpenAI does (a tool message must answer a preceding call); here, the exact shape.
    const [, assistant, tool] = fake.requests[0]!.body.messages;
    assert.deepEqual(assistant, {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'search', arguments: calls[0]!.arguments } }],
    });
    assert.deepEqual(tool, { role: 'tool', content: TOOL_RESULT, tool_call_id: 'call_1' });
  });

  it('several calls in one answer keep their order, ids and arguments', async () => {
    fake.behaviour.answer = () => ({
      answer: 'Let me look.',
      tool_calls: [
        { name: 'search', arguments: { query: 'cairn history and the people who built the very first ones' } },
        { name: 'lookup', arguments: { id: 7, tags: ['a', 'b'] } },
      ],
    });
    const deltas = await collect(model.stream([QUESTION], { tools: [SEARCH, { ...SEARCH, name: 'lookup' }] }));
    assert.equal(joined(deltas, 'answer'), 'Let me look.');
    const calls = onlyToolCalls(deltas);
    assert.deepEqual(calls.map((c) => [c.id, c.name, JSON.parse(c.arguments)]), [
      ['call_1', 'search', { query: 'cairn history and the people who built the very first ones' }],
      ['call_2', 'lookup', { id: 7, tags: ['a', 'b'] }],
    ]);
  });

  it('complete() returns the text and ignores tool calls, while still offering the tools', async () => {
    fake.behaviour.answer = () => ({ answer: 'Checking.', tool_calls: [{ name: 'search', arguments: { query: 'x' } }] });
    assert.equal(await model.complete([QUESTION], { tools: [SEARCH] }), 'Checking.');
    fake.behaviour.answer = () => ({ answer: '', tool_calls: [{ name: 'search', arguments: { query: 'x' } }] });
    assert.equal(await model.complete([QUESTION], { tools: [SEARCH] }), '', 'content null reads as empty text');
    assert.equal(fake.requests.at(-1)!.body.stream, false);
    assert.deepEqual(fake.requests.at(-1)!.body.tools, [{ type: 'function', function: SEARCH }]);
  });

  it('a tool message that answers no call is refused by the server and surfaces as a ModelError', async () => {
    const err = await rejectsModelError(
      () => collect(model.stream([QUESTION, { role: 'tool', content: 'orphan', tool_call_id: 'call_9' }])),
      /HTTP 400/,
      /must be a response to a preceeding message with 'tool_calls'/,
    );
    assert.equal(err.status, 400);
  });

  it('a stream cancelled while tool-call arguments arrive stops at once and reports no half-built call', async function () {
    this.timeout(5000);
    fake.behaviour.tokenDelayMs = 40;
    fake.behaviour.answer = () => ({ answer: '', tool_calls: [{ name: 'search', arguments: { query: 'x'.repeat(400) } }] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user cancelled')), 150);
    const seen: ChatDelta[] = [];
    const start = performance.now();
    await assert.rejects(async () => {
      for await (const d of model.stream([QUESTION], { tools: [SEARCH], signal: controller.signal })) seen.push(d);
    }, /user cancelled/);
    assert.ok(performance.now() - start < 1000, 'stopped well before the ~2 s the arguments take');
    assert.deepEqual(seen, []);
  });
});

describe('models: ToolCallAssembler (streamed OpenAI tool-call pieces)', () => {
  it('joins argument pieces by index even when calls interleave', () => {
    const a = new ToolCallAssembler();
    a.push([{ index: 0, id: 'c0', function: { name: 'search', arguments: '' } }]);
    a.push([{ index: 1, id: 'c1', function: { name: 'lookup', arguments: '{"id"' } }]);
    a.push([{ index: 0, function: { arguments: '{"query":' } }]);
    a.push([{ index: 1, function: { arguments: ':7}' } }, { index: 0, function: { arguments: '"x"}' } }]);
    assert.deepEqual(a.result(), [
      { id: 'c0', name: 'search', arguments: '{"query":"x"}' },
      { id: 'c1', name: 'lookup', arguments: '{"id":7}' },
    ]);
  });

  it('follows ids when a server omits the index, and fills in what a server leaves out', () => {
    const a = new ToolCallAssembler();
    a.push([{ id: 'x1', function: { name: 'one', arguments: '{"a":' } }]);
    a.push([{ function: { arguments: '1}' } }]);
    a.push([{ id: 'x2', function: { name: 'two', arguments: { b: 2 } } }]);
    a.push([{ index: 5, function: { name: 'three' } }]);
    const [one, two, three] = a.result();
    assert.deepEqual(one, { id: 'x1', name: 'one', arguments: '{"a":1}' });
    assert.deepEqual(two, { id: 'x2', name: 'two', arguments: '{"b":2}' }, 'object arguments are serialised');
    assert.equal(three!.arguments, '{}', 'no arguments read as an empty object');
    assert.match(three!.id, /^call_[0-9a-f]{24}$/, 'a call without id gets one');
  });

  it('a name repeated on every piece is not doubled', () => {
    const a = new ToolCallAssembler();
    a.push([{ index: 0, id: 'c', function: { name: 'search', arguments: '{' } }]);
    a.push([{ index: 0, id: 'c', function: { name: 'search', arguments: '}' } }]);
    assert.deepEqual(a.result(), [{ id: 'c', name: 'search', arguments: '{}' }]);
  });
});

describe('models: tool calls through OllamaChatModel (fake Ollama server)', () => {
  let fake: FakeServer;
  let model: ChatModel;
  beforeEach(async () => {
    fake = await startFakeOllama({
      answer: toolRoundTrip('search', (q) => ({ query: q }), (result) => `Answer: ${result}`),
      models: [...DEFAULT_OLLAMA_MODELS, { name: 'gemma:2b', capabilities: ['completion'] }],
    });
    model = createModel({ factory: 'Ollama', model_name: 'llama3.2', model_type: 'chat', base_url: fake.url });
  });
  afterEach(() => fake.close());

  const chatRequests = () => fake.requests.filter((r) => r.path === '/api/chat');

  it('message.tool_calls become one tool_calls delta with an id and the arguments as JSON text', async () => {
    const deltas = await collect(model.stream([QUESTION], { tools: [SEARCH] }));
    const calls = onlyToolCalls(deltas);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.name, 'search');
    assert.deepEqual(JSON.parse(calls[0]!.arguments), { query: QUESTION.content });
    assert.match(calls[0]!.id, /^call_[0-9a-f]{24}$/, 'Ollama sends no id: the client makes one');
    assert.deepEqual(deltas.map((d) => d.kind), ['tool_calls', 'usage']);
    assert.deepEqual(chatRequests()[0]!.body.tools, [{ type: 'function', function: SEARCH }]);
  });

  it('the call goes back with object arguments, the result as a tool message naming its tool, and the model answers from it', async () => {
    const calls = onlyToolCalls(await collect(model.stream([QUESTION], { tools: [SEARCH] })));
    fake.clear();
    const deltas = await collect(model.stream(withToolResult(calls), { tools: [SEARCH] }));
    assert.equal(joined(deltas, 'answer'), `Answer: ${TOOL_RESULT}`);
    const [, assistant, tool] = chatRequests()[0]!.body.messages;
    assert.deepEqual(assistant, {
      role: 'assistant',
      content: '',
      tool_calls: [{ function: { name: 'search', arguments: { query: QUESTION.content } } }],
    });
    assert.deepEqual(tool, { role: 'tool', content: TOOL_RESULT, tool_name: 'search' });
  });

  it('several calls on separate lines all arrive in the one tool_calls delta, in order', async () => {
    fake.behaviour.answer = () => ({
      answer: '',
      tool_calls: [
        { name: 'search', arguments: { query: 'a' } },
        { name: 'lookup', arguments: { id: 2 } },
      ],
    });
    const calls = onlyToolCalls(await collect(model.stream([QUESTION], { tools: [SEARCH] })));
    assert.deepEqual(calls.map((c) => [c.name, c.arguments]), [
      ['search', '{"query":"a"}'],
      ['lookup', '{"id":2}'],
    ]);
    assert.notEqual(calls[0]!.id, calls[1]!.id);
  });

  it('a model without the tools capability refuses tools with a ModelError naming it', async () => {
    const gemma = createModel({ factory: 'Ollama', model_name: 'gemma:2b', model_type: 'chat', base_url: fake.url });
    await rejectsModelError(() => collect(gemma.stream([QUESTION], { tools: [SEARCH] })), /Ollama/, /gemma:2b does not support tools/);
  });

  it('a stream cancelled through its AbortSignal stops with the caller\'s reason', async () => {
    fake.behaviour.tokenDelayMs = 50;
    fake.behaviour.answer = () => ({ answer: 'a b c d e f g h', tool_calls: [{ name: 'search', arguments: { query: 'q' } }] });
    const controller = new AbortController();
    const seen: ChatDelta[] = [];
    await assert.rejects(async () => {
      for await (const d of model.stream([QUESTION], { tools: [SEARCH], signal: controller.signal })) {
        seen.push(d);
        if (seen.length === 2) controller.abort(new Error('user cancelled'));
      }
    }, /user cancelled/);
    assert.equal(seen.length, 2);
    assert.ok(seen.every((d) => d.kind === 'answer'));
  });
});
