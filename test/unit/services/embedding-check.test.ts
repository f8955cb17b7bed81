import assert from 'node:assert/strict';
import { EmbeddingCheckService, type EmbeddingCheckPorts } from '../../../src/services/embedding-check.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import type { IndexedChunk } from '../../../src/index/chunks/chunk-index.js';
import type { DocumentRow } from '../../../src/store/documents.js';
import type { DatasetRow } from '../../../src/store/datasets.js';
import type { EmbeddingModel } from '../../../src/models/types.js';
import { ApiError } from '../../../src/errors.js';

const unit = (v: number[]) => v.map((x) => x / Math.hypot(...v));

function chunk(id: string, content: string, vector: number[], extra: Partial<IndexedChunk> = {}): IndexedChunk {
  return { id, document_id: 'doc1', document_name: 'a.txt', content, vector, questions: [], available: true, ...extra } as IndexedChunk;
}

/** A model whose vector of a text is given by `vectorOf`; records what it embedded. */
function model(vectorOf: (text: string) => number[]): EmbeddingModel & { embedded: string[] } {
  const embedded: string[] = [];
  return { id: 'm@X', embedded, embed: async (texts) => (embedded.push(...texts), texts.map(vectorOf)) };
}

function ports(chunks: IndexedChunk[], embedder: EmbeddingModel): EmbeddingCheckPorts {
  return {
    datasets: { get: async (_p, id) => ({ id, tenant_id: 't1' }) as DatasetRow },
    documents: { listByDataset: async () => [{ id: 'doc1', chunk_count: chunks.length } as DocumentRow, { id: 'doc2', chunk_count: 0 } as DocumentRow] },
    index: {
      list: async (documentId) => ({ total: chunks.length, chunks: documentId === 'doc1' ? chunks : [] }),
      getMany: async (ids) => ids.map((id) => chunks.find((c) => c.id === id)!),
    },
    models: { checkEmbeddingModel: async (_t, id) => id },
    embedder: async () => embedder,
    random: () => 0,
  };
}

describe('embedding check (a candidate model against the stored vectors)', () => {
  it('compares at most check_num available chunks, as the ingest embedded them (questions first), title mix counted', async () => {
    const stored = [chunk('c1', 'alpha', unit([1, 0, 0])), chunk('c2', 'beta', unit([0, 1, 0]), { questions: ['why beta?'] }), chunk('c3', 'gamma', unit([0, 0, 1]), { available: false })];
    const same = model((t) => (t === 'alpha' ? [1, 0, 0] : t === 'why beta?' ? [0, 1, 0] : [0, 0, 1]));
    const data = await new EmbeddingCheckService(ports(stored, same)).check(tenantPrincipal('t1'), 'ds1', { embd_id: 'm@X', check_num: 5 });
    assert.deepEqual(data.results.map((r) => r.chunk_id).sort(), ['c1', 'c2'], 'a disabled chunk is not sampled');
    assert.equal(data.summary.valid, 2);
    assert.equal(data.summary.avg_cos_sim, 1);
    assert.ok(same.embedded.includes('why beta?') && !same.embedded.includes('beta'), 'a chunk with questions is embedded by its questions');
    const one = await new EmbeddingCheckService(ports(stored, same)).check(tenantPrincipal('t1'), 'ds1', { embd_id: 'm@X', check_num: 1 });
    assert.equal(one.summary.sampled, 1);
  });

  it('a chunk without text or without a stored vector is listed with the reason and not counted', async () => {
    const stored = [chunk('c1', 'alpha', unit([1, 0])), chunk('c2', '<table><tr></tr></table>', unit([0, 1])), chunk('c3', 'gamma', [])];
    const data = await new EmbeddingCheckService(ports(stored, model(() => [1, 0]))).check(tenantPrincipal('t1'), 'ds1', { embd_id: 'm@X' });
    assert.deepEqual(
      data.results.filter((r) => r.reason).map((r) => [r.chunk_id, r.reason]).sort(),
      [['c2', 'no_text'], ['c3', 'no_stored_vector']],
    );
    assert.equal(data.summary.valid, 1);
  });

  it('below an average cosine of 0.9 is a 400 with the figures; another dimension is a 400 naming both', async () => {
    const stored = [chunk('c1', 'alpha', unit([1, 0, 0]))];
    await assert.rejects(new EmbeddingCheckService(ports(stored, model(() => [0, 1, 0]))).check(tenantPrincipal('t1'), 'ds1', { embd_id: 'm@X' }), (err: unknown) => {
      assert.ok(err instanceof ApiError && err.status === 400);
      assert.match(err.message, /below 0\.9/);
      assert.equal((err.data as { summary: { avg_cos_sim: number } }).summary.avg_cos_sim, 0, 'orthogonal to the stored vector');
      return true;
    });
    await assert.rejects(new EmbeddingCheckService(ports(stored, model(() => [1, 0]))).check(tenantPrincipal('t1'), 'ds1', { embd_id: 'm@X' }), /dimension \(2\) of given embedding model is different from the original \(3\)/);
  });
});
