import assert from 'node:assert/strict';
import { OllamaServer, sameOllamaModel } from '../../../src/models/ollama.js';
import { createModel } from '../../../src/models/registry.js';
import { cosine } from '../../../src/models/vector.js';
import {
  closedPortUrl,
  fakeEmbedding,
  fixedAnswer,
  startFakeOllama,
  startFakeOpenAI,
  startSilentServer,
  type FakeServer,
} from '../../fakes/index.js';
import { collect, joined, rejectsModelError, timed } from './helpers.js';

describe('models/ollama against the fake Ollama server', () => {
  let fake: FakeServer;
  beforeEach(async () => {
    fake = await startFakeOllama({ dims: 48 });
  });
  afterEach(() => fake.close());

  const chat = (name = 'llama3.2', base = fake.url) =>
    createModel({ factory: 'Ollama', model_name: name, model_type: 'chat', base_url: base });
  const embedder = (name = 'nomic-embed-text', base = fake.url) =>
    createModel({ factory: 'Ollama', model_name: name, model_type: 'embedding', base_url: base });

  it('checkConnection() accepts "Ollama is running" and rejects other servers', async () => {
    await new OllamaServer(fake.url).checkConnection();
    const other = await startFakeOpenAI();
    try {
      await rejectsModelError(() => new OllamaServer(other.url).checkConnection(), /Ollama/, /not an Ollama server/);
    } finally {
      await other.close();
    }
  });

  it('treats name and name:latest as the same model', () => {
    assert.ok(sameOllamaModel('llama3.2', 'llama3.2:latest'));
    assert.ok(!sameOllamaModel('qwen3', 'qwen3:8b'));
    assert.ok(sameOllamaModel('hf.co/org/model', 'hf.co/org/model:latest'));
  });

  it('streams NDJSON with thinking kept apart from the answer', async () => {
    fake.behaviour.answer = fixedAnswer('It is 4.', 'Two plus two.');
    const deltas = await collect(chat('qwen3:8b').stream([{ role: 'user', content: '2+2?' }], { temperature: 0.2, max_tokens: 50 }));
    assert.equal(joined(deltas, 'reasoning'), 'Two plus two.');
    assert.equal(joined(deltas, 'answer'), 'It is 4.');
    const req = fake.requests.find((r) => r.path === '/api/chat')!;
    assert.equal(req.body.stream, true);
    assert.equal(req.body.model, 'qwen3:8b');
    assert.deepEqual(req.body.options, { temperature: 0.2, num_predict: 50 });
  });

  it('streams the default echo answer and separates inline <think> tags', async () => {
    assert.equal(joined(await collect(chat().stream([{ role: 'user', content: 'hello there' }])), 'answer'), 'Echo: hello there');
    fake.behaviour.answer = fixedAnswer('Yes.', 'Hmm.');
    fake.behaviour.reasoningStyle = 'think-tags';
    const deltas = await collect(chat().stream([{ role: 'user', content: 'ok?' }]));
    assert.equal(joined(deltas, 'reasoning'), 'Hmm.');
    assert.equal(joined(deltas, 'answer'), 'Yes.');
  });

  it("a user message's images are sent as Ollama's bare base64 images beside its text", async () => {
    await collect(chat().stream([{ role: 'user', content: 'What is written here?', images: ['data:image/png;base64,iVBORw0KGgo='] }]));
    assert.deepEqual(fake.requests.find((r) => r.path === '/api/chat')!.body.messages, [{ role: 'user', content: 'What is written here?', images: ['iVBORw0KGgo='] }]);
  });

  it('json_schema is sent as format, stop and seed as options', async () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } } };
    fake.behaviour.answer = fixedAnswer('{"ok":true}');
    const options = { json_schema: schema, stop: ['END'], seed: 7, temperature: 0 };
    assert.equal(joined(await collect(chat().stream([{ role: 'user', content: 'ok?' }], options)), 'answer'), '{"ok":true}');
    assert.equal(await chat().complete([{ role: 'user', content: 'ok?' }], options), '{"ok":true}');
    for (const { body } of fake.requests.filter((r) => r.path === '/api/chat')) {
      assert.deepEqual(body.format, schema);
      assert.deepEqual(body.options, { temperature: 0, seed: 7, stop: ['END'] });
      assert.ok(!('tools' in body), 'no tools key without tools');
    }
  });

  it('usage comes from prompt_eval_count and eval_count on the final line, as the last delta', async () => {
    fake.behaviour.answer = fixedAnswer('one two three four');
    const deltas = await collect(chat().stream([{ role: 'user', content: 'count to four' }]));
    assert.deepEqual(deltas.at(-1), { kind: 'usage', text: '', usage: { prompt_tokens: 3, completion_tokens: 4 } });
  });

  it('complete() uses stream:false and drops thinking', async () => {
    fake.behaviour.answer = fixedAnswer('Final.', 'secret thoughts');
    assert.equal(await chat('qwen3:8b').complete([{ role: 'user', content: 'x' }]), 'Final.');
    assert.equal(fake.requests.find((r) => r.path === '/api/chat')!.body.stream, false);
  });

  it('checks the model once per client, then only chats', async () => {
    const model = chat();
    await model.complete([{ role: 'user', content: 'a' }]);
    await model.complete([{ role: 'user', content: 'b' }]);
    assert.deepEqual(
      fake.requests.map((r) => r.path),
      ['/api/tags', '/api/show', '/api/chat', '/api/chat'],
    );
  });

  it('names a model that is not pulled', async () => {
    const err = await rejectsModelError(
      () => collect(chat('mistral').stream([{ role: 'user', content: 'x' }])),
      /Ollama: model 'mistral' is not pulled/,
      /llama3\.2:latest/,
    );
    assert.equal(err.status, 400);
    assert.ok(!fake.requests.some((r) => r.path === '/api/chat'));
    await rejectsModelError(() => embedder('all-minilm').embed(['x']), /model 'all-minilm' is not pulled/);
  });

  it('rejects a model of the wrong type', async () => {
    await rejectsModelError(() => chat('nomic-embed-text').complete([{ role: 'user', content: 'x' }]), /'nomic-embed-text'.*not a chat model/);
    await rejectsModelError(() => embedder('llama3.2').embed(['x']), /'llama3\.2'.*not an embedding model/);
  });

  it('verify() checks the root text and the model', async () => {
    await chat().verify!();
    assert.deepEqual(fake.requests.map((r) => r.path), ['/', '/api/tags', '/api/show']);
  });

  it('embeds through /api/embed in batches with unit vectors', async () => {
    const texts = Array.from({ length: 40 }, (_, i) => `ollama text ${i}`);
    const vectors = await embedder().embed(texts);
    assert.equal(vectors.length, 40);
    const calls = fake.requests.filter((r) => r.path === '/api/embed');
    assert.equal(calls.length, 2);
    assert.equal(calls[0]!.body.input.length, 32);
    vectors.forEach((v, i) => assert.ok(cosine(v, fakeEmbedding(texts[i]!, 48)) > 0.99999));
  });

  it('maps a server error in the middle of use', async () => {
    fake.behaviour.failure = { status: 500, message: 'llama runner process has terminated', path: '/api/chat' };
    await rejectsModelError(() => chat().complete([{ role: 'user', content: 'x' }]), /Ollama: server error \(HTTP 500\): llama runner process has terminated/);
  });

  it('fails fast with "connection refused" on a closed port', async () => {
    const url = await closedPortUrl();
    const { ms, error } = await timed(() => collect(chat('llama3.2', url).stream([{ role: 'user', content: 'x' }])));
    assert.ok(ms < 2000, `took ${ms} ms`);
    await rejectsModelError(() => Promise.reject(error), /^Ollama: connection refused at http:\/\/127\.0\.0\.1:\d+/);
    await rejectsModelError(() => new OllamaServer(url).checkConnection(), /Ollama: connection refused/);
  });

  it('times out on a server that never answers, and when the stream goes silent', async () => {
    const silent = await startSilentServer();
    try {
      const server = new OllamaServer(silent.url, { requestMs: 300 });
      await rejectsModelError(() => server.checkConnection(), /^Ollama: request timed out after 300 ms/);
    } finally {
      await silent.close();
    }
    fake.behaviour.tokenDelayMs = 1000;
    const model = createModel({ factory: 'Ollama', model_name: 'llama3.2', model_type: 'chat', base_url: fake.url, timeouts: { idleMs: 200 } });
    await rejectsModelError(() => collect(model.stream([{ role: 'user', content: 'one two three' }])), /^Ollama: stream \(no data\) timed out after 200 ms/);
  });

  it('a caller abort stops the stream', async () => {
    fake.behaviour.tokenDelayMs = 50;
    const controller = new AbortController();
    const seen: string[] = [];
    await assert.rejects(async () => {
      for await (const d of chat().stream([{ role: 'user', content: 'a b c d e f g' }], { signal: controller.signal })) {
        seen.push(d.text);
        if (seen.length === 2) controller.abort(new Error('user cancelled'));
      }
    }, /user cancelled/);
    assert.equal(seen.length, 2);
  });

  it('accepts a base URL with a trailing /v1', async () => {
    assert.equal(await chat('llama3.2', `${fake.url}/v1/`).complete([{ role: 'user', content: 'v1' }]), 'Echo: v1');
  });
});
