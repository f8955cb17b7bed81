import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { echoAnswer, fixedAnswer, toolRoundTrip, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import type { Api } from './client.js';
import { parsedDataset, userWithModel } from './chat-helpers.js';
import { createAgent, fixture, llmCanvas, messageCanvas } from './agent-helpers.js';

/** Extra body keys, as the openai client sends them (top level of the JSON body). */
type Extra = Record<string, unknown>;
type NonStream = OpenAI.ChatCompletionCreateParamsNonStreaming & Extra;
type Stream = OpenAI.ChatCompletionCreateParamsStreaming & Extra;

/** The official client on the agent route `/api/v1/agents_openai/{agent_id}/chat/completions`. */
function agentClient(api: Api, agentId: string): OpenAI {
  return new OpenAI({ baseURL: `${api.url}/api/v1/agents_openai/${agentId}`, apiKey: api.key!, maxRetries: 0 });
}

/** The official client on `POST /api/v1/agents/chat/completions` (with agent_id and "openai-compatible": true as extra body keys). */
function flagClient(api: Api): OpenAI {
  return new OpenAI({ baseURL: `${api.url}/api/v1/agents`, apiKey: api.key!, maxRetries: 0 });
}

async function readAll(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<OpenAI.ChatCompletionChunk[]> {
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}

const text = (chunks: OpenAI.ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]!.delta.content ?? '').join('');

describe('agents: the OpenAI-compatible routes with the openai npm client', function () {
  this.timeout(60_000);
  let fake: FakeOpenAI;
  let api: Api;
  let llmAgent: string;

  before(async () => {
    fake = await startFakeOpenAI();
    ({ api } = await userWithModel('agents-openai', fake.baseUrl));
    llmAgent = await createAgent(api, llmCanvas());
  });
  beforeEach(() => {
    fake.behaviour = { ...fake.behaviour, answer: echoAnswer, ttftMs: 0, tokenDelayMs: 0, failure: undefined };
  });
  after(() => fake.close());

  const chatRequests = () => fake.requests.filter((r) => r.path === '/v1/chat/completions');

  /** Both ways to reach an agent in OpenAI mode, as (label, client, extra body keys). */
  const routes = (agentId: string): [string, OpenAI, Extra][] => [
    ['/agents_openai/{id}/chat/completions', agentClient(api, agentId), {}],
    ['/agents/chat/completions with "openai-compatible": true', flagClient(api), { agent_id: agentId, 'openai-compatible': true }],
  ];

  it('non-stream answers a chat.completion: the last user message is the question, model is echoed, id is the session', async () => {
    for (const [label, client, extra] of routes(llmAgent)) {
      const res = await client.chat.completions.create({
        model: 'any-model-name',
        messages: [
          { role: 'system', content: 'ignored' },
          { role: 'user', content: 'earlier' },
          { role: 'assistant', content: 'whatever' },
          { role: 'user', content: `hello from ${label}` },
        ],
        ...extra,
      } as NonStream);
      assert.equal(res.object, 'chat.completion', label);
      assert.equal(res.model, 'any-model-name');
      assert.match(res.id, /^[0-9a-f]{32}$/);
      assert.equal(res.choices.length, 1);
      assert.equal(res.choices[0]!.message.role, 'assistant');
      assert.equal(res.choices[0]!.message.content, `Echo: hello from ${label}`);
      assert.equal(res.choices[0]!.finish_reason, 'stop');
      assert.equal(res.choices[0]!.index, 0);
      assert.ok(res.usage!.prompt_tokens > 0 && res.usage!.completion_tokens > 0, JSON.stringify(res.usage));
      assert.equal(res.usage!.total_tokens, res.usage!.prompt_tokens + res.usage!.completion_tokens);
      assert.equal(chatRequests().at(-1)!.body.model, 'fake-chat', "the agent's own model answers, whatever `model` says");
      const session = await api.get(`/agents/${llmAgent}/sessions/${res.id}`);
      assert.equal(session.status, 200, 'the completion id is the session id');
      assert.deepEqual(session.body.data.message.slice(-2).map((m: any) => [m.role, m.content]), [
        ['user', `hello from ${label}`],
        ['assistant', `Echo: hello from ${label}`],
      ]);
    }
  });

  it('stream answers chat.completion.chunk deltas as the model produces them, ending with finish_reason stop and usage', async () => {
    fake.behaviour.answer = fixedAnswer('Stone cairns mark the mountain trails');
    fake.behaviour.tokenDelayMs = 40;
    for (const [label, client, extra] of routes(llmAgent)) {
      const stream = await client.chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'what marks trails?' }], ...extra } as Stream);
      const chunks = await readAll(stream);
      assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk'), label);
      assert.ok(chunks.every((c) => c.id === chunks[0]!.id && c.model === 'm'));
      assert.match(chunks[0]!.id, /^[0-9a-f]{32}$/);
      assert.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
      assert.equal(text(chunks), 'Stone cairns mark the mountain trails');
      assert.ok(chunks.filter((c) => c.choices[0]!.delta.content).length > 1, 'the answer arrives in several deltas');
      const last = chunks.at(-1)!;
      assert.equal(last.choices[0]!.finish_reason, 'stop');
      assert.ok(chunks.slice(0, -1).every((c) => c.choices[0]!.finish_reason === null));
      assert.ok(last.usage!.total_tokens > 0);
    }
  });

  it('the raw stream uses "data: " frames and ends with data: [DONE]', async () => {
    const res = await fetch(`${api.url}/api/v1/agents_openai/${llmAgent}/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'raw' }] }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/event-stream/);
    const raw = await res.text();
    assert.ok(raw.startsWith('data: {'), raw.slice(0, 40));
    assert.ok(raw.endsWith('data: [DONE]\n\n'), raw.slice(-40));
  });

  it('session_id in the body continues a session: the session history is the context and the turns land in one session', async () => {
    for (const [label, client, extra] of routes(llmAgent)) {
      const first = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'first' }], ...extra } as NonStream);
      const sessionId = first.id;
      const stream = await client.chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'second' }], session_id: sessionId, ...extra } as Stream);
      const chunks = await readAll(stream);
      assert.equal(chunks[0]!.id, sessionId, label);
      assert.equal(text(chunks), 'Echo: second');
      const third = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'third' }], session_id: sessionId, ...extra } as NonStream);
      assert.equal(third.id, sessionId);
      assert.deepEqual(chatRequests().at(-1)!.body.messages.map((m: any) => [m.role, m.content]), [
        ['system', 'Be brief.'],
        ['user', 'first'],
        ['assistant', 'Echo: first'],
        ['user', 'second'],
        ['assistant', 'Echo: second'],
        ['user', 'third'],
      ]);
      const session = (await api.get(`/agents/${llmAgent}/sessions/${sessionId}`)).body.data;
      assert.deepEqual(session.message.filter((m: any) => m.role === 'user').map((m: any) => m.content), ['first', 'second', 'third']);
    }
  });

  it('a session created with POST /agents/{id}/sessions is continued too (Begin prologue first)', async () => {
    const session = (await api.post(`/agents/${llmAgent}/sessions`, {})).body.data;
    const res = await agentClient(api, llmAgent).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'in a session' }], session_id: session.id } as NonStream);
    assert.equal(res.id, session.id);
    const stored = (await api.get(`/agents/${llmAgent}/sessions/${session.id}`)).body.data;
    assert.deepEqual(stored.message.map((m: any) => m.content), ['Hi, I am an agent.', 'in a session', 'Echo: in a session']);
  });

  it('a canvas without a model answers through the OpenAI route too (Message template); nothing retrieved, no reference chunks', async () => {
    const agentId = await createAgent(api, messageCanvas('Fixed reply for {sys.query}'));
    const res = await agentClient(api, agentId).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'q' }] });
    assert.equal(res.choices[0]!.message.content, 'Fixed reply for q');
    assert.deepEqual((res.choices[0]!.message as any).reference?.chunks ?? [], []);
    const chunks = await readAll(await agentClient(api, agentId).chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'q' }] }));
    assert.equal(text(chunks), 'Fixed reply for q');
    assert.deepEqual((chunks.at(-1)!.choices[0]!.delta as any).reference?.chunks ?? [], []);
  });

  it("models.list() on the agent's route lists the models its LLM and Agent components use first", async () => {
    const ids = [];
    for await (const m of agentClient(api, llmAgent).models.list()) ids.push(m.id);
    const defaults = (await api.get('/models/default')).body.data;
    assert.equal(ids[0], defaults.chat_model, 'an LLM node without llm_id runs on the workspace default');
    assert.ok(ids.includes('SmolLM2-135M-Instruct@Builtin'), ids.join(', '));
    await assert.rejects(agentClient(api, '0'.repeat(32)).models.list(), (err: unknown) => err instanceof OpenAI.NotFoundError);
  });

  describe('a dataset chatbot (Begin → Agent with the Retrieval tool → Message)', () => {
    let agentId: string;

    before(async function () {
      this.timeout(60_000);
      const ds = await parsedDataset(api, `agents-openai-docs-${Date.now()}`, { 'cairns.txt': 'A cairn is a human-made pile of stones. Hikers use cairns to mark trails.' });
      const dsl = fixture('your_starter_dataset_chatbot');
      dsl.components['Agent:StalePandasDream'].obj.params.tools[0].params.kb_ids = [ds.id];
      agentId = await createAgent(api, dsl);
    });

    const script = () => toolRoundTrip('search_my_dateset', (q) => ({ query: q }), (result) => (result.includes('mark trails') ? 'Hikers use cairns to mark trails [ID:0].' : 'Nothing found.'));

    it('non-stream: message.reference carries the retrieved chunks', async () => {
      for (const [label, client, extra] of routes(agentId)) {
        fake.behaviour.answer = script();
        const res = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'what do hikers use cairns for' }], ...extra } as NonStream);
        assert.equal(res.choices[0]!.message.content, 'Hikers use cairns to mark trails [ID:0].', label);
        const reference = (res.choices[0]!.message as any).reference;
        assert.equal(reference.chunks.length, 1);
        assert.match(reference.chunks[0].content, /mark trails/);
        assert.equal(reference.chunks[0].document_name, 'cairns.txt');
      }
    });

    it('stream: only the final chunk carries delta.reference', async () => {
      for (const [label, client, extra] of routes(agentId)) {
        fake.behaviour.answer = script();
        const chunks = await readAll(await client.chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'what do hikers use cairns for' }], ...extra } as Stream));
        assert.equal(text(chunks), 'Hikers use cairns to mark trails [ID:0].', label);
        const last = chunks.at(-1)!;
        assert.equal(last.choices[0]!.finish_reason, 'stop');
        assert.equal((last.choices[0]!.delta as any).reference.chunks[0].document_name, 'cairns.txt');
        assert.ok(chunks.slice(0, -1).every((c) => (c.choices[0]!.delta as any).reference === undefined));
      }
    });
  });

  describe('errors', () => {
    it('no messages is a 400 the client raises (BadRequestError) and starts no run', async () => {
      for (const [label, client, extra] of routes(llmAgent)) {
        const before = (await api.get(`/agents/${llmAgent}/sessions`)).body.total;
        await assert.rejects(
          client.chat.completions.create({ model: 'm', messages: [], ...extra } as NonStream),
          (err: unknown) => err instanceof OpenAI.BadRequestError && /at least one message/.test(err.message),
          label,
        );
        await assert.rejects(
          client.chat.completions.create({ model: 'm', stream: true, messages: [], ...extra } as Stream),
          (err: unknown) => err instanceof OpenAI.BadRequestError,
          label,
        );
        assert.equal((await api.get(`/agents/${llmAgent}/sessions`)).body.total, before, 'no session was created');
      }
      const raw = await fetch(`${api.url}/api/v1/agents_openai/${llmAgent}/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'm' }),
      });
      assert.equal(raw.status, 400);
      const body = await raw.json();
      assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type'], 'the error is in OpenAI\'s shape');
      assert.match(body.error.message, /at least one message/);
    });

    it('an unknown agent or session is a NotFoundError; a bad key an AuthenticationError', async () => {
      const missing = '0'.repeat(32);
      await assert.rejects(agentClient(api, missing).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }), (err: unknown) => err instanceof OpenAI.NotFoundError);
      await assert.rejects(
        flagClient(api).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], agent_id: missing, 'openai-compatible': true } as NonStream),
        (err: unknown) => err instanceof OpenAI.NotFoundError,
      );
      await assert.rejects(
        agentClient(api, llmAgent).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], session_id: missing } as NonStream),
        (err: unknown) => err instanceof OpenAI.NotFoundError && /[Ss]ession/.test(err.message),
      );
      await assert.rejects(
        new OpenAI({ baseURL: `${api.url}/api/v1/agents_openai/${llmAgent}`, apiKey: 'wrong', maxRetries: 0 }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
        (err: unknown) => err instanceof OpenAI.AuthenticationError,
      );
    });

    it('a failed run answers its error as the content, naming the component (RAGFlow: "**ERROR**: ...")', async () => {
      const agentId = await createAgent(api, llmCanvas({ timeout: 1 }));
      fake.behaviour.ttftMs = 30_000;
      const res = await agentClient(api, agentId).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hang' }] });
      assert.match(res.choices[0]!.message.content!, /^\*\*ERROR\*\*: .*LLM:Answer.*timed out/);
      const chunks = await readAll(await agentClient(api, agentId).chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hang' }] }));
      assert.match(text(chunks), /^\*\*ERROR\*\*: .*LLM:Answer.*timed out/);
      assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'stop');
    });
  });
});
