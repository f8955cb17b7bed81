import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openIndexDatabase } from '../../../../src/index/sqlite-database.js';
import { REMOVE_SLICE, SqliteChunkIndex, WRITE_SLICE } from '../../../../src/index/chunks/sqlite-index.js';
import { chunkIndexConformance } from './chunk-index-conformance.js';
import { chunk, fts5SegmentsWritten, memoryIndex } from '../helpers.js';
import { turnsDuring } from '../../../support/event-loop.js';

const ids = (hits: { id: string }[]) => hits.map((h) => h.id);

chunkIndexConformance('SqliteChunkIndex', async () => memoryIndex().index);
// The same contract with exact cosines from the in-memory vector copies (built at the first search after each write).
chunkIndexConformance('SqliteChunkIndex (vectors in memory)', async () =>
  new SqliteChunkIndex(openIndexDatabase(':memory:'), { vectorsQuietMs: 0, vectorsSchedule: (build) => build() }));

/** What the embedded index does beyond the port's contract (test/unit/index/chunks/chunk-index-conformance.ts). */
describe('SqliteChunkIndex', () => {
  describe('schema', () => {
    it('refuses a connection without sqlite-vec', () => {
      assert.throws(() => new SqliteChunkIndex(new Database(':memory:')), /sqlite-vec/);
    });

    it('close ends nothing of the connection it was given', async () => {
      const { db, index } = memoryIndex();
      await index.upsert([chunk({ id: 'a', content: 'alpha' })]);
      await index.close();
      assert.equal((await new SqliteChunkIndex(db).get('a'))?.content, 'alpha');
    });

    it('can be constructed twice on the same database (idempotent schema) and keeps the data', async () => {
      const { db, index } = memoryIndex();
      await index.upsert([chunk({ id: 'a', content: 'alpha' })]);
      const again = new SqliteChunkIndex(db);
      assert.equal((await again.get('a'))?.content, 'alpha');
      const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'chunk_%'`).all();
      assert.deepEqual(tables, [], 'every table is prefixed chunk_');
    });
  });

  describe('delete', () => {
    async function populated() {
      const { db, index } = memoryIndex();
      await index.upsert([
        chunk({ id: 'a', dataset_id: 'ds1', document_id: 'd1', content: 'shared word', vector: [1, 0] }),
        chunk({ id: 'b', dataset_id: 'ds1', document_id: 'd1', content: 'shared word', vector: [1, 0] }),
        chunk({ id: 'c', dataset_id: 'ds1', document_id: 'd2', content: 'shared word', vector: [1, 0] }),
        chunk({ id: 'd', dataset_id: 'ds2', document_id: 'd3', content: 'shared word', vector: [1, 0] }),
      ]);
      return { db, index };
    }
    const everywhere = { datasetIds: ['ds1', 'ds2'] };

    it('deletes by dataset and leaves no derived rows behind', async () => {
      const { db, index } = await populated();
      assert.equal(await index.deleteByDataset('ds1'), 3);
      assert.deepEqual(ids(await index.fullText('shared', everywhere, 10)), ['d']);
      assert.deepEqual(ids(await index.vectorSearch([1, 0], everywhere, 10)), ['d']);
      const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      assert.deepEqual([count('chunk_rows'), count('chunk_keys'), count('chunk_vectors')], [1, 1, 1]);
    });
  });

  describe('large writes', () => {
    const count = (db: Database.Database, table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    // Three slices of the larger kind: at least two turns of the event loop in every operation.
    const n = 2 * Math.max(WRITE_SLICE, REMOVE_SLICE) + 1;
    const document = (datasetId: string, documentId: string) => Array.from({ length: n }, (_, i) =>
      chunk({ id: `${documentId}-${i}`, dataset_id: datasetId, document_id: documentId, content: `word${i} common`, important_keywords: ['flange'], vector: [1, i] }));

    it('a large document is written, renamed and deleted in slices of chunks, the event loop turning between their transactions', async () => {
      const { db, index } = memoryIndex();
      const scope = { datasetIds: ['ds1'] };
      assert.ok(await turnsDuring(() => index.upsert(document('ds1', 'big'))) >= 2);
      assert.equal(await index.countByDocument('big'), n);
      assert.ok(await turnsDuring(async () => assert.equal(await index.renameDocument('big', 'renamed.txt'), n)) >= 2);
      assert.equal((await index.fullText('renamed', scope, 2 * n)).length, n);
      assert.equal((await index.fullText('flange', scope, 2 * n)).length, n);
      assert.ok((await index.getMany(['big-0', `big-${n - 1}`])).every((c) => c.document_name === 'renamed.txt'));
      assert.ok(await turnsDuring(async () => assert.equal(await index.deleteByDocument('big'), n)) >= 2);
      assert.deepEqual(['chunk_rows', 'chunk_keys', 'chunk_vectors'].map((t) => count(db, t)), [0, 0, 0]);
      assert.deepEqual(await index.fullText('common', scope, 10), []);
    });

    it('deletes by ids across datasets and a whole dataset in slices, leaving no derived rows behind', async () => {
      const { db, index } = memoryIndex();
      await index.upsert([...document('ds1', 'a'), ...document('ds2', 'b'), ...document('ds3', 'c')]);
      const someOfEach = [...document('ds1', 'a'), ...document('ds2', 'b')].filter((_, i) => i % 2 === 0).map((c) => c.id);
      assert.ok(await turnsDuring(async () => assert.equal(await index.deleteChunks(someOfEach), someOfEach.length)) >= 2);
      assert.equal(count(db, 'chunk_keys'), 3 * n - someOfEach.length);
      assert.ok(await turnsDuring(async () => assert.equal(await index.deleteByDataset('ds3'), n)) >= 2);
      assert.deepEqual(['chunk_rows', 'chunk_keys', 'chunk_vectors'].map((t) => count(db, t)), [2 * n - someOfEach.length, 2 * n - someOfEach.length, 2 * n - someOfEach.length]);
      assert.equal((await index.fullText('common', { datasetIds: ['ds1', 'ds2', 'ds3'] }, 3 * n)).length, 2 * n - someOfEach.length);
    });

    it('writes a slice\'s full text to FTS5 once, not once per chunk', async () => {
      const { db, index } = memoryIndex();
      await index.upsert(document('ds1', 'big').slice(0, WRITE_SLICE));
      await index.update('big-0', { content: 'word0 common rewritten' });
      const segmentsWritten = fts5SegmentsWritten(db, 'chunk_fts');
      // Written row by row, each chunk was a segment: 502 here.
      assert.ok(segmentsWritten <= 10, `${segmentsWritten} segments written for one slice and one update`);
      assert.equal((await index.fullText('rewritten', { datasetIds: ['ds1'] }, 10)).length, 1);
      assert.equal((await index.fullText('common', { datasetIds: ['ds1'] }, 2 * WRITE_SLICE)).length, WRITE_SLICE);
    });

    it('sets FTS5 to rewrite a segment once half its rows are deleted', () => {
      const { db } = memoryIndex();
      assert.equal(db.prepare(`SELECT v FROM chunk_fts_config WHERE k = 'deletemerge'`).pluck().get(), 50);
    });
  });

  describe('fullText', () => {
    it('keeps exact bm25 scores when common words become optional', async () => {
      const { db } = memoryIndex();
      const exact = new SqliteChunkIndex(db);
      const pruned = new SqliteChunkIndex(db, { matchRowBudget: 1 });
      await exact.upsert(Array.from({ length: 60 }, (_, i) => chunk({
        id: `c${i}`,
        content: `text ${'filler '.repeat(i % 7)}${i % 10 === 0 ? 'rare' : ''} ${i % 6 === 0 ? 'mid' : ''} ${i % 12 === 0 ? 'mid' : ''}`,
      })));
      const f = { datasetIds: ['ds1'] };
      const all = await exact.fullText('rare mid', f, 100);
      assert.equal(all.length, 14, 'with the default budget every word is required: 6 rare ∪ 10 mid');
      // Budget max(1, 4 × 1) = 4 < 6 chunks with "rare": "mid" (10 chunks ≤ 3 × 4) becomes optional.
      const few = await pruned.fullText('rare mid', f, 1);
      const exactScore = new Map(all.map((h) => [h.id, h.score]));
      for (const hit of few) assert.equal(hit.score, exactScore.get(hit.id), hit.id);
      assert.deepEqual(few.map((h) => h.score), all.slice(0, 1).map((h) => h.score));
      assert.equal((await pruned.fullText('rare mid', f, 2)).length, 2);
      assert.equal((await pruned.fullText('rare mid', f, 100)).length, 14, 'a large limit raises the budget');
    });
  });

  describe('vectorSearch', () => {
    it('two-stage search: exact when the preselection covers the scope, close when it does not', async () => {
      const { db } = memoryIndex();
      const exact = new SqliteChunkIndex(db, { vectorOversample: Infinity });
      const staged = new SqliteChunkIndex(db, { vectorOversample: 2 });
      let seed = 7;
      const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
      await exact.upsert(Array.from({ length: 300 }, (_, i) => chunk({ id: `v${i}`, vector: Array.from({ length: 16 }, random) })));
      const q = Array.from({ length: 16 }, random);
      const f = { datasetIds: ['ds1'] };
      const truth = await exact.vectorSearch(q, f, 300);
      assert.equal(truth.length, 300);
      // limit 200 → preselect 400 ≥ 300 rows: exact.
      const scored = (hits: { id: string; score: number }[]) => hits.map((h) => [h.id, h.score]);
      assert.deepEqual(scored(await staged.vectorSearch(q, f, 200)), scored(truth.slice(0, 200)));
      // limit 10 → preselect 256 of 300 by Hamming distance, then exact cosine.
      const top = await staged.vectorSearch(q, f, 10);
      const truthTop = new Set(ids(truth.slice(0, 10)));
      assert.ok(ids(top).filter((id) => truthTop.has(id)).length >= 9);
    });
  });

  describe('several connections (processes) on one database file', () => {
    it('each sees the others\' writes in vector and full-text search', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'cairn-index-'));
      const [dbA, dbB] = [openIndexDatabase(join(dir, 'cairn.db')), openIndexDatabase(join(dir, 'cairn.db'))];
      try {
        const [reader, writer] = [new SqliteChunkIndex(dbA), new SqliteChunkIndex(dbB)];
        const f = { datasetIds: ['ds1'], availableOnly: true };
        await writer.upsert([chunk({ id: 'a', content: 'alpha', vector: [1, 0] })]);
        assert.deepEqual(ids(await reader.vectorSearch([1, 0], f, 5)), ['a']);
        await writer.upsert([chunk({ id: 'b', content: 'alpha', vector: [1, 0.5] })]);
        assert.deepEqual(ids(await reader.vectorSearch([1, 0], f, 5)), ['a', 'b']);
        assert.deepEqual(ids(await reader.fullText('alpha', f, 5)).sort(), ['a', 'b']);
        await writer.update('a', { available: false });
        assert.deepEqual(ids(await reader.vectorSearch([1, 0], f, 5)), ['b']);
        await writer.deleteChunks(['b']);
        assert.deepEqual(ids(await reader.vectorSearch([1, 0], f, 5)), []);
        assert.deepEqual(ids(await reader.fullText('alpha', { datasetIds: ['ds1'] }, 5)), ['a']);
      } finally {
        dbA.close();
        dbB.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
