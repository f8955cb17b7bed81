import assert from 'node:assert/strict';
import { createModel } from '../../../src/models/registry.js';
import { cosine } from '../../../src/models/vector.js';
import {
  closedPortUrl,
  fakeEmbedding,
  fixedAnswer,
  overlapScore,
  startFakeOpenAI,
  startSilentServer,
  type FakeOpenAI,
} from '../../fakes/index.js';
import { collect, joined, rejectsModelError, timed } from './helpers.js';

const FACTORY = 'OpenAI-API-Compatible';

describe('models/openai-compat against the fake OpenAI server', () => {
  let fake: FakeOpenAI;
  beforeEach(async () => {
    fake = await startFakeOpenAI({ dims: 32 });
  });
  afterEach(() => fake.close());

  const chat = (base = fake.baseUrl, extra = {}) =>
    createModel({ factory: FACTORY, model_name: 'fake-chat', model_type: 'chat', base_url: base, api_key: 'sk-test', ...extra });

  it('streams the default echo answer over SSE', async () => {
    const deltas = await collect(chat().stream([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is Cairn?' }]));
    assert.equal(joined(deltas, 'answer'), 'Echo: What is Cairn?');
    assert.equal(joined(deltas, 'reasoning'), '');
    assert.ok(deltas.length > 1, 'answer arrives in several deltas');
    const req = fake.requests.at(-1)!;
    assert.equal(req.path, '/v1/chat/completions');
    assert.equal(req.body.stream, true);
    assert.equal(req.body.model, 'fake-chat');
    assert.equal(req.headers.authorization, 'Bearer sk-test');
    assert.deepEqual(req.body.messages.at(-1), { role: 'user', content: 'What is Cairn?' });
  });

  it('keeps reasoning_content apart from the answer', async () => {
    fake.behaviour.answer = fixedAnswer('Paris is the capital.', 'The user asks about France.');
    const deltas = await collect(chat().stream([{ role: 'user', content: 'Capital of France?' }]));
    assert.equal(joined(deltas, 'reasoning'), 'The user asks about France.');
    assert.equal(joined(deltas, 'answer'), 'Paris is the capital.');
    const firstAnswer = deltas.findIndex((d) => d.kind === 'answer');
    assert.ok(deltas.slice(0, firstAnswer).every((d) => d.kind === 'reasoning'));
  });

  it('separates <think> tags inside content', async () => {
    fake.behaviour.answer = fixedAnswer('Forty-two.', 'Let me compute this.');
    fake.behaviour.reasoningStyle = 'think-tags';
    const deltas = await collect(chat().stream([{ role: 'user', content: 'Answer?' }]));
    assert.equal(joined(deltas, 'reasoning'), 'Let me compute this.');
    assert.equal(joined(deltas, 'answer'), 'Forty-two.');
  });

  it('complete() returns the answer without reasoning and passes sampling options', async () => {
    fake.behaviour.answer = fixedAnswer('Done.', 'thinking...');
    assert.equal(await chat().complete([{ role: 'user', content: 'x' }], { temperature: 0.1, max_tokens: 5 }), 'Done.');
    const req = fake.requests.at(-1)!;
    assert.equal(req.body.stream, false);
    assert.equal(req.body.temperature, 0.1);
    assert.equal(req.body.max_tokens, 5);
    fake.behaviour.reasoningStyle = 'think-tags';
    assert.equal(await chat().complete([{ role: 'user', content: 'x' }]), 'Done.');
  });

  it('json_schema is requested as response_format json_schema named "output", not strict', async () => {
    const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] };
    fake.behaviour.answer = fixedAnswer('{"title":"Cairns"}');
    const deltas = await collect(chat().stream([{ role: 'user', content: 'Title?' }], { json_schema: schema }));
    assert.deepEqual(JSON.parse(joined(deltas, 'answer')), { title: 'Cairns' });
    assert.deepEqual(fake.requests.at(-1)!.body.response_format, { type: 'json_schema', json_schema: { name: 'output', schema, strict: false } });
    await chat().complete([{ role: 'user', content: 'Title?' }], { json_schema: schema });
    assert.deepEqual(fake.requests.at(-1)!.body.response_format.json_schema.schema, schema, 'complete() sends it too');
  });

  it("a user message's images are sent as image_url content parts after its text", async () => {
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    await collect(chat().stream([{ role: 'system', content: 'S' }, { role: 'user', content: 'What is written here?', images: [png] }]));
    assert.deepEqual(fake.requests[0]!.body.messages, [
      { role: 'system', content: 'S' },
      { role: 'user', content: [{ type: 'text', text: 'What is written here?' }, { type: 'image_url', image_url: { url: png } }] },
    ]);
  });

  it('stop, seed and chat_template_kwargs go into the body; options not given are not sent', async () => {
    const options = { stop: ['\n\n', 'END'], seed: 42, chat_template_kwargs: { enable_thinking: false } };
    await collect(chat().stream([{ role: 'user', content: 'x' }], options));
    await chat().complete([{ role: 'user', content: 'x' }], options);
    for (const { body } of fake.requests) {
      assert.deepEqual(body.stop, ['\n\n', 'END']);
      assert.equal(body.seed, 42);
      assert.deepEqual(body.chat_template_kwargs, { enable_thinking: false });
    }
    fake.clear();
    await collect(chat().stream([{ role: 'user', content: 'x' }], { stop: [], chat_template_kwargs: {} }));
    const sent = Object.keys(fake.requests[0]!.body).sort();
    assert.deepEqual(sent, ['messages', 'model', 'stream', 'stream_options']);
  });

  it('a stream asks for usage and ends with a usage delta carrying the provider\'s counts', async () => {
    fake.behaviour.answer = fixedAnswer('one two three');
    const deltas = await collect(chat().stream([{ role: 'user', content: 'count to three' }]));
    assert.deepEqual(fake.requests.at(-1)!.body.stream_options, { include_usage: true });
    assert.deepEqual(deltas.at(-1), { kind: 'usage', text: '', usage: { prompt_tokens: 3, completion_tokens: 3 } });
    assert.equal(deltas.filter((d) => d.kind === 'usage').length, 1);
  });

  it('a server that refuses stream_options is asked again without it (and no usage is reported)', async () => {
    fake.behaviour.failure = { status: 400, message: "Unrecognized request argument supplied: stream_options", times: 1 };
    const deltas = await collect(chat().stream([{ role: 'user', content: 'hi' }]));
    assert.equal(joined(deltas, 'answer'), 'Echo: hi');
    assert.ok(!deltas.some((d) => d.kind === 'usage'));
    assert.deepEqual(fake.requests.map((r) => 'stream_options' in r.body), [true, false]);
  });

  it('accepts a base URL without /v1', async () => {
    assert.equal(await chat(fake.url).complete([{ role: 'user', content: 'hi' }]), 'Echo: hi');
  });

  it('embeds in batches, in order, with unit vectors', async () => {
    const model = createModel({ factory: FACTORY, model_name: 'e', model_type: 'embedding', base_url: fake.baseUrl });
    const texts = Array.from({ length: 70 }, (_, i) => `text number ${i}`);
    const vectors = await model.embed(texts);
    assert.equal(vectors.length, 70);
    assert.equal(fake.requests.filter((r) => r.path === '/v1/embeddings').length, 3); // 32 + 32 + 6
    vectors.forEach((v, i) => {
      assert.equal(v.length, 32);
      assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-6);
      assert.ok(cosine(v, fakeEmbedding(texts[i]!, 32)) > 0.99999);
    });
    assert.deepEqual(await model.embed([]), []);
  });

  it('reranks through /v1/rerank with scores in document order', async () => {
    const model = createModel({ factory: FACTORY, model_name: 'r', model_type: 'rerank', base_url: fake.baseUrl });
    const docs = ['cats and dogs', 'the weather today', 'dogs bark'];
    const scores = await model.rerank('dogs cats', docs);
    assert.deepEqual(scores, docs.map((d) => overlapScore('dogs cats', d)));
    assert.deepEqual(fake.requests.at(-1)!.body, { model: 'r', query: 'dogs cats', documents: docs, top_n: 3, return_documents: false });
  });

  it('maps 401 and unknown models to clear ModelErrors', async () => {
    fake.behaviour.failure = { status: 401, message: 'Incorrect API key provided' };
    const err = await rejectsModelError(() => chat().complete([{ role: 'user', content: 'x' }]), /OpenAI-API-Compatible/, /authentication failed/, /Incorrect API key/);
    assert.equal(err.status, 400);
    assert.equal(err.provider, FACTORY);
    fake.behaviour.failure = undefined;

    const strict = await startFakeOpenAI({ models: ['only-this'] });
    try {
      await rejectsModelError(() => collect(chat(strict.baseUrl).stream([{ role: 'user', content: 'x' }])), /model 'fake-chat'/, /404/, /does not exist/);
    } finally {
      await strict.close();
    }
  });

  it('maps a 500 during streaming to a ModelError', async () => {
    fake.behaviour.failure = { status: 503, message: 'overloaded', times: 1 };
    const err = await rejectsModelError(() => collect(chat().stream([{ role: 'user', content: 'x' }])), /server error \(HTTP 503\)/, /overloaded/);
    assert.equal(err.status, 500);
    assert.equal(await chat().complete([{ role: 'user', content: 'again' }]), 'Echo: again', 'recovers after `times` failures');
  });

  it('fails fast with "connection refused" on a closed port', async () => {
    const url = await closedPortUrl();
    for (const type of ['chat', 'embedding', 'rerank'] as const) {
      const model = createModel({ factory: FACTORY, model_name: 'm', model_type: type, base_url: `${url}/v1` });
      const call =
        type === 'chat'
          ? () => collect((model as any).stream([{ role: 'user', content: 'x' }]))
          : type === 'embedding'
            ? () => (model as any).embed(['x'])
            : () => (model as any).rerank('q', ['d']);
      const { ms, error } = await timed(call);
      assert.ok(ms < 2000, `${type} took ${ms} ms`);
      await rejectsModelError(() => Promise.reject(error), /OpenAI-API-Compatible/, /connection refused/, new RegExp(url.replace(/\./g, '\\.')));
    }
  });

  it('times out instead of hanging on a server that never answers', async () => {
    const silent = await startSilentServer();
    try {
      const model = chat(`${silent.url}/v1`, { timeouts: { requestMs: 300 } });
      const { ms, error } = await timed(() => model.complete([{ role: 'user', content: 'x' }]));
      assert.ok(ms < 3000, `took ${ms} ms`);
      await rejectsModelError(() => Promise.reject(error), /timed out after 300 ms/);
    } finally {
      await silent.close();
    }
  });

  it('times out when a stream goes silent', async () => {
    fake.behaviour.tokenDelayMs = 1000;
    const model = chat(fake.baseUrl, { timeouts: { requestMs: 5000, idleMs: 200 } });
    await rejectsModelError(() => collect(model.stream([{ role: 'user', content: 'one two three' }])), /timed out after 200 ms/);
  });

  it('stops the upstream stream when the consumer stops early', async () => {
    fake.behaviour.tokenDelayMs = 20;
    fake.behaviour.answer = fixedAnswer('a b c d e f g h i j k l m n o p');
    const seen: string[] = [];
    for await (const d of chat().stream([{ role: 'user', content: 'x' }])) {
      seen.push(d.text);
      if (seen.length === 2) break;
    }
    assert.equal(seen.length, 2);
  });

  it('a caller abort ends the stream with the abort reason, not a ModelError', async () => {
    fake.behaviour.tokenDelayMs = 50;
    fake.behaviour.answer = fixedAnswer('a b c d e f g h i j');
    const controller = new AbortController();
    const seen: string[] = [];
    await assert.rejects(async () => {
      for await (const d of chat().stream([{ role: 'user', content: 'x' }], { signal: controller.signal })) {
        seen.push(d.text);
        if (seen.length === 2) controller.abort(new Error('user cancelled'));
      }
    }, /user cancelled/);
    assert.equal(seen.length, 2);
  });

  it('verify() makes a tiny real call', async () => {
    await chat().verify!();
    assert.equal(fake.requests.at(-1)!.body.max_tokens, 1);
  });
});
