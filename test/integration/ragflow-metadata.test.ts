import assert from 'node:assert/strict';
import { Api, newUser } from './client.js';
import { upload } from './documents-helpers.js';

describe('RAGFlow dataset metadata and tag routes (issue 15 item 3)', () => {
  let api: Api;
  let other: Api;
  let ds: string;
  let ds2: string;
  let docA: string;
  let docB: string;
  let docC: string;

  before(async () => {
    api = (await newUser('ragflow-metadata')).api;
    other = (await newUser('ragflow-metadata-other')).api;
    ds = (await api.post('/datasets', { name: 'meta-kb' })).body.data.id;
    ds2 = (await api.post('/datasets', { name: 'meta-kb-2' })).body.data.id;
    const docs = (await upload(api, ds, [
      { name: 'a.txt', bytes: Buffer.from('a') },
      { name: 'b.txt', bytes: Buffer.from('b') },
    ])).body.data;
    [docA, docB] = docs.map((d: any) => d.id);
    docC = (await upload(api, ds2, [{ name: 'c.txt', bytes: Buffer.from('c') }])).body.data[0].id;
    await api.patch(`/datasets/${ds}/documents/${docA}`, { meta_fields: { region: 'alps', tags: ['snow', 'rock'], year: 2020 } });
    await api.patch(`/datasets/${ds}/documents/${docB}`, { meta_fields: { region: 'alps', tags: ['rock'] } });
    await api.patch(`/datasets/${ds2}/documents/${docC}`, { meta_fields: { region: 'coast' } });
  });

  describe('GET /datasets/{dataset_id}/metadata/summary', () => {
    it('gives per key its type and [value, document count] pairs, most frequent first', async () => {
      const res = await api.get(`/datasets/${ds}/metadata/summary`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const s = res.body.data.summary;
      assert.deepEqual(s.region, { type: 'string', values: [['alps', 2]] });
      assert.deepEqual(s.tags, { type: 'list', values: [['rock', 2], ['snow', 1]] });
      assert.deepEqual(s.year, { type: 'number', values: [['2020', 1]] });
    });

    it('counts only the documents named in doc_ids (comma-separated)', async () => {
      const res = await api.get(`/datasets/${ds}/metadata/summary`, { doc_ids: docB });
      assert.deepEqual(res.body.data.summary.tags.values, [['rock', 1]]);
      assert.equal(res.body.data.summary.year, undefined);
    });

    it("answers 404 for another tenant's dataset", async () => {
      const res = await other.get(`/datasets/${ds}/metadata/summary`);
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 404);
    });
  });

  describe('GET /datasets/metadata/flattened', () => {
    it('maps each key and value to the ids of the documents having it, across the given dataset_ids', async () => {
      const res = await api.get('/datasets/metadata/flattened', { dataset_ids: `${ds},${ds2}` });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data.region.alps.sort(), [docA, docB].sort());
      assert.deepEqual(res.body.data.region.coast, [docC]);
      assert.deepEqual(res.body.data.tags.snow, [docA]);
    });

    it('answers 400 "Lack of dataset_ids in query parameters" without dataset_ids', async () => {
      const res = await api.get('/datasets/metadata/flattened');
      assert.equal(res.status, 400);
      assert.match(res.body.message, /Lack of dataset_ids in query parameters/);
    });

    it("answers 404 when one of the datasets is another tenant's", async () => {
      const res = await other.get('/datasets/metadata/flattened', { dataset_ids: ds });
      assert.equal(res.status, 404);
    });
  });

  describe('POST /datasets/{dataset_id}/documents/metadatas', () => {
    it('applies updates and deletes to the documents chosen by a metadata condition and reports updated/matched_docs', async () => {
      const res = await api.post(`/datasets/${ds}/documents/metadatas`, {
        selector: { metadata_condition: { logic: 'and', conditions: [{ name: 'tags', comparison_operator: 'contains', value: 'snow' }] } },
        updates: [{ key: 'season', value: 'winter' }],
        deletes: [{ key: 'year' }],
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data, { updated: 1, matched_docs: 1 });
      const s = (await api.get(`/datasets/${ds}/metadata/summary`)).body.data.summary;
      assert.deepEqual(s.season.values, [['winter', 1]]);
      assert.equal(s.year, undefined);
    });

    it('selects by document_ids (intersected with a condition when both are given)', async () => {
      const res = await api.post(`/datasets/${ds}/documents/metadatas`, {
        selector: { document_ids: [docA, docB], metadata_condition: { conditions: [{ name: 'tags', comparison_operator: 'not contains', value: 'snow' }] } },
        updates: [{ key: 'region', value: 'jura' }],
      });
      assert.deepEqual(res.body.data, { updated: 1, matched_docs: 1 });
      const flat = (await api.get('/datasets/metadata/flattened', { dataset_ids: ds })).body.data;
      assert.deepEqual(flat.region, { alps: [docA], jura: [docB] });
    });

    it('answers 400 for document ids outside the dataset, an update without value, a delete without key', async () => {
      const foreign = await api.post(`/datasets/${ds}/documents/metadatas`, { selector: { document_ids: [docC] }, updates: [{ key: 'x', value: 1 }] });
      assert.equal(foreign.status, 400);
      assert.match(foreign.body.message, new RegExp(`These documents do not belong to dataset ${ds}: ${docC}`));
      const noValue = await api.post(`/datasets/${ds}/documents/metadatas`, { selector: { document_ids: [docA] }, updates: [{ key: 'x' }] });
      assert.equal(noValue.status, 400);
      assert.match(noValue.body.message, /Each update requires key and value\./);
      const noKey = await api.post(`/datasets/${ds}/documents/metadatas`, { selector: { document_ids: [docA] }, deletes: [{}] });
      assert.equal(noKey.status, 400);
      assert.match(noKey.body.message, /Each delete requires key\./);
    });

    it("answers 404 for another tenant's dataset and changes nothing", async () => {
      const res = await other.post(`/datasets/${ds}/documents/metadatas`, { selector: { document_ids: [docA] }, updates: [{ key: 'hacked', value: 1 }] });
      assert.equal(res.status, 404);
      const s = (await api.get(`/datasets/${ds}/metadata/summary`)).body.data.summary;
      assert.equal(s.hacked, undefined);
    });
  });

  describe('GET|PUT /datasets/{dataset_id}/metadata/config', () => {
    it('returns an empty config until one is set, then the AutoMetadataConfig that was PUT', async () => {
      assert.deepEqual((await api.get(`/datasets/${ds}/metadata/config`)).body.data, { metadata: [], built_in_metadata: [] });
      const config = { metadata: [{ key: 'author', type: 'string', description: 'who wrote it' }], built_in_metadata: [] };
      const put = await api.put(`/datasets/${ds}/metadata/config`, config);
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.deepEqual((await api.get(`/datasets/${ds}/metadata/config`)).body.data, config);
    });

    it('answers 400 for a field type outside string|list|time|number or an empty key', async () => {
      assert.equal((await api.put(`/datasets/${ds}/metadata/config`, { metadata: [{ key: 'a', type: 'blob' }] })).status, 400);
      assert.equal((await api.put(`/datasets/${ds}/metadata/config`, { metadata: [{ key: '' }] })).status, 400);
    });

    it("answers 404 for another tenant's dataset", async () => {
      assert.equal((await other.get(`/datasets/${ds}/metadata/config`)).status, 404);
      assert.equal((await other.put(`/datasets/${ds}/metadata/config`, { metadata: [] })).status, 404);
    });
  });

  describe('GET|PUT|DELETE /datasets/{dataset_id}/tags and GET /datasets/tags/aggregation', () => {
    before(async () => {
      for (const [doc, tags] of [[docA, ['peak', 'trail']], [docB, ['peak']]] as const) {
        const res = await api.post(`/datasets/${ds}/documents/${doc}/chunks`, { content: `chunk of ${doc}`, tag_kwd: tags });
        assert.equal(res.status, 200, JSON.stringify(res.body));
      }
      await api.post(`/datasets/${ds2}/documents/${docC}/chunks`, { content: 'coast chunk', tag_kwd: ['peak', 'sea'] });
    });

    it('lists the chunk tags of a dataset as [tag, chunk count], most used first', async () => {
      const res = await api.get(`/datasets/${ds}/tags`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data, [['peak', 2], ['trail', 1]]);
    });

    it('aggregates tags across dataset_ids, and needs dataset_ids', async () => {
      const res = await api.get('/datasets/tags/aggregation', { dataset_ids: `${ds},${ds2}` });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data, [['peak', 3], ['sea', 1], ['trail', 1]]);
      const missing = await api.get('/datasets/tags/aggregation');
      assert.equal(missing.status, 400);
      assert.match(missing.body.message, /Lack of dataset_ids in query parameters/);
    });

    it('renames a tag in every chunk with PUT {from_tag, to_tag}; empty names are a 400', async () => {
      const res = await api.put(`/datasets/${ds}/tags`, { from_tag: 'trail', to_tag: 'path' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data, true);
      assert.deepEqual((await api.get(`/datasets/${ds}/tags`)).body.data, [['peak', 2], ['path', 1]]);
      const bad = await api.put(`/datasets/${ds}/tags`, { from_tag: 'peak', to_tag: ' ' });
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /from_tag and to_tag must not be empty/);
    });

    it('removes tags from the chunks with DELETE {tags}; a missing or non-string list is a 400', async () => {
      assert.match((await api.delete(`/datasets/${ds}/tags`, {})).body.message, /Lack of tags in request body/);
      assert.match((await api.delete(`/datasets/${ds}/tags`, { tags: [1] })).body.message, /tags must be a list of strings/);
      const res = await api.delete(`/datasets/${ds}/tags`, { tags: ['peak'] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual((await api.get(`/datasets/${ds}/tags`)).body.data, [['path', 1]]);
      // Other datasets keep their tags.
      assert.deepEqual((await api.get(`/datasets/${ds2}/tags`)).body.data, [['peak', 1], ['sea', 1]]);
    });

    it("answers 404 for another tenant's dataset on every tag route", async () => {
      assert.equal((await other.get(`/datasets/${ds}/tags`)).status, 404);
      assert.equal((await other.put(`/datasets/${ds}/tags`, { from_tag: 'path', to_tag: 'x' })).status, 404);
      assert.equal((await other.delete(`/datasets/${ds}/tags`, { tags: ['path'] })).status, 404);
      assert.equal((await other.get('/datasets/tags/aggregation', { dataset_ids: ds })).status, 404);
      assert.deepEqual((await api.get(`/datasets/${ds}/tags`)).body.data, [['path', 1]]);
    });
  });
});
