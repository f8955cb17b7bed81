import assert from 'node:assert/strict';
import type { SqliteChunkIndex } from '../../../../src/index/chunks/sqlite-index.js';
import type { Candidate, ChunkFilter } from '../../../../src/index/chunks/chunk-index.js';
import { chunk, memoryIndex } from '../helpers.js';

/**
 * When the searched datasets hold most of the corpus, full text ranks without the filter and filters the
 * winners; vector search filters its exact-stage winners the same way. These tests check that both give
 * what the filtered query gives, however many of the best chunks the filter rejects.
 */
const scored = (hits: Candidate[]) => hits.map((h) => [h.id, h.score, h.dataset_id, h.document_id, h.document_name]);

/** Full text through the joined query: a document filter (here: every document) always takes it. */
async function filteredInSql(index: SqliteChunkIndex, query: string, filter: ChunkFilter, limit: number, documents: string[]) {
  return index.fullText(query, { ...filter, documentIds: documents }, limit);
}

describe('SqliteChunkIndex: filtering the best hits of the whole corpus', () => {
  it('full text returns the best in-scope chunks when the best of the corpus are in another dataset', async () => {
    const { index } = memoryIndex();
    await index.upsert([
      ...Array.from({ length: 30 }, (_, i) => chunk({ id: `a${i}`, dataset_id: 'ds1', document_id: `d${i % 3}`, content: `graphite ${'filler '.repeat(i)}` })),
      ...Array.from({ length: 10 }, (_, i) => chunk({ id: `b${i}`, dataset_id: 'ds2', document_id: 'other', content: 'graphite graphite graphite' })),
    ]);
    const filter = { datasetIds: ['ds1'], availableOnly: true };
    const hits = await index.fullText('graphite', filter, 5);
    assert.deepEqual(hits.map((h) => h.id), ['a0', 'a1', 'a2', 'a3', 'a4']);
    assert.deepEqual(scored(hits), scored(await filteredInSql(index, 'graphite', filter, 5, ['d0', 'd1', 'd2'])));
  });

  it('full text skips unavailable chunks among the best, still filling the limit', async () => {
    const { index } = memoryIndex();
    await index.upsert(Array.from({ length: 200 }, (_, i) => chunk({
      id: `c${String(i).padStart(3, '0')}`, document_id: `d${i % 4}`, content: `graphite ${'filler '.repeat(i % 50)}`, available: i >= 120,
    })));
    const filter = { datasetIds: ['ds1'], availableOnly: true };
    for (const limit of [1, 10, 70, 100]) {
      const hits = await index.fullText('graphite', filter, limit);
      assert.equal(hits.length, Math.min(limit, 80), `limit ${limit}`);
      assert.ok(hits.every((h) => Number(h.id.slice(1)) >= 120));
      assert.deepEqual(scored(hits), scored(await filteredInSql(index, 'graphite', filter, limit, ['d0', 'd1', 'd2', 'd3'])), `limit ${limit}`);
    }
  });

  it('full text follows writes that change how much of the corpus a dataset holds', async () => {
    const { index } = memoryIndex();
    await index.upsert(Array.from({ length: 10 }, (_, i) => chunk({ id: `a${i}`, dataset_id: 'ds1', content: `graphite ${'filler '.repeat(i)}` })));
    const filter = { datasetIds: ['ds1'] };
    assert.equal((await index.fullText('graphite', filter, 3)).length, 3);
    await index.upsert(Array.from({ length: 100 }, (_, i) => chunk({ id: `b${i}`, dataset_id: 'ds2', document_id: 'other', content: 'graphite graphite' })));
    assert.deepEqual((await index.fullText('graphite', filter, 3)).map((h) => h.id), ['a0', 'a1', 'a2']);
    await index.deleteByDataset('ds2');
    await index.update('a0', { available: false });
    assert.deepEqual((await index.fullText('graphite', { ...filter, availableOnly: true }, 3)).map((h) => h.id), ['a1', 'a2', 'a3']);
    await index.renameDocument('doc1', 'renamed.txt');
    assert.deepEqual([...new Set((await index.fullText('graphite', filter, 3)).map((h) => h.document_name))], ['renamed.txt']);
  });

  it('vector search keeps the limit and exact scores when the filter rejects most of the nearest chunks', async () => {
    const { index } = memoryIndex();
    await index.upsert(Array.from({ length: 100 }, (_, i) => chunk({
      id: `v${String(i).padStart(2, '0')}`, document_id: `d${i % 2}`, vector: [1, i / 100, 0], available: i % 5 === 0,
    })));
    const hits = await index.vectorSearch([1, 0, 0], { datasetIds: ['ds1'], availableOnly: true, documentIds: ['d0'] }, 5);
    assert.deepEqual(hits.map((h) => h.id), ['v00', 'v10', 'v20', 'v30', 'v40']);
    for (const h of hits) {
      const y = Number(h.id.slice(1)) / 100;
      assert.ok(Math.abs(h.score - 1 / Math.hypot(1, y)) < 1e-6, h.id);
      assert.deepEqual([h.dataset_id, h.document_id, h.document_name], ['ds1', 'd0', 'doc1.txt']);
    }
  });
});
