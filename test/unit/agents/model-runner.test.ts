import assert from 'node:assert/strict';
import { runModelCall, type ModelRunDeps } from '../../../src/agents/io/model-runner.js';
import { toolRunEvent } from '../../../src/agents/io/tool-events.js';
import type { RetrievalOutput } from '../../../src/agents/io/retrieval-tool.js';
import type { ModelCall, ToolCallEvent } from '../../../src/agents/run-types.js';
import type { ChatDelta, ChatMessage, ChatModel, ChatOptions } from '../../../src/models/types.js';

/**
 * A chat model that replies from a script: while tools are offered and no tool has answered yet, it
 * calls the first one with `query`; afterwards it answers with the text it was given.
 */
class ScriptedModel implements ChatModel {
  readonly requests: { messages: ChatMessage[]; tools: string[] }[] = [];

  constructor(
    readonly id: string,
    private readonly query: string,
    private readonly answer: (messages: ChatMessage[]) => string,
  ) {}

  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<ChatDelta> {
    this.requests.push({ messages: structuredClone(messages), tools: (options.tools ?? []).map((t) => t.name) });
    const answered = messages.some((m) => m.role === 'tool');
    if (options.tools?.length && !answered) {
      yield { kind: 'tool_calls', text: '', calls: [{ id: 'call_model', name: options.tools[0]!.name, arguments: JSON.stringify({ query: this.query }) }] };
    } else {
      yield { kind: 'answer', text: this.answer(messages) };
    }
    yield { kind: 'usage', text: '', usage: { prompt_tokens: 10, completion_tokens: 5 } };
  }

  async complete(): Promise<string> {
    return '';
  }
}

const PASSAGE = 'In a mountain emergency, call 999 and ask for the police, then mountain rescue.';

function found(): RetrievalOutput {
  const chunk = { id: 'c1', content: PASSAGE, document_id: 'd1', document_name: 'safety.md', dataset_id: 'k1' };
  return {
    formalized_content: `\nID: 0\n├── Title: safety.md\n└── Content:\n${PASSAGE}`,
    json: [chunk],
    reference: { chunks: { c1: chunk }, doc_aggs: { 'safety.md': { doc_name: 'safety.md', doc_id: 'd1', count: 1 } } },
  };
}

function deps(model: ChatModel, queries: string[]): ModelRunDeps {
  return {
    chat: async () => model,
    retrieve: async (query) => (queries.push(query), query.includes('emergency') ? found() : { formalized_content: '', json: [], reference: { chunks: {}, doc_aggs: {} } }),
    mcpServer: async () => Promise.reject(new Error('no MCP here')),
    runCode: async () => Promise.reject(new Error('no sandbox here')),
  };
}

const QUESTION = 'What number should I call in a mountain emergency?';

function agentCall(): ModelCall & { kind: 'Agent' } {
  return {
    kind: 'Agent',
    id: 'Agent:DatasetAnswerer',
    messages: [
      { role: 'system', content: 'Answer from the passages.' },
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi! Ask me about the documents.' },
      { role: 'user', content: QUESTION },
    ],
    settings: {},
    tools: [{ component_name: 'Retrieval', name: 'Retrieval', params: { kb_ids: ['k1'] } }],
    max_rounds: 4,
  };
}

/** Answers with the number the tool result gives, or "no idea". */
const fromResult = (messages: ChatMessage[]) => (messages.some((m) => m.role === 'tool' && m.content.includes('999')) ? 'Call 999 [ID:0].' : 'Call 123-456-7890.');

