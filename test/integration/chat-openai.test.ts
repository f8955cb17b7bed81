import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { closedPortUrl, echoAnswer, fixedAnswer, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import type { Api } from './client.js';
import { addModelServer, createChat, parsedDataset, userWithModel } from './chat-helpers.js';

/** The official client, unchanged, pointed at a chat assistant. */
function client(api: Api, chatId: string, path = 'openai'): OpenAI {
  return new OpenAI({ baseURL: `${api.url}/api/v1/${path}/${chatId}`, apiKey: api.key!, maxRetries: 0 });
}

/** Extra body keys, as the openai client sends them (top level of the JSON body). */
type Extra = Record<string, unknown>;

describe('OpenAI-compatible chat completions with the openai npm client', function () {
  this.timeout(180_000);
  let fake: FakeOpenAI;
  let api: Api;
  let modelId: string;
  let solo: string;

  before(async () => {
    fake = await startFakeOpenAI();
    ({ api, modelId } = await userWithModel('openai', fake.baseUrl));
    solo = (await createChat(api, { name: 'solo', prompt_config: { system: 'Be kind.', parameters: [] } })).id;
  });

  beforeEach(() => {
    fake.behaviour = { ...fake.behaviour, answer: echoAnswer, reasoningStyle: 'field', failure: undefined };
  });

  after(() => fake.close());

  const lastModelRequest = () => fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body;

  it('non-stream (the default) returns a chat.completion; system messages and history are context', async () => {
    const res = await client(api, solo).chat.completions.create({
      model: 'model',
      messages: [
        { role: 'system', content: 'Answer tersely.' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'Echo: first' },
        { role: 'user', content: 'second' },
      ],
    });
    assert.equal(res.object, 'chat.completion');
    assert.equal(res.model, 'model');
    assert.match(res.id, /^chatcmpl-/);
    assert.equal(res.choices[0]!.message.content, 'Echo: second');
    assert.equal(res.choices[0]!.message.role, 'assistant');
    assert.equal(res.choices[0]!.finish_reason, 'stop');
    assert.ok(res.usage!.prompt_tokens > 0 && res.usage!.completion_tokens === 3);
    assert.deepEqual(lastModelRequest().messages, [
      { role: 'system', content: 'Be kind.\n\nAnswer tersely.' },
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'Echo: first' },
      { role: 'user', content: 'second' },
    ]);
    assert.equal((await api.get(`/chats/${solo}/sessions`)).body.data.length, 0, 'no session is stored');
  });

  it('streams chat.completion.chunk increments ending with finish_reason stop, then [DONE]; reasoning as reasoning_content', async () => {
    fake.behaviour.answer = fixedAnswer('Blue sky today', 'Look up');
    const stream = await client(api, solo).chat.completions.create({ model: 'model', stream: true, messages: [{ role: 'user', content: 'sky?' }] });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk'));
    const deltas = chunks.map((c) => c.choices[0]!.delta as any);
    assert.equal(deltas.map((d) => d.reasoning_content ?? '').join(''), 'Look up');
    assert.equal(deltas.map((d) => d.content ?? '').join(''), 'Blue sky today');
    assert.deepEqual(deltas.filter((d) => d.content).map((d) => d.content), ['Blue', ' sky', ' today']);
    const last = chunks.at(-1)!;
    assert.equal(last.choices[0]!.finish_reason, 'stop');
    assert.equal((last.choices[0]!.delta as any).final_content, 'Blue sky today');
    assert.ok(last.usage!.total_tokens > 0);
  });

  it('the raw stream ends with data: [DONE]', async () => {
    const res = await fetch(`${api.url}/api/v1/openai/${solo}/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'model', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.match(res.headers.get('content-type')!, /^text\/event-stream/);
    assert.ok((await res.text()).endsWith('data: [DONE]\n\n'));
  });

  it('the deprecated chats_openai alias works the same', async () => {
    const res = await client(api, solo, 'chats_openai').chat.completions.create({ model: 'model', messages: [{ role: 'user', content: 'alias' }] });
    assert.equal(res.choices[0]!.message.content, 'Echo: alias');
  });

  it('model: another configured chat model is used; an unknown one is a 400 the client raises', async () => {
    const other = await addModelServer(api, fake.baseUrl, { instance: 'second', chat: 'other-chat', setDefault: false });
    const res = await client(api, solo).chat.completions.create({ model: other, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(res.model, other);
    assert.equal(lastModelRequest().model, 'other-chat');
    await client(api, solo).chat.completions.create({ model: 'model', messages: [{ role: 'user', content: 'x' }] });
    assert.equal(lastModelRequest().model, modelId.split('@')[0]);
    await assert.rejects(
      client(api, solo).chat.completions.create({ model: 'ghost@nowhere@OpenAI-API-Compatible', messages: [{ role: 'user', content: 'x' }] }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && /ghost/.test(err.message),
    );
  });

  it('errors are OpenAI-style with a 4xx status: no user message, bad key, unknown chat, missing variable', async () => {
    await assert.rejects(
      client(api, solo).chat.completions.create({ model: 'model', messages: [{ role: 'system', content: 'only system' }] }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && /role user/.test(err.message),
    );
    await assert.rejects(
      new OpenAI({ baseURL: `${api.url}/api/v1/openai/${solo}`, apiKey: 'wrong', maxRetries: 0 }).chat.completions.create({ model: 'model', messages: [{ role: 'user', content: 'x' }] }),
      (err: unknown) => err instanceof OpenAI.AuthenticationError,
    );
    await assert.rejects(
      client(api, '0'.repeat(32)).chat.completions.create({ model: 'model', messages: [{ role: 'user', content: 'x' }] }),
      (err: unknown) => err instanceof OpenAI.NotFoundError,
    );
    const raw = await fetch(`${api.url}/api/v1/openai/${solo}/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }),
    });
    assert.equal(raw.status, 400);
    assert.deepEqual(Object.keys((await raw.json()).error).sort(), ['code', 'message', 'param', 'type']);

    const vars = await createChat(api, { name: 'openai-vars', prompt_config: { system: 'Speak {language}.', parameters: [{ key: 'language', optional: false }] } });
    await assert.rejects(
      client(api, vars.id).chat.completions.create({ model: 'model', messages: [{ role: 'user', content: 'x' }] }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && /'language'/.test(err.message),
    );
    await client(api, vars.id).chat.completions.create({ model: 'model', messages: [{ role: 'user', content: 'x' }], language: 'Latin' } as OpenAI.ChatCompletionCreateParamsNonStreaming & Extra);
    assert.equal(lastModelRequest().messages[0].content, 'Speak Latin.');
  });

  it("models.list() on the chat's route lists the model that answers first, then the workspace's other chat models", async () => {
    const ids = [];
    for await (const m of client(api, solo).models.list()) ids.push(m.id);
    assert.equal(ids[0], modelId, 'a chat without llm_id answers with the workspace default');
    assert.ok(ids.includes('SmolLM2-135M-Instruct@Builtin'), ids.join(', '));
    assert.equal(new Set(ids).size, ids.length, 'each model once');
    await assert.rejects(client(api, '0'.repeat(32)).models.list(), (err: unknown) => err instanceof OpenAI.NotFoundError);
  });

  it('a model server that refuses connections raises in the client, streaming or not', async () => {
    const dead = await addModelServer(api, `${await closedPortUrl()}/v1`, { instance: 'dead', setDefault: false });
    const chat = await createChat(api, { name: 'openai-dead', llm_id: dead, prompt_config: { system: '', parameters: [] } });
    await assert.rejects(
      client(api, chat.id).chat.completions.create({ model: 'model', messages: [{ role: 'user', content: 'x' }] }),
      (err: unknown) => err instanceof OpenAI.InternalServerError && /connection refused/.test(err.message),
    );
    const stream = await client(api, chat.id).chat.completions.create({ model: 'model', stream: true, messages: [{ role: 'user', content: 'x' }] });
    await assert.rejects(
      (async () => {
        for await (const _ of stream);
      })(),
      (err: unknown) => err instanceof OpenAI.APIError && /connection refused/.test(err.message),
    );
  });

  describe('references', () => {
    let chatId: string;
    let docs: Record<string, string>;
    let datasetId: string;

    before(async function () {
      this.timeout(180_000);
      ({ id: datasetId, docs } = await parsedDataset(api, 'openai-notes', {
        'cairns.txt': 'Granite cairns mark the trail crossings in the northern valley.',
        'logbook.txt': 'The hut logbook records the weather every morning.',
      }));
      const meta = await api.patch(`/datasets/${datasetId}/documents/${docs['cairns.txt']}`, { meta_fields: { author: 'Ada', year: 2024 } });
      assert.equal(meta.status, 200, JSON.stringify(meta.body));
      chatId = (await createChat(api, { name: 'openai-refs', dataset_ids: [datasetId], similarity_threshold: 0 })).id;
    });

    const question = 'Which granite cairns mark trail crossings?';
    const answer = 'Granite cairns mark the trail crossings.';

    it('non-stream: message.reference only when asked (extra_body.reference), with citation markers', async () => {
      fake.behaviour.answer = fixedAnswer(answer);
      const plain = await client(api, chatId).chat.completions.create({ model: 'model', messages: [{ role: 'user', content: question }] });
      assert.equal(plain.choices[0]!.message.content, answer);
      assert.equal((plain.choices[0]!.message as any).reference, undefined);

      const res = await client(api, chatId).chat.completions.create({ model: 'model', messages: [{ role: 'user', content: question }], extra_body: { reference: true } } as OpenAI.ChatCompletionCreateParamsNonStreaming & Extra);
      const refs = (res.choices[0]!.message as any).reference;
      assert.equal(refs.length, 2);
      const cairn = refs.findIndex((c: any) => c.document_name === 'cairns.txt');
      assert.equal(res.choices[0]!.message.content, `Granite cairns mark the trail crossings [ID:${cairn}].`);
      assert.equal(refs[cairn].document_id, docs['cairns.txt']);
      assert.equal(refs[cairn].document_metadata, undefined);
    });

    it('stream: the final chunk carries delta.reference; reference_metadata adds document_metadata (fields filter)', async () => {
      fake.behaviour.answer = fixedAnswer(answer);
      const stream = await client(api, chatId).chat.completions.create({
        model: 'model',
        stream: true,
        messages: [{ role: 'user', content: question }],
        reference: true,
        reference_metadata: { include: true, fields: ['author'] },
      } as OpenAI.ChatCompletionCreateParamsStreaming & Extra);
      const chunks = [];
      for await (const c of stream) chunks.push(c);
      const refs = (chunks.at(-1)!.choices[0]!.delta as any).reference;
      assert.ok(chunks.slice(0, -1).every((c) => (c.choices[0]!.delta as any).reference === undefined));
      const byDoc = Object.fromEntries(refs.map((r: any) => [r.document_name, r.document_metadata]));
      assert.deepEqual(byDoc, { 'cairns.txt': { author: 'Ada' }, 'logbook.txt': {} });
      const text = chunks.map((c) => c.choices[0]!.delta.content ?? '').join('');
      assert.equal(text, (chunks.at(-1)!.choices[0]!.delta as any).final_content);
      assert.match(text, /\[ID:\d\]\.$/);

      const all = await client(api, chatId).chat.completions.create({
        model: 'model',
        messages: [{ role: 'user', content: question }],
        extra_body: { reference: true, reference_metadata: { include: true } },
      } as OpenAI.ChatCompletionCreateParamsNonStreaming & Extra);
      const meta = (all.choices[0]!.message as any).reference.find((r: any) => r.document_name === 'cairns.txt').document_metadata;
      assert.deepEqual(meta, { author: 'Ada', year: 2024 });
    });
  });
});
