import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { DatasetService } from '../../../src/services/datasets.js';
import { MAX_TOP_K, RetrievalService, parseDifyRequest, type RetrieveInput } from '../../../src/services/retrieval.js';
import type { ModelClients } from '../../../src/services/model-clients.js';
import type { Principal } from '../../../src/services/auth.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import type { Candidate, ChunkFilter, ChunkIndex, IndexedChunk } from '../../../src/index/chunks/chunk-index.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';
import { anyEmbeddingModel, noCleanup, refused, storedDocument } from './fakes.js';

/**
 * The chunk index, in memory: full-text score = how many of the question's words the chunk contains (a
 * stand-in for BM25), vector score = the cosine; filters applied as the port defines them. Records every search.
 */
class FakeIndex {
  chunks: IndexedChunk[] = [];
  searches: { kind: 'fulltext' | 'vector'; filter: ChunkFilter; limit: number }[] = [];

  add(id: string, ds: string, doc: string, content: string, vector: number[], available = true) {
    this.chunks.push({
      id, tenant_id: 't', dataset_id: ds, document_id: doc, document_name: `${doc}.txt`, content, important_keywords: [], questions: [], tag_kwd: [],
      image_id: '', positions: [], available, create_time: '2024-01-01 00:00:00', create_timestamp: 0, vector,
    });
  }
  private within(filter: ChunkFilter) {
    return this.chunks.filter((c) => filter.datasetIds.includes(c.dataset_id) && (!filter.documentIds || filter.documentIds.includes(c.document_id)) && (!filter.availableOnly || c.available));
  }
  private candidate(c: IndexedChunk, score: number): Candidate {
    return { id: c.id, score, dataset_id: c.dataset_id, document_id: c.document_id, document_name: c.document_name };
  }
  async fullText(query: string, filter: ChunkFilter, limit: number) {
    this.searches.push({ kind: 'fulltext', filter, limit });
    const words = query.toLowerCase().split(/\W+/).filter(Boolean);
    return this.within(filter)
      .map((c) => this.candidate(c, words.filter((w) => c.content.toLowerCase().split(/\W+/).includes(w)).length))
      .filter((h) => h.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
  }
  async vectorSearch(vector: number[], filter: ChunkFilter, limit: number) {
    this.searches.push({ kind: 'vector', filter, limit });
    return this.within(filter)
      .map((c) => this.candidate(c, cosine(c.vector, vector)))
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
  }
  async cosineSimilarities(ids: string[], vector: number[]) {
    return new Map(this.chunks.filter((c) => ids.includes(c.id)).map((c) => [c.id, cosine(c.vector, vector)]));
  }
  async getMany(ids: string[]) {
    return this.chunks.filter((c) => ids.includes(c.id)).map((c) => ({ ...c, vector: [] }));
  }
}

function cosine(a: number[], b: number[]): number {
  const dot = a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0);
  const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return dot / (norm(a) * norm(b) || 1);
}

/** Embeds every question as `queryVector`; a rerank model that scores a text by the `score:` it carries. */
class FakeModels {
  queryVector = [1, 0];
  embeddedWith: { tenant: string; model: string }[] = [];
  reranked: { tenant: string; model: string }[] = [];
  failEmbedding?: Error;
  async embedding(tenant: string, model: string) {
    this.embeddedWith.push({ tenant, model });
    return {
      embed: async (texts: string[]) => {
        if (this.failEmbedding) throw this.failEmbedding;
        return texts.map(() => this.queryVector);
      },
    };
  }
  async rerank(tenant: string, model: string) {
    this.reranked.push({ tenant, model });
    return { rerank: async (_q: string, docs: string[]) => docs.map((d) => Number(/score:([\d.]+)/.exec(d)?.[1] ?? 0)) };
  }
  async chat() {
    throw new Error('no chat model in these specs');
  }
}

