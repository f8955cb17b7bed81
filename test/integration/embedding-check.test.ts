import assert from 'node:assert/strict';
import { newUser, type Api } from './client.js';
import { parsedDataset } from './chat-helpers.js';

const BGE = 'BAAI/bge-small-en-v1.5@Builtin';
const MINILM = 'sentence-transformers/all-MiniLM-L6-v2@Builtin';

const DOCUMENTS = {
  'bothies.txt': 'The Corrour bothy sleeps 12 walkers.\n\nThe Ruigh Aiteachain bothy stands in Glen Feshie.',
  'stoves.txt': 'The Pinecone 2 stove weighs 320 grams.\n\nIt boils one litre of water in 4 minutes.',
};

describe("RAGFlow's embedding check: POST /datasets/{id}/embedding/check", function () {
  this.timeout(240_000);
  let api: Api;
  let datasetId: string;

  before(async function () {
    this.timeout(240_000);
    ({ api } = await newUser('embedding-check'));
    datasetId = (await parsedDataset(api, `embedding-check-${process.pid}`, DOCUMENTS)).id;
  });

  it('the model the chunks were embedded with is compatible: average cosine near 1, per-chunk results', async () => {
    const res = await api.post(`/datasets/${datasetId}/embedding/check`, { embd_id: BGE, check_num: 3 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { summary, results } = res.body.data;
    assert.equal(summary.kb_id, datasetId);
    assert.equal(summary.model, BGE);
    assert.equal(summary.sampled, results.length);
    assert.ok(summary.valid >= 1 && summary.valid <= 3, JSON.stringify(summary));
    assert.ok(summary.avg_cos_sim > 0.99, `avg ${summary.avg_cos_sim}`);
    assert.ok(['content_only', 'title+content'].includes(summary.match_mode));
    for (const r of results) {
      assert.equal(r.vector_dim, 384);
      assert.ok(Object.keys(DOCUMENTS).includes(r.doc_name), r.doc_name);
      assert.ok(r.cos_sim > 0.99, JSON.stringify(r));
    }
  });

  it('another model\'s vectors are a different space: a 400 naming the threshold, with the figures in data', async () => {
    const res = await api.post(`/datasets/${datasetId}/embedding/check`, { embd_id: MINILM });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 400);
    assert.match(res.body.message, /average similarity between old and new vectors is below 0\.9/);
    assert.equal(res.body.data.summary.model, MINILM);
    assert.ok(res.body.data.summary.avg_cos_sim < 0.9, JSON.stringify(res.body.data.summary));
  });

  it('refuses a missing or unknown model, an empty dataset and an unknown one, naming the problem', async () => {
    const missing = await api.post(`/datasets/${datasetId}/embedding/check`, {});
    assert.equal(missing.status, 400);
    assert.match(missing.body.message, /embd_id/);
    const unknown = await api.post(`/datasets/${datasetId}/embedding/check`, { embd_id: 'nope@Builtin' });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.message, /nope/);
    const empty = (await api.post('/datasets', { name: `empty-check-${process.pid}` })).body.data.id;
    const none = await api.post(`/datasets/${empty}/embedding/check`, { embd_id: BGE });
    assert.equal(none.status, 400);
    assert.equal(none.body.message, 'No embedded chunks are available to compare.');
    const gone = await api.post(`/datasets/${'0'.repeat(32)}/embedding/check`, { embd_id: BGE });
    assert.equal(gone.status, 404);
  });
});
