import assert from 'node:assert/strict';
import { Api, newUser } from './client.js';
import { upload } from './documents-helpers.js';
import { postSse } from './chat-helpers.js';
import { startFakes, type Fakes, type FakeMessage } from '../fakes/index.js';
import { useFakeProviders } from './providers-helpers.js';

/** Issue 38: RAGFlow's dataset search routes, search apps, share tokens and download by document id. */
describe('RAGFlow search routes, search apps and downloads by id (issue 38)', () => {
  let api: Api;
  let other: Api;
  let fakes: Fakes;
  let models: Awaited<ReturnType<typeof useFakeProviders>>;
  let ds: string;
  let docA: string;
  let docB: string;

  before(async () => {
    api = (await newUser('search')).api;
    other = (await newUser('search-other')).api;
    fakes = await startFakes();
    models = await useFakeProviders(api, fakes);
    ds = (await api.post('/datasets', { name: 'trails' })).body.data.id;
    [docA, docB] = (await upload(api, ds, [
      { name: 'peaks.txt', bytes: Buffer.from('granite peaks') },
      { name: 'harbour.txt', bytes: Buffer.from('harbour light') },
    ])).body.data.map((d: any) => d.id);
    for (const [doc, content] of [
      [docA, 'Granite cairns mark the summit trail above the tree line.'],
      [docB, 'The harbour lighthouse keeper logs the weather every evening.'],
    ]) {
      assert.equal((await api.post(`/datasets/${ds}/documents/${doc}/chunks`, { content })).status, 200);
    }
    await api.patch(`/datasets/${ds}/documents/${docA}`, { meta_fields: { region: 'alps' } });
    await api.patch(`/datasets/${ds}/documents/${docB}`, { meta_fields: { region: 'coast' } });
  });
  after(() => fakes.close());

  describe('POST /datasets/{dataset_id}/search and POST /datasets/search', () => {
    it('returns the chunks ranked for the question with total, doc_aggs and labels', async () => {
      const res = await api.post(`/datasets/${ds}/search`, { question: 'summit trail cairns' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.chunks[0].content, 'Granite cairns mark the summit trail above the tree line.');
      assert.equal(res.body.data.chunks[0].document_id, docA);
      assert.equal(typeof res.body.data.total, 'number');
      assert.ok(Array.isArray(res.body.data.doc_aggs));
      assert.equal(res.body.data.labels, null);
    });

    it('takes size, doc_ids and a manual meta_data_filter ({key, op, value}, "is" for =)', async () => {
      const one = await api.post(`/datasets/${ds}/search`, { question: 'trail lighthouse', size: 1 });
      assert.equal(one.body.data.chunks.length, 1);
      const byDoc = await api.post('/datasets/search', { dataset_ids: [ds], question: 'trail lighthouse', doc_ids: [docB] });
      assert.deepEqual(byDoc.body.data.chunks.map((c: any) => c.document_id), [docB]);
      const filtered = await api.post('/datasets/search', {
        dataset_ids: [ds],
        question: 'trail lighthouse',
        meta_data_filter: { method: 'manual', manual: [{ key: 'region', op: 'is', value: 'coast' }] },
      });
      assert.equal(filtered.status, 200, JSON.stringify(filtered.body));
      assert.deepEqual(filtered.body.data.chunks.map((c: any) => c.document_id), [docB]);
    });

    it('answers 400 for a missing or blank question, missing dataset_ids, or a model-written meta_data_filter', async () => {
      for (const [path, body, field] of [
        [`/datasets/${ds}/search`, {}, /question/],
        [`/datasets/${ds}/search`, { question: '   ' }, /question/],
        ['/datasets/search', { question: 'trail' }, /dataset_ids/],
        ['/datasets/search', { question: 'trail', dataset_ids: [ds], meta_data_filter: { method: 'auto' } }, /meta_data_filter.method 'auto' is not supported/],
      ] as const) {
        const res = await api.post(path, body);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.match(res.body.message, field);
      }
    });

    it("answers 404 for an unknown dataset and for another tenant's", async () => {
      assert.equal((await api.post(`/datasets/${'0'.repeat(32)}/search`, { question: 'trail' })).status, 404);
      assert.equal((await other.post(`/datasets/${ds}/search`, { question: 'trail' })).status, 404);
      assert.equal((await other.post('/datasets/search', { dataset_ids: [ds], question: 'trail' })).status, 404);
    });
  });

  describe('search apps: /searches', () => {
    it('creates (a taken name gets "(1)"), lists, gets with the default search_config, and deletes', async () => {
      const created = await api.post('/searches', { name: 'Trail finder', description: 'walks' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const id = created.body.data.search_id;
      assert.match(id, /^[0-9a-f]{32}$/);
      const again = await api.post('/searches', { name: 'trail FINDER' });
      const second = (await api.get(`/searches/${again.body.data.search_id}`)).body.data;
      assert.equal(second.name, 'trail FINDER(1)');

      const list = await api.get('/searches', { keywords: 'finder', orderby: 'create_time', desc: false });
      assert.equal(list.body.data.total, 2);
      assert.deepEqual(list.body.data.search_apps.map((s: any) => s.name), ['Trail finder', 'trail FINDER(1)']);

      const detail = (await api.get(`/searches/${id}`)).body.data;
      assert.equal(detail.description, 'walks');
      assert.deepEqual(
        [detail.search_config.kb_ids, detail.search_config.similarity_threshold, detail.search_config.vector_similarity_weight, detail.search_config.top_k],
        [[], 0.2, 0.3, 1024],
      );

      assert.deepEqual((await api.delete(`/searches/${again.body.data.search_id}`)).body, { code: 0, data: true });
      assert.equal((await api.get(`/searches/${again.body.data.search_id}`)).status, 404);
    });

    it('PUT needs name and search_config, merges the config, and refuses a taken name', async () => {
      const id = (await api.post('/searches', { name: 'merge-me' })).body.data.search_id;
      const missing = await api.put(`/searches/${id}`, { name: 'merge-me' });
      assert.equal(missing.status, 400);
      assert.match(missing.body.message, /search_config/);
      const put = await api.put(`/searches/${id}`, { name: 'merged', search_config: { kb_ids: [ds], top_k: 5, summary: true } });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.equal(put.body.data.name, 'merged');
      assert.deepEqual([put.body.data.search_config.kb_ids, put.body.data.search_config.top_k, put.body.data.search_config.summary], [[ds], 5, true]);
      const put2 = await api.put(`/searches/${id}`, { name: 'merged', search_config: { similarity_threshold: 0.5 } });
      assert.deepEqual([put2.body.data.search_config.kb_ids, put2.body.data.search_config.similarity_threshold], [[ds], 0.5]);
      await api.post('/searches', { name: 'taken' });
      const dup = await api.put(`/searches/${id}`, { name: 'TAKEN', search_config: {} });
      assert.equal(dup.status, 400);
      assert.match(dup.body.message, /Duplicated search name/);
    });

    it("answers 404 to another tenant, and refuses datasets or models the caller cannot use", async () => {
      const id = (await api.post('/searches', { name: 'private' })).body.data.search_id;
      assert.equal((await other.get(`/searches/${id}`)).status, 404);
      assert.equal((await other.put(`/searches/${id}`, { name: 'x', search_config: {} })).status, 404);
      assert.equal((await other.delete(`/searches/${id}`)).status, 404);
      assert.equal((await other.post(`/searches/${id}/completions`, { question: 'trail' })).status, 404);
      assert.equal((await other.get('/searches')).body.data.total, 0);
      const theirs = (await other.post('/datasets', { name: 'theirs' })).body.data.id;
      assert.equal((await api.put(`/searches/${id}`, { name: 'private', search_config: { kb_ids: [theirs] } })).status, 404);
      const badModel = await api.put(`/searches/${id}`, { name: 'private', search_config: { chat_id: 'nope@Nowhere' } });
      assert.equal(badModel.status, 400, JSON.stringify(badModel.body));
    });

    it("answers a completion from the app's datasets with its chat model: cumulative SSE frames, the reference last, then data: true", async () => {
      fakes.openai.behaviour.answer = (messages: FakeMessage[]) =>
        /Knowledge base excerpts/.test(messages[0]?.content ?? '') && /summit trail/.test(messages[0]?.content ?? '')
          ? { answer: 'Granite cairns mark the summit trail [ID:0].' }
          : { answer: 'no knowledge given' };
      const id = (await api.post('/searches', { name: 'asker', search_config: { kb_ids: [ds], chat_id: models.chat, similarity_threshold: 0 } })).body.data.search_id;
      for (const path of [`/searches/${id}/completions`, `/searches/${id}/completion`]) {
        const sse = await postSse(api, path, { question: 'What marks the summit trail?' });
        assert.equal(sse.status, 200, sse.raw);
        assert.deepEqual(sse.frames.at(-1), { code: 0, message: '', data: true });
        const final = sse.frames.at(-2).data;
        assert.equal(final.final, true);
        assert.match(final.answer, /^Granite cairns mark the summit trail/);
        assert.equal(final.reference.chunks[0].document_id, docA);
      }
    });

    it('a completion needs datasets (the app\'s, or kb_ids) and a question', async () => {
      const id = (await api.post('/searches', { name: 'no-datasets' })).body.data.search_id;
      const none = await api.post(`/searches/${id}/completions`, { question: 'trail' });
      assert.equal(none.status, 400);
      assert.match(none.body.message, /kb_ids/);
      const noQuestion = await api.post(`/searches/${id}/completions`, { kb_ids: [ds] });
      assert.equal(noQuestion.status, 400);
      const withKb = await postSse(api, `/searches/${id}/completions`, { question: 'trail', kb_ids: [ds] });
      assert.equal(withKb.status, 200, withKb.raw);
      assert.equal(withKb.frames.at(-2).data.final, true);
    });

    it("a dataset search with search_id applies the app's saved settings over the request's", async () => {
      const id = (await api.post('/searches', { name: 'strict', search_config: { similarity_threshold: 1 } })).body.data.search_id;
      const loose = await api.post(`/datasets/${ds}/search`, { question: 'summit trail cairns', similarity_threshold: 0 });
      assert.ok(loose.body.data.chunks.length > 0);
      const strict = await api.post(`/datasets/${ds}/search`, { question: 'summit trail cairns', similarity_threshold: 0, search_id: id });
      assert.deepEqual(strict.body.data.chunks, []);
    });
  });

  describe('share tokens (beta) and /searchbots/related_questions', () => {
    it("every API key lists a 32-character beta token, which opens /searchbots routes only, with the app's chat model", async () => {
      const created = await api.post('/system/tokens');
      assert.equal(created.body.data.beta.length, 32);
      const listed = (await api.get('/system/tokens')).body.data;
      assert.ok(listed.every((k: any) => typeof k.beta === 'string' && k.beta.length === 32));
      assert.ok(listed.some((k: any) => k.beta === created.body.data.beta));

      const beta = new Api(api.url, created.body.data.beta);
      const app = (await api.post('/searches', { name: 'shared', search_config: { chat_id: models.chat } })).body.data.search_id;
      fakes.openai.behaviour.answer = () => ({ answer: '1. Who builds cairns?\n2. How tall are cairns?' });
      const related = await beta.post('/searchbots/related_questions', { question: 'cairns', search_id: app });
      assert.equal(related.status, 200, JSON.stringify(related.body));
      assert.deepEqual(related.body.data, ['Who builds cairns?', 'How tall are cairns?']);

      assert.equal((await beta.get('/datasets')).status, 401);
      assert.equal((await beta.get(`/searches/${app}`)).status, 401);
    });
  });

  describe('GET /documents/{document_id}', () => {
    it('downloads the original file by document id alone', async () => {
      const res = await api.get(`/documents/${docA}`);
      assert.equal(res.status, 200);
      assert.equal(res.body, 'granite peaks');
      assert.match(res.headers.get('content-disposition')!, /peaks\.txt/);
    });

    it("answers 404 for an unknown document and for another tenant's", async () => {
      assert.equal((await api.get(`/documents/${'0'.repeat(32)}`)).status, 404);
      assert.equal((await other.get(`/documents/${docA}`)).status, 404);
    });
  });
});