const close = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`);
const TERM_HALF = 0.5 ** 0.25; // a chunk with half the best full-text score

for (const profile of testProfiles()) describe(`RetrievalService: ranking, thresholds, paging and filters over a fake index [${profile}]`, () => {
  let db: MetaDb;
  let store: MetaStore;
  let index: FakeIndex;
  let models: FakeModels;
  let datasets: DatasetService;
  let retrieval: RetrievalService;
  let ds: string;
  const owner = tenantPrincipal('a'.repeat(32));

  beforeEach(async () => {
    db = await openTestMetaDb(profile);
    store = new MetaStore(db);
    index = new FakeIndex();
    models = new FakeModels();
    datasets = new DatasetService(store, anyEmbeddingModel, noCleanup);
    retrieval = new RetrievalService(store, datasets, index as unknown as ChunkIndex, models as unknown as ModelClients);
    ds = ((await datasets.create(owner, { name: 'alps' })) as { id: string }).id;
    // t: both words, orthogonal vector; m: one word, cosine 0.6; v: no word, cosine 1.
    index.add('t', ds, 'd1', 'the pass closes early', [0, 1]);
    index.add('m', ds, 'd2', 'a pass in summer', [0.6, 0.8]);
    index.add('v', ds, 'd3', 'snow season notes', [1, 0]);
  });
  afterEach(() => db.close());

  const ask = (fields: Partial<RetrieveInput> = {}, p: Principal = owner) => retrieval.retrieve(p, { question: 'pass closes', dataset_ids: [ds], ...fields });
  const ids = async (fields: Partial<RetrieveInput> = {}) => (await ask(fields)).chunks.map((c) => c.id);

  it('similarity = w·cosine + (1−w)·term similarity, each reported; results best first', async () => {
    const { chunks } = await ask({ vector_similarity_weight: 0.3, similarity_threshold: 0 });
    assert.deepEqual(chunks.map((c) => c.id), ['m', 't', 'v']);
    const [m, t, v] = chunks;
    close(m!.similarity, 0.3 * 0.6 + 0.7 * TERM_HALF, 'm');
    close(m!.vector_similarity, 0.6, 'm vector');
    close(m!.term_similarity, TERM_HALF, 'm term');
    close(t!.similarity, 0.7, 't');
    close(v!.similarity, 0.3, 'v');
  });

  it('vector_similarity_weight 1 ranks by the cosine alone, 0 by the words alone', async () => {
    assert.deepEqual(await ids({ vector_similarity_weight: 1, similarity_threshold: 0.01 }), ['v', 'm']);
    assert.deepEqual(await ids({ vector_similarity_weight: 0, similarity_threshold: 0.01 }), ['t', 'm']);
  });

  it('similarity_threshold drops the chunks below it, from the page, the total and doc_aggs', async () => {
    const result = await ask({ vector_similarity_weight: 0.3, similarity_threshold: 0.5 });
    assert.deepEqual(result.chunks.map((c) => c.id), ['m', 't']);
    assert.equal(result.total, 2);
    assert.deepEqual(result.doc_aggs.map((d) => d.doc_id).sort(), ['d1', 'd2']);
    assert.equal((await ask({ similarity_threshold: 1.01 })).total, 0);
  });

  it('without a threshold, 0.2 applies; without a weight, 0.3', async () => {
    // Vector-only chunks: at weight 0.3 a cosine of 0.7 gives 0.21 (kept), 0.6 gives 0.18 (dropped).
    index.chunks = [];
    index.add('above', ds, 'd1', 'nothing shared', [0.7, Math.sqrt(1 - 0.49)]);
    index.add('below', ds, 'd2', 'nothing shared', [0.6, 0.8]);
    const result = await ask();
    assert.deepEqual(result.chunks.map((c) => c.id), ['above']);
    close(result.chunks[0]!.similarity, 0.21, 'above at the default weight');
  });

  it('top_k is how many candidates each search asks the index for; without one, 1024', async () => {
    await ask({ top_k: 2 });
    assert.deepEqual(index.searches.map((s) => [s.kind, s.limit]), [['fulltext', 2], ['vector', 2]]);
    index.searches = [];
    await ask();
    assert.ok(index.searches.every((s) => s.limit === 1024));
  });

  it('page and page_size cut the ranked list; the total counts every chunk kept; a page past the end is empty', async () => {
    const all = await ids({ similarity_threshold: 0 });
    assert.deepEqual((await ask({ similarity_threshold: 0, page: 1, page_size: 2 })).chunks.map((c) => c.id), all.slice(0, 2));
    const second = await ask({ similarity_threshold: 0, page: 2, page_size: 2 });
    assert.deepEqual(second.chunks.map((c) => c.id), all.slice(2));
    assert.equal(second.total, 3);
    const past = await ask({ similarity_threshold: 0, page: 5, page_size: 2 });
    assert.deepEqual([past.chunks, past.total], [[], 3]);
  });

  it('paging numbers that are not positive fall back to page 1, 30 a page and top_k 1024', async () => {
    const result = await ask({ similarity_threshold: 0, page: 0, page_size: -3, top_k: 0 });
    assert.equal(result.chunks.length, 3);
    assert.ok(index.searches.every((s) => s.limit === 1024));
  });

  it('only available chunks are searched, within the given datasets', async () => {
    const other = ((await datasets.create(owner, { name: 'other' })) as { id: string }).id;
    index.add('hidden', ds, 'd4', 'pass closes pass closes', [1, 0], false);
    index.add('elsewhere', other, 'd5', 'pass closes', [1, 0]);
    assert.ok(!(await ids({ similarity_threshold: 0 })).some((id) => id === 'hidden' || id === 'elsewhere'));
    assert.ok(index.searches.every((s) => s.filter.availableOnly === true && s.filter.datasetIds.length === 1 && s.filter.datasetIds[0] === ds));
  });

  it("document_ids narrow the search to them, and only their datasets' embedding model matters", async () => {
    const other = ((await datasets.create(owner, { name: 'other', embedding_model: 'b@Builtin' })) as { id: string }).id;
    const doc = await storedDocument(store, { id: ds, tenant_id: owner.tenantId }, { id: 'd1'.padEnd(32, '0') });
    index.add('d1-chunk', ds, doc.id, 'pass closes', [1, 0]);
    const result = await ask({ dataset_ids: [ds, other], document_ids: [doc.id], similarity_threshold: 0 });
    assert.deepEqual(result.chunks.map((c) => c.id), ['d1-chunk']);
    assert.deepEqual(index.searches[0]!.filter.documentIds, [doc.id]);
    assert.deepEqual(index.searches[0]!.filter.datasetIds, [ds], 'the other dataset is not searched');
    assert.deepEqual(models.embeddedWith, [{ tenant: owner.tenantId, model: 'a@Builtin' }]);
  });

  it('metadata_condition keeps the documents whose meta_fields match; when none match nothing is searched', async () => {
    const y2020 = await storedDocument(store, { id: ds, tenant_id: owner.tenantId }, { meta_fields: JSON.stringify({ year: 2020, author: 'Ann' }) });
    const y2024 = await storedDocument(store, { id: ds, tenant_id: owner.tenantId }, { meta_fields: JSON.stringify({ year: 2024, author: 'Bo' }) });
    index.add('old', ds, y2020.id, 'pass closes', [1, 0]);
    index.add('new', ds, y2024.id, 'pass closes', [1, 0]);
    const recent = await ask({ similarity_threshold: 0, metadata_condition: { logic: 'and', conditions: [{ name: 'year', comparison_operator: '>', value: '2021' }] } });
    assert.deepEqual(recent.chunks.map((c) => c.id), ['new']);
    index.searches = [];
    const none = await ask({ metadata_condition: { conditions: [{ name: 'author', comparison_operator: '=', value: 'Cy' }] } });
    assert.deepEqual([none.total, none.chunks, index.searches], [0, [], []]);
  });

  it("a rerank model's score takes the cosine's place, asked of the caller's rerank model", async () => {
    index.chunks = [];
    index.add('low', ds, 'd1', 'pass closes score:0.1', [1, 0]);
    index.add('high', ds, 'd2', 'pass closes score:0.9', [0, 1]);
    const result = await ask({ rerank_id: 'rr@local@OpenAI-API-Compatible', vector_similarity_weight: 1, similarity_threshold: 0 });
    assert.deepEqual(result.chunks.map((c) => [c.id, c.vector_similarity]), [['high', 0.9], ['low', 0.1]]);
    assert.deepEqual(models.reranked, [{ tenant: owner.tenantId, model: 'rr@local@OpenAI-API-Compatible' }]);
  });

  it("a dataset's pagerank puts its chunks first, while the reported similarity stays unboosted", async () => {
    const boosted = ((await datasets.create(owner, { name: 'boosted' })) as { id: string }).id;
    await datasets.update(owner, boosted, { pagerank: 50 });
    index.add('weak', boosted, 'd9', 'closes', [0, 1]);
    const result = await ask({ dataset_ids: [ds, boosted], similarity_threshold: 0.1 });
    assert.equal(result.chunks[0]!.id, 'weak');
    close(result.chunks[0]!.similarity, 0.7 * TERM_HALF, 'weak');
  });

  it('highlight wraps the words of the question in <em>', async () => {
    const [top] = (await ask({ highlight: true, vector_similarity_weight: 0 })).chunks;
    assert.equal(top!.highlight, 'the <em>pass</em> <em>closes</em> early');
  });

  it("a workspace member retrieves from the owner's team dataset with the owner's model; a private one is 403, a stranger's 404", async () => {
    const member: Principal = { ...tenantPrincipal('c'.repeat(32)), teamTenants: [owner.tenantId] };
    await datasets.update(owner, ds, { permission: 'team' });
    assert.equal((await ask({ similarity_threshold: 0 }, member)).total, 3);
    assert.deepEqual(models.embeddedWith.at(-1), { tenant: owner.tenantId, model: 'a@Builtin' });
    await datasets.update(owner, ds, { permission: 'me' });
    await refused(ask({}, member), 403, /private to its owner/);
    await refused(ask({}, tenantPrincipal('b'.repeat(32))), 404, /not found/);
  });

  it('an embedding failure fails the retrieval with its error', async () => {
    models.failEmbedding = new Error('embedding server down');
    await assert.rejects(ask(), /embedding server down/);
  });

  it('an empty question finds nothing and searches nothing', async () => {
    assert.deepEqual((await ask({ question: '   ' })).chunks, []);
    assert.deepEqual(index.searches, []);
  });
});

describe("Dify's retrieval request: what is required, the bounds, Dify's operator names", () => {
  const malformed = (body: Record<string, unknown>, what: string) =>
    assert.throws(() => parseDifyRequest(body), (err: { status: number; message: string }) => err.status === 400 && err.message === `invalid or malformed arguments: ${what}; `);

  it('knowledge_id and query are required, and named when missing', () => {
    assert.throws(() => parseDifyRequest({}), (err: { status: number; message: string }) => err.status === 400 && err.message === 'required arguments are missing: knowledge_id,query; ');
    assert.throws(() => parseDifyRequest({ knowledge_id: '', query: 'q' }), /required arguments are missing: knowledge_id/);
    malformed({ knowledge_id: 3, query: 'q' }, 'knowledge_id');
  });

  it(`top_k is an integer 1..${MAX_TOP_K} (1024 when absent), score_threshold 0..1 (0 when absent); numbers may come as strings`, () => {
    assert.deepEqual(parseDifyRequest({ knowledge_id: 'k', query: 'q' }), { knowledge_id: 'k', query: 'q', top_k: 1024, score_threshold: 0, metadata_condition: undefined, use_kg: false });
    assert.equal(parseDifyRequest({ knowledge_id: 'k', query: 'q', retrieval_setting: '{"top_k": "7", "score_threshold": "0.5"}' }).top_k, 7);
    malformed({ knowledge_id: 'k', query: 'q', retrieval_setting: { top_k: 0 } }, 'retrieval_setting.top_k');
    malformed({ knowledge_id: 'k', query: 'q', retrieval_setting: { top_k: MAX_TOP_K + 1 } }, 'retrieval_setting.top_k');
    malformed({ knowledge_id: 'k', query: 'q', retrieval_setting: { top_k: 2.5 } }, 'retrieval_setting.top_k');
    malformed({ knowledge_id: 'k', query: 'q', retrieval_setting: { score_threshold: 1.5 } }, 'retrieval_setting.score_threshold');
    malformed({ knowledge_id: 'k', query: 'q', retrieval_setting: '{not json' }, 'retrieval_setting');
  });

  it("maps Dify's comparison names onto ours, one condition per name, and refuses an unknown operator naming its place", () => {
    const parsed = parseDifyRequest({
      knowledge_id: 'k', query: 'q',
      metadata_condition: { logical_operator: 'or', conditions: [{ name: ['author', 'editor'], comparison_operator: 'is', value: 'Ann' }, { name: 'year', comparison_operator: 'before', value: '2020' }] },
    });
    assert.deepEqual(parsed.metadata_condition, {
      logic: 'or',
      conditions: [{ name: 'author', comparison_operator: '=', value: 'Ann' }, { name: 'editor', comparison_operator: '=', value: 'Ann' }, { name: 'year', comparison_operator: '<', value: '2020' }],
    });
    malformed({ knowledge_id: 'k', query: 'q', metadata_condition: { conditions: [{ name: 'a', comparison_operator: 'like' }] } }, 'metadata_condition.conditions[0].comparison_operator');
    malformed({ knowledge_id: 'k', query: 'q', metadata_condition: { logical_operator: 'xor', conditions: [] } }, 'metadata_condition.logical_operator');
  });
});
