import assert from 'node:assert/strict';
import { createModel } from '../../../src/models/registry.js';
import { cosine } from '../../../src/models/vector.js';
import { closedPortUrl, fakeEmbedding, fixedAnswer, overlapScore, startFakeXinference, type FakeOpenAI } from '../../fakes/index.js';
import { collect, joined, rejectsModelError } from './helpers.js';

describe('models/xinference against the fake Xinference server', () => {
  let fake: FakeOpenAI;
  before(async () => {
    fake = await startFakeXinference({ models: ['qwen2.5-instruct', 'bge-small-en-v1.5', 'bge-reranker-base'], dims: 16 });
  });
  after(() => fake.close());
  beforeEach(() => {
    fake.requests.length = 0;
    fake.behaviour.answer = fixedAnswer('Xinference says hi.', 'reasoning here');
  });

  it('chats through {url}/v1 with reasoning separated', async () => {
    const model = createModel({ factory: 'Xinference', model_name: 'qwen2.5-instruct', model_type: 'chat', base_url: fake.url });
    const deltas = await collect(model.stream([{ role: 'user', content: 'hi' }]));
    assert.equal(joined(deltas, 'answer'), 'Xinference says hi.');
    assert.equal(joined(deltas, 'reasoning'), 'reasoning here');
    assert.equal(fake.requests[0]!.path, '/v1/chat/completions');
  });

  it('embeds through {url}/v1/embeddings', async () => {
    const model = createModel({ factory: 'Xinference', model_name: 'bge-small-en-v1.5', model_type: 'embedding', base_url: `${fake.url}/v1` });
    const [v] = await model.embed(['embedding text']);
    assert.ok(cosine(v!, fakeEmbedding('embedding text', 16)) > 0.99999);
  });

  it('reranks through {url}/v1/rerank, whichever form of the base URL is given', async () => {
    const docs = ['alpha beta', 'gamma', 'beta gamma delta'];
    for (const base of [fake.url, `${fake.url}/v1`, `${fake.url}/v1/rerank`]) {
      const model = createModel({ factory: 'Xinference', model_name: 'bge-reranker-base', model_type: 'rerank', base_url: base });
      assert.deepEqual(await model.rerank('beta gamma', docs), docs.map((d) => overlapScore('beta gamma', d)));
    }
    assert.deepEqual(new Set(fake.requests.map((r) => r.path)), new Set(['/v1/rerank']));
    assert.deepEqual(fake.requests[0]!.body, { model: 'bge-reranker-base', query: 'beta gamma', documents: docs, top_n: 3, return_documents: false });
  });

  it('reports an unknown model with the server detail', async () => {
    const model = createModel({ factory: 'Xinference', model_name: 'nope', model_type: 'chat', base_url: fake.url });
    await rejectsModelError(() => model.complete([{ role: 'user', content: 'x' }]), /^Xinference: request rejected \(HTTP 400\): Model not found in the model list, uid: nope/);
    const reranker = createModel({ factory: 'Xinference', model_name: 'nope', model_type: 'rerank', base_url: fake.url });
    await rejectsModelError(() => reranker.rerank('q', ['d']), /Xinference: .*Model not found/);
  });

  it('fails fast with "connection refused" on a closed port', async () => {
    const url = await closedPortUrl();
    for (const type of ['chat', 'rerank'] as const) {
      const model = createModel({ factory: 'Xinference', model_name: 'm', model_type: type, base_url: url }) as any;
      const call = type === 'chat' ? model.complete([{ role: 'user', content: 'x' }]) : model.rerank('q', ['d']);
      await rejectsModelError(() => call, /^Xinference: connection refused/);
    }
  });
});
