import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { createModel } from '../../../src/models/registry.js';
import { cosine } from '../../../src/models/vector.js';
import {
  echoAnswer,
  fakeEmbedding,
  overlapScore,
  splitTokens,
  startFakes,
  tokensAnswer,
  type Fakes,
} from '../../fakes/index.js';

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

  it('fails the scripted number of times with the provider-shaped body, then recovers', async () => {
    fakes.ollama.behaviour.failure = { status: 500, message: 'boom', path: '/api/tags', times: 1 };
    const first = await fetch(`${fakes.ollama.url}/api/tags`);
    assert.equal(first.status, 500);
    assert.deepEqual(await first.json(), { error: 'boom' });
    assert.equal((await fetch(`${fakes.ollama.url}/api/tags`)).status, 200);
    assert.equal(await (await fetch(`${fakes.ollama.url}/`)).text(), 'Ollama is running');
  });
});
