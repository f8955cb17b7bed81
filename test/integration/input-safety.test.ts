import assert from 'node:assert/strict';
import { harness } from './harness.js';
import { Api, newUser } from './client.js';
import { upload } from './documents-helpers.js';
import { MAX_ERROR_MESSAGE } from '../../src/api/envelope.js';
import { MAX_PAGE } from '../../src/api/schemas.js';
import { unboundedInOpenApi } from '../support/schema-bounds.js';

/** Issue 19 parts 4 and 5: inputs are authenticated first, bounded, and answered briefly. */
describe('input safety (issue 19)', function () {
  let url: string;
  let api: Api;
  let datasetId: string;

  before(async () => {
    url = (await harness()).url;
    api = (await newUser('inputs')).api;
    datasetId = (await api.post('/datasets', { name: `inputs-${Date.now()}` })).body.data.id;
  });

  describe('a stranger gets 401 whatever the body', () => {
    const stranger = () => new Api(url);

    it('malformed JSON', async () => {
      const res = await stranger().request('POST', '/datasets', { raw: '{"name": ', headers: { 'Content-Type': 'application/json' } });
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 401);
    });

    it('a body over the JSON limit', async () => {
      const res = await stranger().request('POST', '/datasets', { raw: JSON.stringify({ name: 'x', description: 'y'.repeat(2 * 1024 * 1024) }), headers: { 'Content-Type': 'application/json' } });
      assert.equal(res.status, 401);
    });

    it('a malformed multipart upload', async () => {
      const res = await stranger().request('POST', `/datasets/${datasetId}/documents`, { raw: 'garbage', headers: { 'Content-Type': 'multipart/form-data; boundary=zzz' } });
      assert.equal(res.status, 401);
    });

    it('a valid upload, which stores nothing', async () => {
      const res = await upload(stranger(), datasetId, [{ name: 'a.txt', bytes: Buffer.from('alpha') }]);
      assert.equal(res.status, 401);
      assert.equal((await api.get(`/datasets/${datasetId}/documents`)).body.data.total, 0);
    });

    it('in OpenAI\'s shape on the OpenAI-compatible route, malformed body or not', async () => {
      const res = await stranger().request('POST', `/openai/${'0'.repeat(32)}/chat/completions`, { raw: '{"model": ', headers: { 'Content-Type': 'application/json' } });
      assert.equal(res.status, 401);
      assert.equal(res.body.error.type, 'authentication_error');
    });

    it('while a caller with a key still gets the 400 for malformed JSON', async () => {
      const res = await api.request('POST', '/datasets', { raw: '{"name": ', headers: { 'Content-Type': 'application/json' } });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /Malformed JSON/);
    });
  });

  describe('numbers beyond safe ranges are a 400 naming the field', () => {
    for (const path of ['/datasets', '/chats', '/agents', '/memories']) {
      it(`GET ${path}?page=1e30`, async () => {
        const res = await api.get(path, { page: '1e30' });
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.equal(res.body.message, `\`page\` must be an integer between 0 and ${MAX_PAGE}`);
      });
    }

    it('on the documents and chunks lists too', async () => {
      assert.equal((await api.get(`/datasets/${datasetId}/documents`, { page: '1e30' })).status, 400);
      assert.equal((await api.get(`/datasets/${datasetId}/documents`, { page_size: '1e30' })).status, 400);
    });

    it('in a retrieval body (page, top_k)', async () => {
      const page = await api.post('/retrieval', { question: 'q', dataset_ids: [datasetId], page: 1e30 });
      assert.equal(page.status, 400);
      assert.match(page.body.message, /^`page` must be an integer between 1 and/);
      const topK = await api.post('/retrieval', { question: 'q', dataset_ids: [datasetId], top_k: 1e30 });
      assert.match(topK.body.message, /^`top_k` must be an integer between 1 and 10000/);
    });

    it('and a page_size above the cap is still clamped, not refused', async () => {
      const res = await api.get('/datasets', { page_size: 100_000 });
      assert.equal(res.status, 200);
    });
  });

  describe('error bodies stay short', () => {
    let base: string;

    before(async () => {
      const doc = (await upload(api, datasetId, [{ name: 'c.txt', bytes: Buffer.from('placeholder') }])).body.data[0].id;
      base = `/datasets/${datasetId}/documents/${doc}/chunks`;
    });

    it('a chunk delete of 20,000 ids is refused by its size, in a short answer', async () => {
      const ids = Array.from({ length: 20_000 }, (_, i) => i.toString(16).padStart(32, '0'));
      const res = await api.delete(base, { chunk_ids: ids });
      assert.equal(res.status, 400);
      assert.equal(res.body.message, '`chunk_ids` must NOT have more than 10000 items');
      assert.ok(JSON.stringify(res.body).length < 200);
    });

    it('a chunk delete of 10,000 unknown ids names the first few and counts the rest', async () => {
      const ids = Array.from({ length: 10_000 }, (_, i) => i.toString(16).padStart(32, '0'));
      const res = await api.delete(base, { chunk_ids: ids });
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 1001);
      assert.match(res.body.message, /^Invalid Chunk ID: 0{32}, 0{31}1, .* … and 9,995 more$/);
      assert.ok(JSON.stringify(res.body).length <= MAX_ERROR_MESSAGE + 100);
    });

    it('a partial chunk delete lists its first few errors and counts the rest', async () => {
      const chunk = (await api.post(base, { content: 'Granite cairns mark the pass.' })).body.data.chunk.id;
      const ids = [chunk, ...Array.from({ length: 9_000 }, (_, i) => `missing-${i}`)];
      const res = await api.delete(base, { chunk_ids: ids });
      assert.equal(res.status, 200);
      assert.equal(res.body.message, 'Partially deleted 1 chunks with 9000 errors');
      assert.equal(res.body.data.errors.length, 6);
      assert.equal(res.body.data.errors[5], '… and 8,995 more');
    });

    it('a body with many faults names the first three and counts the rest', async () => {
      const body = { name: 'x', ...Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`unknown_${i}`, i])) };
      const res = await api.post('/datasets', body);
      assert.equal(res.status, 400);
      assert.match(res.body.message, /^`unknown_0` is not an accepted field; `unknown_1` is not an accepted field; `unknown_2` is not an accepted field … and 47 more$/);
    });
  });

  it('serves an OpenAPI document whose every parameter and request body is bounded', async () => {
    const res = await new Api(url).get('/openapi.json');
    assert.equal(res.status, 200);
    assert.deepEqual(unboundedInOpenApi(res.body), []);
  });
});
