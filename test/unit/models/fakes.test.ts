import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { createModel } from '../../../src/models/registry.js';
import { cosine } from '../../../src/models/vector.js';
import {
  callGate,
  echoAnswer,
  fakeEmbedding,
  overlapScore,
  splitTokens,
  startFakes,
  tokensAnswer,
  toolRoundTrip,
  type FakeChatRequest,
  type FakeMessage,
  type Fakes,
} from '../../fakes/index.js';

/** The JSON payloads of an SSE body, `[DONE]` excluded. */
async function sseEvents(res: Response): Promise<any[]> {
  return (await res.text())
    .split('\n\n')
    .map((e) => e.replace(/^data: /, '').trim())
    .filter((e) => e && e !== '[DONE]')
    .map((e) => JSON.parse(e));
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('test fakes', () => {
  let fakes: Fakes;
  before(async () => {
    fakes = await startFakes();
  });
  after(() => fakes.close());

  it('deterministic helpers', () => {
    assert.equal(splitTokens('Hello  big world\n').join(''), 'Hello  big world\n');
    assert.deepEqual(splitTokens('a b'), ['a', ' b']);
    assert.deepEqual(fakeEmbedding('same words', 16), fakeEmbedding('Same, words!', 16));
    assert.ok(Math.abs(Math.hypot(...fakeEmbedding('x y z', 16)) - 1) < 1e-12);
    assert.ok(cosine(fakeEmbedding('red apples and pears', 64), fakeEmbedding('red apples', 64)) > cosine(fakeEmbedding('red apples', 64), fakeEmbedding('blue sky', 64)));
    assert.equal(overlapScore('a b c d', 'b d e'), 0.5);
    assert.equal(overlapScore('', 'x'), 0);
    assert.deepEqual(echoAnswer([{ role: 'user', content: 'first' }, { role: 'assistant', content: 'r' }, { role: 'user', content: 'last' }], 'm'), { answer: 'Echo: last' });
  });

  it('streams with the scripted time to first token and per-token delay', async function () {
    this.timeout(10_000);
    const fake = fakes.openai;
    Object.assign(fake.behaviour, { ttftMs: 200, tokenDelayMs: 20, answer: tokensAnswer(20) });
    try {
      const model = createModel({ factory: 'OpenAI-API-Compatible', model_name: 'm', model_type: 'chat', base_url: fake.baseUrl });
      const start = performance.now();
      let first = 0;
      let count = 0;
      for await (const d of model.stream([{ role: 'user', content: 'go' }])) {
        if (d.kind === 'usage') continue; // the closing usage chunk is not a token
        if (count++ === 0) first = performance.now() - start;
        assert.equal(d.kind, 'answer');
      }
      const total = performance.now() - start;
      assert.equal(count, 20);
      assert.ok(first >= 190 && first < 600, `ttft ${first}`);
      assert.ok(total >= 190 + 19 * 18 && total < 2000, `total ${total}`);
    } finally {
      Object.assign(fake.behaviour, { ttftMs: 0, tokenDelayMs: 0, answer: echoAnswer });
    }
  });

  it('serves base64 embeddings to the plain OpenAI SDK (its default encoding)', async () => {
    const client = new OpenAI({ baseURL: fakes.openai.baseUrl, apiKey: 'k' });
    const res = await client.embeddings.create({ model: 'e', input: ['hello world'] });
    assert.equal(fakes.openai.requests.at(-1)!.body.encoding_format, 'base64');
    const v = res.data[0]!.embedding;
    assert.ok(cosine(v, fakeEmbedding('hello world', 64)) > 0.99999);
  });

  it('lists models and records requests', async () => {
    const res = await fetch(`${fakes.xinference.baseUrl}/models`);
    const body = (await res.json()) as { data: { id: string }[] };
    assert.ok(body.data.length > 0);
    assert.deepEqual(fakes.xinference.requests.at(-1), { method: 'GET', path: '/v1/models', headers: fakes.xinference.requests.at(-1)!.headers, body: undefined });
  });

  describe('scripted tool calls', () => {
    const TOOLS = [{ type: 'function', function: { name: 'search', description: 'd', parameters: { type: 'object' } } }];
    afterEach(() => {
      fakes.openai.behaviour.answer = echoAnswer;
      fakes.ollama.behaviour.answer = echoAnswer;
    });

    it('OpenAI stream: a head chunk (index, id, type, name), argument pieces by index, finish_reason tool_calls, then usage', async () => {
      fakes.openai.behaviour.answer = () => ({ answer: '', tool_calls: [{ name: 'search', arguments: { query: 'stone piles' }, id: 'call_x' }] });
      const res = await post(`${fakes.openai.baseUrl}/chat/completions`, {
        model: 'm',
        stream: true,
        stream_options: { include_usage: true },
        tools: TOOLS,
        messages: [{ role: 'user', content: 'q' }],
      });
      const events = await sseEvents(res);
      const deltas = events.filter((e) => e.choices.length).map((e) => e.choices[0].delta);
      assert.deepEqual(deltas[0], {
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 'search', arguments: '' } }],
      });
      const pieces = deltas.slice(1, -1).map((d) => d.tool_calls[0]);
      assert.ok(pieces.length > 1, 'arguments arrive in several pieces');
      assert.ok(pieces.every((p) => p.index === 0 && !('id' in p)));
      assert.equal(pieces.map((p) => p.function.arguments).join(''), '{"query":"stone piles"}');
      assert.equal(events.at(-2).choices[0].finish_reason, 'tool_calls');
      assert.deepEqual(events.at(-1).choices, []);
      assert.equal(events.at(-1).usage.prompt_tokens, 1);
    });

    it('OpenAI non-stream: message.tool_calls with JSON-text arguments, content null, finish_reason tool_calls', async () => {
      fakes.openai.behaviour.answer = () => ({ answer: '', tool_calls: [{ name: 'search', arguments: { query: 'a' } }] });
      const client = new OpenAI({ baseURL: fakes.openai.baseUrl, apiKey: 'k' });
      const res = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'q' }], tools: TOOLS as any });
      const choice = res.choices[0]!;
      assert.equal(choice.finish_reason, 'tool_calls');
      assert.equal(choice.message.content, null);
      assert.deepEqual(choice.message.tool_calls, [{ id: choice.message.tool_calls![0]!.id, type: 'function', function: { name: 'search', arguments: '{"query":"a"}' } }]);
      assert.match(choice.message.tool_calls![0]!.id, /^call_\d+$/);
    });

    it('scripts see tool calls and tool results in the messages, and the tools and schema asked for', async () => {
      let seen: { messages: FakeMessage[]; request?: FakeChatRequest } | undefined;
      fakes.openai.behaviour.answer = (messages, _model, request) => {
        seen = { messages, request };
        return { answer: 'ok' };
      };
      const schema = { type: 'object' };
      await post(`${fakes.openai.baseUrl}/chat/completions`, {
        model: 'm',
        tools: TOOLS,
        response_format: { type: 'json_schema', json_schema: { name: 'output', schema } },
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"query":"q"}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'result' },
        ],
      });
      assert.deepEqual(seen!.messages.slice(1), [
        { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'search', arguments: { query: 'q' } }] },
        { role: 'tool', content: 'result', tool_call_id: 'c1' },
      ]);
      assert.deepEqual(seen!.request!.tools, [TOOLS[0]!.function]);
      assert.deepEqual(seen!.request!.json_schema, schema);
    });

    it('OpenAI refuses tool messages as OpenAI does: unanswered calls and orphan results are 400s', async () => {
      const call = { id: 'c1', type: 'function', function: { name: 'search', arguments: '{}' } };
      const unanswered = await post(`${fakes.openai.baseUrl}/chat/completions`, {
        model: 'm',
        messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'user', content: 'again' }],
      });
      assert.equal(unanswered.status, 400);
      assert.match(((await unanswered.json()) as any).error.message, /did not have response messages: c1/);
      const orphan = await post(`${fakes.xinference.baseUrl}/chat/completions`, {
        model: 'm',
        messages: [{ role: 'user', content: 'q' }, { role: 'tool', tool_call_id: 'c1', content: 'r' }],
      });
      assert.equal(orphan.status, 400);
      assert.match(((await orphan.json()) as any).detail, /must be a response to a preceeding message/);
    });

    it('Ollama: message.tool_calls with object arguments, one line per call; string arguments sent back are a 400', async () => {
      fakes.ollama.behaviour.answer = toolRoundTrip('search', { query: 'x' }, (r) => `got ${r}`);
      const res = await post(`${fakes.ollama.url}/api/chat`, { model: 'llama3.2', tools: TOOLS, messages: [{ role: 'user', content: 'q' }] });
      const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
      assert.deepEqual(lines[0].message.tool_calls, [{ function: { index: 0, name: 'search', arguments: { query: 'x' } } }]);
      assert.equal(lines.at(-1).done, true);

      const bad = await post(`${fakes.ollama.url}/api/chat`, {
        model: 'llama3.2',
        stream: false,
        messages: [{ role: 'assistant', content: '', tool_calls: [{ function: { name: 'search', arguments: '{"query":"x"}' } }] }],
      });
      assert.equal(bad.status, 400);
      assert.match(((await bad.json()) as any).error, /cannot unmarshal string/);
    });

    it('records every request body until clear()', async () => {
      fakes.openai.clear();
      assert.equal(fakes.openai.requests.length, 0);
      await post(`${fakes.openai.baseUrl}/chat/completions`, { model: 'm', seed: 3, messages: [{ role: 'user', content: 'q' }] });
      assert.equal(fakes.openai.requests.length, 1);
      assert.equal(fakes.openai.requests[0]!.body.seed, 3);
      fakes.openai.clear();
      assert.deepEqual(fakes.openai.requests, []);
    });
  });

  it('a call gate holds the chat calls it picks until released, and lets go of a call whose client left', async () => {
    const gate = callGate((messages) => messages.at(-1)!.content.startsWith('hold'));
    fakes.openai.behaviour.gate = gate;
    fakes.ollama.behaviour.gate = gate;
    const until = async (what: () => boolean) => {
      for (const deadline = Date.now() + 5000; !what(); await new Promise((r) => setTimeout(r, 10))) assert.ok(Date.now() < deadline, `held ${gate.held}`);
    };
    try {
      const openai = post(`${fakes.openai.baseUrl}/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'hold openai' }] });
      const ollama = post(`${fakes.ollama.url}/api/chat`, { model: 'llama3.2', stream: false, messages: [{ role: 'user', content: 'hold ollama' }] });
      const leaving = new AbortController();
      const left = fetch(`${fakes.openai.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hold and leave' }] }),
        signal: leaving.signal,
      }).catch((err: Error) => err.name);
      await until(() => gate.held === 3);

      const free = await post(`${fakes.openai.baseUrl}/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'not picked' }] });
      assert.equal(((await free.json()) as any).choices[0].message.content, 'Echo: not picked', 'a call the gate does not pick is answered');
      leaving.abort();
      assert.equal(await left, 'AbortError');
      await until(() => gate.held === 2);

      gate.release();
      assert.equal(((await (await openai).json()) as any).choices[0].message.content, 'Echo: hold openai');
      assert.equal(((await (await ollama).json()) as any).message.content, 'Echo: hold ollama');
      assert.equal(gate.held, 0);
      const later = await post(`${fakes.openai.baseUrl}/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'hold again' }] });
      assert.equal(((await later.json()) as any).choices[0].message.content, 'Echo: hold again', 'once released, every call passes');
    } finally {
      gate.release();
      fakes.openai.behaviour.gate = undefined;
      fakes.ollama.behaviour.gate = undefined;
    }
  });

  it('fails the scripted number of times with the provider-shaped body, then recovers', async () => {
    fakes.ollama.behaviour.failure = { status: 500, message: 'boom', path: '/api/tags', times: 1 };
    const first = await fetch(`${fakes.ollama.url}/api/tags`);
    assert.equal(first.status, 500);
    assert.deepEqual(await first.json(), { error: 'boom' });
    assert.equal((await fetch(`${fakes.ollama.url}/api/tags`)).status, 200);
    assert.equal(await (await fetch(`${fakes.ollama.url}/`)).text(), 'Ollama is running');
  });
});
