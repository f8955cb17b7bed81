import assert from 'node:assert/strict';
import { newUser, type Api } from './client.js';
import { upload } from './documents-helpers.js';
import { startFakeOpenAI, startFakes, type Fakes, type FakeMessage } from '../fakes/index.js';
import { addModelServer, FACTORY } from './chat-helpers.js';
import { useFakeProviders } from './providers-helpers.js';

const CORPUS = [
  'Granite cairns mark the summit trail above the tree line.',
  'Hikers stack flat stones into cairns along coastal paths.',
  'The lighthouse keeper logs the weather every evening.',
  'Snow covers the granite ridge from November to April.',
  'Cairns in the desert guide caravans between wells.',
];

describe('retrieval over HTTP', () => {
  let api: Api;
  let fakes: Fakes;
  let ds: string;
  let docA: string;
  let docB: string;

  before(async () => {
    api = (await newUser('retrieval')).api;
    fakes = await startFakes();
    await useFakeProviders(api, fakes);
    ds = (await api.post('/datasets', { name: 'trails' })).body.data.id;
    const docs = (await upload(api, ds, [
      { name: 'mountains.txt', bytes: Buffer.from('x') },
      { name: 'coast.txt', bytes: Buffer.from('y') },
    ])).body.data;
    [docA, docB] = docs.map((d: any) => d.id);
    for (const [i, content] of CORPUS.entries()) {
      const doc = i % 2 === 0 ? docA : docB;
      const res = await api.post(`/datasets/${ds}/documents/${doc}/chunks`, { content });
      assert.equal(res.status, 200);
    }
    await api.patch(`/datasets/${ds}/documents/${docA}`, { meta_fields: { region: 'alps', year: 2021, tags: ['summit', 'snow'] } });
    await api.patch(`/datasets/${ds}/documents/${docB}`, { meta_fields: { region: 'coast', year: 2019 } });
  });
  after(() => fakes.close());

  const retrieve = (body: Record<string, unknown>) => api.post('/retrieval', { dataset_ids: [ds], ...body });

  it('returns reference chunks whose similarity is the weighted sum of vector and term similarity', async () => {
    const res = await retrieve({ question: 'granite cairns', similarity_threshold: 0 });
    assert.equal(res.status, 200);
    const { chunks, total, doc_aggs } = res.body.data;
    assert.ok(total >= 2);
    for (const c of chunks) {
      for (const k of ['similarity', 'vector_similarity', 'term_similarity']) assert.ok(c[k] >= 0 && c[k] <= 1, `${k} in 0..1`);
      assert.ok(Math.abs(c.similarity - (0.3 * c.vector_similarity + 0.7 * c.term_similarity)) < 1e-6);
      for (const k of ['id', 'content', 'document_id', 'document_name', 'dataset_id', 'image_id', 'positions']) assert.ok(k in c, k);
    }
    assert.match(chunks[0].content, /Granite cairns/);
    assert.deepEqual(chunks.map((c: any) => c.similarity), [...chunks.map((c: any) => c.similarity)].sort((a, b) => b - a));
    assert.equal(doc_aggs.reduce((n: number, a: any) => n + a.count, 0), total);
    assert.ok(doc_aggs.every((a: any) => a.doc_name && a.doc_id));
  });

  it('applies similarity_threshold, page and page_size', async () => {
    const all = (await retrieve({ question: 'cairns granite stones', similarity_threshold: 0 })).body.data;
    const strict = (await retrieve({ question: 'cairns granite stones', similarity_threshold: 0.6 })).body.data;
    assert.ok(strict.total < all.total);
    assert.ok(strict.chunks.every((c: any) => c.similarity >= 0.6));
    const page2 = (await retrieve({ question: 'cairns granite stones', similarity_threshold: 0, page: 2, page_size: 2 })).body.data;
    assert.deepEqual(page2.chunks.map((c: any) => c.id), all.chunks.slice(2, 4).map((c: any) => c.id));
    assert.equal(page2.total, all.total);
  });

  it('answers an empty result to a blank question, and 400 to a missing dataset_ids', async () => {
    const blank = await retrieve({ question: '  ' });
    assert.deepEqual(blank.body.data, { total: 0, chunks: [], doc_aggs: [] });
    assert.equal((await api.post('/retrieval', { question: 'x' })).status, 400);
  });

  it("takes RAGFlow's toc_enhance: false as its SDK sends it, and refuses true (no tables of contents) with a 400 saying so", async () => {
    assert.equal((await retrieve({ question: 'summit', toc_enhance: false })).status, 200);
    const refused = await retrieve({ question: 'summit', toc_enhance: true });
    assert.equal(refused.status, 400);
    assert.match(refused.body.message, /`toc_enhance` is not supported/);
  });

  it('restricts to document_ids', async () => {
    const res = (await retrieve({ question: 'cairns', document_ids: [docB], similarity_threshold: 0 })).body.data;
    assert.ok(res.chunks.length > 0);
    assert.ok(res.chunks.every((c: any) => c.document_id === docB));
  });

  it('filters on meta_fields with metadata_condition', async () => {
    const ask = async (condition: object) =>
      new Set((await retrieve({ question: 'cairns granite', similarity_threshold: 0, metadata_condition: condition })).body.data.chunks.map((c: any) => c.document_id));
    assert.deepEqual(await ask({ conditions: [{ name: 'region', comparison_operator: '=', value: 'alps' }] }), new Set([docA]));
    assert.deepEqual(await ask({ conditions: [{ name: 'year', comparison_operator: '<', value: 2020 }] }), new Set([docB]));
    assert.deepEqual(await ask({ conditions: [{ name: 'tags', comparison_operator: 'contains', value: 'snow' }] }), new Set([docA]));
    assert.deepEqual(await ask({ logic: 'or', conditions: [{ name: 'region', comparison_operator: '=', value: 'alps' }, { name: 'year', comparison_operator: '≥', value: 2019 }] }), new Set([docA, docB]));
    assert.deepEqual(await ask({ conditions: [{ name: 'region', comparison_operator: 'not in', value: ['alps', 'coast'] }] }), new Set());
    const bad = await retrieve({ question: 'x', metadata_condition: { conditions: [{ name: 'a', comparison_operator: 'like', value: 1 }] } });
    assert.equal(bad.status, 400);
  });

  it('uses a rerank model when rerank_id is given', async () => {
    const res = await retrieve({ question: 'lighthouse weather', rerank_id: 'fake-rerank@Xinference', similarity_threshold: 0 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.data.chunks[0].content, /lighthouse/);
    assert.ok(fakes.xinference.requests.some((r) => r.path === '/v1/rerank' && r.body.query === 'lighthouse weather'));
  });

  it('adds keywords from the chat model when keyword is true', async () => {
    fakes.openai.behaviour.answer = (messages: FakeMessage[]) =>
      /keywords/i.test(messages[0]?.content ?? '') ? { answer: 'lighthouse, weather' } : { answer: 'unused' };
    const without = await retrieve({ question: 'what is noted at dusk', similarity_threshold: 0.35 });
    assert.ok(!without.body.data.chunks.some((c: any) => /lighthouse/.test(c.content)));
    const res = await retrieve({ question: 'what is noted at dusk', keyword: true, similarity_threshold: 0.35 });
    assert.equal(res.status, 200);
    assert.match(res.body.data.chunks[0].content, /lighthouse keeper/);
    assert.ok(fakes.openai.requests.some((r) => r.path === '/v1/chat/completions' && r.body.messages.at(-1).content === 'what is noted at dusk'));
  });

  it('searches translations of the question with cross_languages', async () => {
    fakes.openai.behaviour.answer = (messages: FakeMessage[]) =>
      /into English/.test(messages[0]?.content ?? '') ? { answer: 'desert caravans wells' } : { answer: 'unused' };
    const res = await retrieve({ question: 'caravanes du désert', cross_languages: ['English'], similarity_threshold: 0.1 });
    assert.equal(res.status, 200);
    assert.match(res.body.data.chunks[0].content, /desert guide caravans/);
  });

  it('rejects documents or datasets with different embedding models, naming them', async () => {
    const other = (await api.post('/datasets', { name: 'other-model', embedding_model: 'fake-embed@OpenAI-API-Compatible' })).body.data.id;
    const otherDoc = (await upload(api, other, [{ name: 'o.txt', bytes: Buffer.from('z') }])).body.data[0].id;
    await api.post(`/datasets/${other}/documents/${otherDoc}/chunks`, { content: 'Cairns in a fake-embedded dataset.' });
    const both = await api.post('/retrieval', { question: 'cairns', dataset_ids: [ds, other] });
    assert.equal(both.status, 400);
    assert.match(both.body.message, /different embedding models/);
    assert.match(both.body.message, /other-model/);
    const docs = await api.post('/retrieval', { question: 'cairns', dataset_ids: [ds, other], document_ids: [docA, otherDoc] });
    assert.equal(docs.status, 400);
    assert.match(docs.body.message, /selected documents/);
    const alone = await api.post('/retrieval', { question: 'cairns', dataset_ids: [other], similarity_threshold: 0 });
    assert.equal(alone.status, 200);
    assert.equal(alone.body.data.chunks.length, 1);
  });

  it('an embedding provider that cannot be reached: 500 naming the provider, the cause and the URL, as the chat and memory routes answer', async () => {
    const { api: user } = await newUser('retrieval-down');
    const down = await startFakeOpenAI({ dims: 64 });
    await addModelServer(user, down.baseUrl, { instance: 'down', embedding: 'down-embed' });
    const dataset = (await user.post('/datasets', { name: 'down', embedding_model: `down-embed@down@${FACTORY}` })).body.data.id;
    const doc = (await upload(user, dataset, [{ name: 'd.txt', bytes: Buffer.from('d') }])).body.data[0].id;
    assert.equal((await user.post(`/datasets/${dataset}/documents/${doc}/chunks`, { content: 'Cairns on a provider that goes away.' })).status, 200);
    await down.close();
    const res = await user.post('/retrieval', { question: 'cairns', dataset_ids: [dataset] });
    assert.equal(res.status, 500, JSON.stringify(res.body));
    assert.equal(res.body.code, 500);
    assert.match(res.body.message, new RegExp(`^${FACTORY}: connection refused at ${down.baseUrl.replace(/\./g, '\\.')}`));
  });

  it('raises a dataset with pagerank above an equal one without', async () => {
    const a = (await api.post('/datasets', { name: 'pr-a' })).body.data.id;
    const b = (await api.post('/datasets', { name: 'pr-b' })).body.data.id;
    for (const id of [a, b]) {
      const doc = (await upload(api, id, [{ name: 'same.txt', bytes: Buffer.from('s') }])).body.data[0].id;
      await api.post(`/datasets/${id}/documents/${doc}/chunks`, { content: 'Identical text about basalt columns.' });
    }
    await api.put(`/datasets/${b}`, { pagerank: 50 });
    const res = await api.post('/retrieval', { question: 'basalt columns', dataset_ids: [a, b], similarity_threshold: 0 });
    assert.equal(res.body.data.chunks[0].dataset_id, b);
  });
});
