import assert from 'node:assert/strict';
import { harness } from './harness.js';
import { Api, newUser } from './client.js';
import { upload } from './documents-helpers.js';
import { startFakes, type Fakes, type FakeMessage } from '../fakes/index.js';
import { useFakeProviders } from './providers-helpers.js';

describe('RAGFlow routes a client hits (issue 15 item 3)', () => {
  let api: Api;
  let other: Api;
  let fakes: Fakes;
  let ds: string;
  let docA: string;
  let docB: string;
  const chunkIds: string[] = [];

  before(async () => {
    api = (await newUser('ragflow-routes')).api;
    other = (await newUser('ragflow-routes-other')).api;
    fakes = await startFakes();
    ds = (await api.post('/datasets', { name: 'dify-kb' })).body.data.id;
    const docs = (await upload(api, ds, [
      { name: 'peaks.txt', bytes: Buffer.from('x') },
      { name: 'harbour.txt', bytes: Buffer.from('y') },
    ])).body.data;
    [docA, docB] = docs.map((d: any) => d.id);
    for (const [doc, content] of [
      [docA, 'Granite cairns mark the summit trail above the tree line.'],
      [docB, 'The harbour lighthouse keeper logs the weather every evening.'],
    ]) {
      const res = await api.post(`/datasets/${ds}/documents/${doc}/chunks`, { content, important_keywords: ['k'] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      chunkIds.push(res.body.data.chunk.id);
    }
    await api.patch(`/datasets/${ds}/documents/${docA}`, { meta_fields: { region: 'alps' } });
    await api.patch(`/datasets/${ds}/documents/${docB}`, { meta_fields: { region: 'coast' } });
  });
  after(() => fakes.close());

  describe('GET /datasets/{dataset_id}/documents/{document_id}/chunks/{chunk_id}', () => {
    it('returns one chunk in the shape the chunk list returns it', async () => {
      const one = await api.get(`/datasets/${ds}/documents/${docA}/chunks/${chunkIds[0]}`);
      assert.equal(one.status, 200);
      assert.equal(one.body.code, 0);
      const listed = (await api.get(`/datasets/${ds}/documents/${docA}/chunks`)).body.data.chunks.find((c: any) => c.id === chunkIds[0]);
      assert.deepEqual(one.body.data, listed);
      assert.equal(one.body.data.content, 'Granite cairns mark the summit trail above the tree line.');
      assert.equal(one.body.data.docnm_kwd, 'peaks.txt');
    });

    it('answers 1001 Invalid Chunk ID for an unknown chunk or a chunk of another document', async () => {
      for (const path of [`/datasets/${ds}/documents/${docA}/chunks/nochunk`, `/datasets/${ds}/documents/${docA}/chunks/${chunkIds[1]}`]) {
        const res = await api.get(path);
        assert.equal(res.status, 404);
        assert.equal(res.body.code, 1001);
        assert.match(res.body.message, /Invalid Chunk ID/);
      }
    });

    it("answers 404 for another tenant's dataset", async () => {
      const res = await other.get(`/datasets/${ds}/documents/${docA}/chunks/${chunkIds[0]}`);
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 404);
    });
  });

  describe('GET /users/me/models', () => {
    it("returns the caller's model settings (llm_id, embd_id, ...) with the built-in models until others are chosen", async () => {
      const res = await other.get('/users/me/models');
      assert.equal(res.status, 200);
      const d = res.body.data;
      assert.equal(d.llm_id, 'SmolLM2-135M-Instruct@Builtin');
      assert.equal(d.embd_id, 'BAAI/bge-small-en-v1.5@Builtin', 'RAGFlow\'s id for its built-in embedder');
      for (const k of ['tenant_id', 'name', 'rerank_id', 'asr_id', 'img2txt_id', 'tts_id', 'parser_ids', 'role']) assert.ok(k in d, k);
      const ids = d.models.map((m: any) => m.model_id);
      assert.ok(ids.includes('SmolLM2-135M-Instruct@Builtin'));
      assert.ok(ids.includes('BAAI/bge-small-en-v1.5@Builtin'));
      assert.ok(ids.includes('sentence-transformers/all-MiniLM-L6-v2@Builtin'), 'the former default stays for existing datasets');
    });

    it('lists configured provider models and the chosen defaults, per tenant', async () => {
      const user = (await newUser('models-me')).api;
      await useFakeProviders(user, fakes);
      const d = (await user.get('/users/me/models')).body.data;
      assert.equal(d.llm_id, 'fake-chat@fake@OpenAI-API-Compatible');
      const ids = d.models.map((m: any) => m.model_id);
      for (const id of ['fake-chat@fake@OpenAI-API-Compatible', 'fake-embed@fake@OpenAI-API-Compatible', 'fake-rerank@fake@Xinference', 'SmolLM2-135M-Instruct@Builtin']) assert.ok(ids.includes(id), id);
      assert.equal((await other.get('/users/me/models')).body.data.llm_id, 'SmolLM2-135M-Instruct@Builtin');
      assert.equal((await new Api(api.url).get('/users/me/models')).status, 401);
    });
  });

  describe('POST|GET /dify/retrieval', () => {
    it('answers Dify records {content, score, title, metadata} without an envelope', async () => {
      const res = await api.post('/dify/retrieval', { knowledge_id: ds, query: 'granite cairns summit', retrieval_setting: { top_k: 5, score_threshold: 0 } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body), ['records']);
      const [first] = res.body.records;
      assert.match(first.content, /Granite cairns/);
      assert.equal(first.title, 'peaks.txt');
      assert.ok(first.score > 0 && first.score <= 1);
      assert.deepEqual(first.metadata, { region: 'alps', doc_id: docA, document_id: docA });
      const scores = res.body.records.map((r: any) => r.score);
      assert.deepEqual(scores, [...scores].sort((a, b) => b - a));
    });

    it('applies top_k, score_threshold and a Dify metadata_condition', async () => {
      const top1 = await api.post('/dify/retrieval', { knowledge_id: ds, query: 'cairns lighthouse', retrieval_setting: { top_k: 1, score_threshold: 0 } });
      assert.equal(top1.body.records.length, 1);
      const strict = await api.post('/dify/retrieval', { knowledge_id: ds, query: 'granite cairns summit', retrieval_setting: { top_k: 5, score_threshold: 0.99 } });
      assert.ok(strict.body.records.every((r: any) => r.score >= 0.99));
      const filtered = await api.post('/dify/retrieval', {
        knowledge_id: ds, query: 'cairns lighthouse weather', retrieval_setting: { top_k: 5, score_threshold: 0 },
        metadata_condition: { logical_operator: 'and', conditions: [{ name: ['region'], comparison_operator: 'is', value: 'coast' }] },
      });
      assert.equal(filtered.status, 200, JSON.stringify(filtered.body));
      assert.ok(filtered.body.records.length > 0);
      assert.ok(filtered.body.records.every((r: any) => r.metadata.document_id === docB));
    });

    it('accepts GET with the same fields as query parameters', async () => {
      const res = await api.get('/dify/retrieval', { knowledge_id: ds, query: 'lighthouse weather', retrieval_setting: JSON.stringify({ top_k: 1, score_threshold: 0 }) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.records.length, 1);
      assert.match(res.body.records[0].content, /lighthouse/);
    });

    it('answers 400 for missing or malformed arguments, naming them', async () => {
      const missing = await api.post('/dify/retrieval', { retrieval_setting: { top_k: 3 } });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.message, 'required arguments are missing: knowledge_id,query; ');
      const badTopK = await api.post('/dify/retrieval', { knowledge_id: ds, query: 'x', retrieval_setting: { top_k: 0 } });
      assert.equal(badTopK.status, 400);
      assert.match(badTopK.body.message, /invalid or malformed arguments: retrieval_setting.top_k/);
      const badCondition = await api.post('/dify/retrieval', { knowledge_id: ds, query: 'x', metadata_condition: { conditions: [{ name: ['region'], comparison_operator: 'like', value: 'a' }] } });
      assert.equal(badCondition.status, 400);
      assert.match(badCondition.body.message, /metadata_condition/);
    });

    it("answers 404 Knowledgebase not found! for an unknown dataset or another tenant's, and 401 without credentials", async () => {
      for (const [client, id] of [[api, 'nosuchdataset'], [other, ds]] as const) {
        const res = await client.post('/dify/retrieval', { knowledge_id: id, query: 'cairns' });
        assert.equal(res.status, 404);
        assert.deepEqual(res.body, { code: 404, message: 'Knowledgebase not found!' });
      }
      assert.equal((await new Api(api.url).post('/dify/retrieval', { knowledge_id: ds, query: 'cairns' })).status, 401);
    });

    it('answers the health check without credentials', async () => {
      const res = await new Api((await harness()).url).get('/dify/retrieval/health');
      assert.deepEqual(res.body, { code: 0, message: 'success', data: true });
    });
  });

  describe('POST /searchbots/related_questions', () => {
    it("returns the related questions the tenant's chat model lists, numbering removed", async () => {
      const user = (await newUser('related')).api;
      await useFakeProviders(user, fakes);
      fakes.openai.behaviour.answer = (messages: FakeMessage[]) =>
        /related questions/i.test(messages[0]?.content ?? '') && /cairns/.test(messages.at(-1)?.content ?? '')
          ? { answer: 'Here are some:\n1. What are cairns made of?\n2. Who builds trail cairns?\n3. Are cairns protected?' }
          : { answer: 'unused' };
      const res = await user.post('/searchbots/related_questions', { question: 'cairns' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data, ['What are cairns made of?', 'Who builds trail cairns?', 'Are cairns protected?']);
      assert.ok(fakes.openai.requests.some((r) => r.path === '/v1/chat/completions' && r.body.model === 'fake-chat'));
    });

    it('refuses at once, naming the setting, for a user with no default chat model, instead of running the built-in model', async () => {
      const user = (await newUser('no-model')).api;
      const started = Date.now();
      const res = await user.post('/searchbots/related_questions', { question: 'cairns' });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(res.body.message, /Related questions need a chat model: no default chat model is set \(set one with PATCH \/api\/v1\/models\/default/);
      assert.ok(Date.now() - started < 2000, 'answered without generating');
    });

    it('answers 400 when question is missing', async () => {
      const res = await api.post('/searchbots/related_questions', {});
      assert.equal(res.status, 400);
      assert.match(res.body.message, /question/);
    });
  });
});