describe('agents/io/model-runner: the Agent component and its tools', () => {
  it('on the built-in model, an Agent with a Retrieval tool first searches with the user question, then answers from the chunks found', async () => {
    // Offered the tool, this model would search for "1234567890", as SmolLM2-135M did.
    const model = new ScriptedModel('SmolLM2-135M-Instruct@Builtin', '1234567890', fromResult);
    const queries: string[] = [];
    const run = await runModelCall(agentCall(), deps(model, queries), { signal: new AbortController().signal });

    assert.deepEqual(queries, [QUESTION], 'searched once, with the question');
    const first = model.requests[0]!.messages;
    assert.equal(first.at(-2)!.tool_calls?.[0]?.name, 'search_my_dateset', 'the model saw the search as its own first round');
    assert.match(first.at(-1)!.content, /call 999/, 'and its result');
    assert.equal(run.outputs.content, 'Call 999 [ID:0].');
    assert.deepEqual(Object.keys(run.reference.chunks), ['c1'], 'the chunks are the reference');
    assert.deepEqual(run.trace.map((t) => [t.tool_name, t.arguments]), [['search_my_dateset', { query: QUESTION }]]);
    assert.equal(model.requests.length, 1, 'the model answered in its first reply');
  });

  it("on a remote model, RAGFlow's loop is kept: the model chooses the call and its arguments", async () => {
    const model = new ScriptedModel('gpt-4o@OpenAI', 'mountain emergency number', fromResult);
    const queries: string[] = [];
    const run = await runModelCall(agentCall(), deps(model, queries), { signal: new AbortController().signal });
    assert.deepEqual(queries, ['mountain emergency number']);
    assert.deepEqual(model.requests[0]!.tools, ['search_my_dateset'], 'the first reply was offered the tool');
    assert.ok(!model.requests[0]!.messages.some((m) => m.role === 'tool'), 'with nothing searched yet');
    assert.equal(run.outputs.content, 'Call 999 [ID:0].');
  });

  it('on the built-in model, an Agent without a Retrieval tool, or a turn without a question, searches nothing first', async () => {
    const model = new ScriptedModel('SmolLM2-135M-Instruct@Builtin', 'x', () => 'Hello.');
    const queries: string[] = [];
    const noTools = { ...agentCall(), tools: [] };
    assert.equal((await runModelCall(noTools, deps(model, queries), { signal: new AbortController().signal })).outputs.content, 'Hello.');
    const noQuestion = { ...agentCall(), messages: [{ role: 'system' as const, content: 'Summarise.' }] };
    await runModelCall(noQuestion, deps(model, queries), { signal: new AbortController().signal });
    assert.deepEqual(queries, ['x'], 'only the model’s own call searched');
  });

  it('each tool call is reported as it starts and as it ends: name, arguments, what came back in short, duration', async () => {
    const model = new ScriptedModel('SmolLM2-135M-Instruct@Builtin', 'x', fromResult);
    const events: ToolCallEvent[] = [];
    await runModelCall(agentCall(), deps(model, []), { signal: new AbortController().signal, onTool: (e) => events.push(e) });
    assert.deepEqual(
      events.map((e) => e.phase),
      ['started', 'finished'],
    );
    const [started, finished] = events;
    assert.equal(started!.tool_call_id, finished!.tool_call_id);
    assert.deepEqual({ ...started, tool_call_id: '' }, { phase: 'started', tool_call_id: '', tool_name: 'search_my_dateset', tool_type: 'Retrieval', arguments: { query: QUESTION }, via: [] });
    assert.ok(finished!.phase === 'finished');
    assert.equal(finished.result, '1 chunk: safety.md');
    assert.equal(finished.error, null);
    assert.ok(finished.elapsed_time >= 0 && finished.elapsed_time < 5);
    assert.deepEqual(finished.retrieved, { total: 1, chunks: [{ id: 'c1', document_id: 'd1', document_name: 'safety.md', content: PASSAGE }] });
  });

  it('a failing tool is reported with its error, and the model gets the error as the result', async () => {
    const model = new ScriptedModel('gpt-4o@OpenAI', 'x', (m) => `seen: ${m.at(-1)!.content}`);
    const events: ToolCallEvent[] = [];
    const failing: ModelRunDeps = { ...deps(model, []), retrieve: async () => Promise.reject(new Error('no dataset is selected (set kb_ids)')) };
    const run = await runModelCall(agentCall(), failing, { signal: new AbortController().signal, onTool: (e) => events.push(e) });
    const finished = events.at(-1)!;
    assert.ok(finished.phase === 'finished');
    assert.equal(finished.error, 'no dataset is selected (set kb_ids)');
    assert.equal(finished.result, 'Error: no dataset is selected (set kb_ids)');
    assert.equal(run.outputs.content, 'seen: Error: no dataset is selected (set kb_ids)');
  });

  it("a tool call becomes the canvas events tool_started / tool_finished, with RAGFlow's trace fields and path", () => {
    const finished: ToolCallEvent = {
      phase: 'finished',
      tool_call_id: 'call_1',
      tool_name: 'search_my_dateset',
      tool_type: 'Retrieval',
      arguments: { query: 'q' },
      via: ['researcher'],
      elapsed_time: 0.25,
      error: null,
      result: '1 chunk: safety.md',
      retrieved: { total: 1, chunks: [] },
    };
    assert.deepEqual(toolRunEvent('Agent:Lead', finished, 1_700_000_000_500), {
      event: 'tool_finished',
      created_at: 1_700_000_000,
      data: {
        component_id: 'Agent:Lead',
        path: 'Agent:Lead-->researcher-->search_my_dateset',
        tool_call_id: 'call_1',
        tool_name: 'search_my_dateset',
        tool_type: 'Retrieval',
        arguments: { query: 'q' },
        elapsed_time: 0.25,
        error: null,
        result: '1 chunk: safety.md',
        retrieved: { total: 1, chunks: [] },
        created_at: 1_700_000_000,
      },
    });
    assert.equal(toolRunEvent('Agent:Lead', { phase: 'started', tool_call_id: 'c', tool_name: 't', tool_type: 'MCP', arguments: {}, via: [] }).event, 'tool_started');
  });
});
