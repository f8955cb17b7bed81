import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openIndexDatabase } from '../../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../../src/index/sqlite-index.js';
import { ChunkNotFoundError } from '../../../src/index/types.js';
import { chunk, memoryIndex } from './helpers.js';

const ids = (hits: { id: string }[]) => hits.map((h) => h.id);
const sorted = (values: string[]) => [...values].sort();

describe('SqliteChunkIndex', () => {
  describe('schema', () => {
    it('refuses a connection without sqlite-vec', () => {
      assert.throws(() => new SqliteChunkIndex(new Database(':memory:')), /sqlite-vec/);
    });

    it('can be constructed twice on the same database (idempotent schema) and keeps the data', async () => {
      const { db, index } = memoryIndex();
      await index.upsert([chunk({ id: 'a', content: 'alpha' })]);
      const again = new SqliteChunkIndex(db);
      assert.equal((await again.get('a'))?.content, 'alpha');
      const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'chunk_%'`).all();
      assert.deepEqual(tables, [], 'every table is prefixed chunk_');
    });

    it('answers ping', async () => {
      await memoryIndex().index.ping();
    });
  });

  describe('upsert / get', () => {
    it('round-trips every field', async () => {
      const { index } = memoryIndex();
      const original = chunk({
        id: 'c1', tenant_id: 't9', dataset_id: 'dsX', document_id: 'docY', document_name: 'Report.pdf',
        content: 'Body text', important_keywords: ['k1', 'k2'], questions: ['What?'], tag_kwd: ['tag'],
        image_id: 'img-1', positions: [[2, 10, 20, 30, 40]], available: false, create_time: '2025-02-03 04:05:06',
        create_timestamp: 1738555506.25, parent_content: 'The parent', vector: [0.5, -0.25, 1, 0],
      });
      await index.upsert([original]);
      assert.deepEqual(await index.get('c1'), original);
      assert.equal(await index.get('missing'), undefined);
    });

    it('is idempotent: re-upserting the same ids replaces, never duplicates', async () => {
      const { index } = memoryIndex();
      const batch = [chunk({ id: 'a', content: 'red apple', vector: [1, 0] }), chunk({ id: 'b', content: 'green pear', vector: [0, 1] })];
      await index.upsert(batch);
      await index.upsert(batch);
      await index.upsert([chunk({ id: 'a', content: 'yellow banana', vector: [1, 0] })]);
      assert.equal(await index.countByDocument('doc1'), 2);
      const filter = { datasetIds: ['ds1'] };
      assert.deepEqual(ids(await index.fullText('apple', filter, 10)), [], 'old text is gone from full text');
      assert.deepEqual(ids(await index.fullText('banana', filter, 10)), ['a']);
      assert.deepEqual(ids(await index.vectorSearch([1, 0], filter, 10)), ['a', 'b'], 'one vector per chunk');
    });

    it('keeps the last version when a batch repeats an id', async () => {
      const { index } = memoryIndex();
      await index.upsert([chunk({ id: 'a', content: 'first' }), chunk({ id: 'a', content: 'second' })]);
      assert.equal((await index.get('a'))?.content, 'second');
      assert.equal(await index.countByDocument('doc1'), 1);
    });

    it('getMany returns found chunks in the order asked', async () => {
      const { index } = memoryIndex();
      await index.upsert([chunk({ id: 'a' }), chunk({ id: 'b' }), chunk({ id: 'c' })]);
      assert.deepEqual(ids(await index.getMany(['c', 'x', 'a'])), ['c', 'a']);
      assert.deepEqual(await index.getMany([]), []);
    });
  });

  describe('update', () => {
    it('patches fields and re-indexes text, vector and availability', async () => {
      const { index } = memoryIndex();
      await index.upsert([chunk({ id: 'a', content: 'old words', vector: [1, 0] })]);
      await index.update('a', { content: 'new words', vector: [0, 1], important_keywords: ['kw'], available: false });
      const updated = await index.get('a');
      assert.equal(updated?.content, 'new words');
      assert.deepEqual(updated?.vector, [0, 1]);
      assert.equal(updated?.available, false);
      assert.equal(updated?.dataset_id, 'ds1');
      const all = { datasetIds: ['ds1'] };
      const availableOnly = { datasetIds: ['ds1'], availableOnly: true };
      assert.deepEqual(ids(await index.fullText('old', all, 10)), []);
      assert.deepEqual(ids(await index.fullText('new', all, 10)), ['a']);
      assert.deepEqual(ids(await index.fullText('new', availableOnly, 10)), []);
      assert.deepEqual(ids(await index.vectorSearch([0, 1], availableOnly, 10)), []);
      await index.update('a', { available: true });
      assert.deepEqual(ids(await index.fullText('kw', availableOnly, 10)), ['a']);
      assert.deepEqual(ids(await index.vectorSearch([0, 1], availableOnly, 10)), ['a']);
    });

    it('ignores undefined patch values', async () => {
      const { index } = memoryIndex();
      await index.upsert([chunk({ id: 'a', content: 'kept' })]);
      await index.update('a', { content: undefined, tag_kwd: ['t'] });
      assert.equal((await index.get('a'))?.content, 'kept');
    });

    it('throws ChunkNotFoundError for an unknown id', async () => {
      await assert.rejects(memoryIndex().index.update('nope', { content: 'x' }), ChunkNotFoundError);
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

    it('deletes chunks by id and reports how many existed', async () => {
      const { index } = await populated();
      assert.equal(await index.deleteChunks(['a', 'zzz', 'a']), 1);
      assert.deepEqual(sorted(ids(await index.fullText('shared', everywhere, 10))), ['b', 'c', 'd']);
      assert.equal(await index.deleteChunks([]), 0);
    });

    it('deletes by document', async () => {
      const { index } = await populated();
      assert.equal(await index.deleteByDocument('d1'), 2);
      assert.equal(await index.deleteByDocument('d1'), 0);
      assert.equal(await index.countByDocument('d1'), 0);
      assert.deepEqual(sorted(ids(await index.vectorSearch([1, 0], everywhere, 10))), ['c', 'd']);
    });

    it('deletes by dataset and leaves no derived rows behind', async () => {
      const { db, index } = await populated();
      assert.equal(await index.deleteByDataset('ds1'), 3);
      assert.deepEqual(ids(await index.fullText('shared', everywhere, 10)), ['d']);
      assert.deepEqual(ids(await index.vectorSearch([1, 0], everywhere, 10)), ['d']);
      const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      assert.deepEqual([count('chunk_rows'), count('chunk_keys'), count('chunk_vectors')], [1, 1, 1]);
    });
  });

  describe('list', () => {
    it('lists a document in reading order with paging, keyword and id filters', async () => {
      const { index } = memoryIndex();
      await index.upsert([
        chunk({ id: 'p2', content: 'Second page ALPHA', positions: [[2, 0, 0, 5, 9]] }),
        chunk({ id: 'p1b', content: 'first page, lower', positions: [[1, 0, 0, 50, 60]] }),
        chunk({ id: 'p1a', content: 'First page, upper alpha', positions: [[1, 0, 0, 10, 20]] }),
        chunk({ id: 'other', document_id: 'doc2', content: 'alpha elsewhere' }),
      ]);
      const all = await index.list('doc1', { page: 1, pageSize: 10 });
      assert.equal(all.total, 3);
      assert.deepEqual(ids(all.chunks), ['p1a', 'p1b', 'p2']);
      const page2 = await index.list('doc1', { page: 2, pageSize: 2 });
      assert.deepEqual([page2.total, ids(page2.chunks)], [3, ['p2']]);
      const alpha = await index.list('doc1', { keywords: 'Alpha', page: 1, pageSize: 10 });
      assert.deepEqual([alpha.total, ids(alpha.chunks)], [2, ['p1a', 'p2']]);
      const one = await index.list('doc1', { id: 'p1b', page: 1, pageSize: 10 });
      assert.deepEqual([one.total, ids(one.chunks)], [1, ['p1b']]);
      const foreign = await index.list('doc1', { id: 'other', page: 1, pageSize: 10 });
      assert.equal(foreign.total, 0);
    });

    it('matches keywords case-insensitively beyond ASCII', async () => {
      const { index } = memoryIndex();
      await index.upsert([chunk({ id: 'a', content: 'ÉCOLE Supérieure' })]);
      assert.equal((await index.list('doc1', { keywords: 'école', page: 1, pageSize: 5 })).total, 1);
    });
  });

  describe('fullText', () => {
    it('ranks with bm25, weighting keywords and questions above content', async () => {
      const { index } = memoryIndex();
      await index.upsert([
        chunk({ id: 'content', content: 'a note that mentions turbines once among other things' }),
        chunk({ id: 'keyword', content: 'a note about other things entirely', important_keywords: ['turbines'] }),
        chunk({ id: 'question', content: 'another note about things', questions: ['How do turbines work?'] }),
        chunk({ id: 'none', content: 'nothing relevant here' }),
      ]);
      const hits = await index.fullText('Turbines', { datasetIds: ['ds1'] }, 10);
      assert.deepEqual(ids(hits), ['keyword', 'question', 'content']);
      assert.ok(hits.every((h) => Number.isFinite(h.score) && h.score > 0));
      assert.ok(hits[0]!.score > hits[1]!.score && hits[1]!.score > hits[2]!.score);
    });

    it('searches the document name and stems words (porter)', async () => {
      const { index } = memoryIndex();
      await index.upsert([chunk({ id: 'a', document_name: 'Quarterly Reports.pdf', content: 'The runners were running.' })]);
      const f = { datasetIds: ['ds1'] };
      assert.deepEqual(ids(await index.fullText('report', f, 10)), ['a']);
      assert.deepEqual(ids(await index.fullText('run', f, 10)), ['a']);
    });

    it('filters by dataset, document and availability, and honours the limit', async () => {
      const { index } = memoryIndex();
      await index.upsert([
        chunk({ id: 'a', dataset_id: 'ds1', document_id: 'd1', content: 'graphite' }),
        chunk({ id: 'b', dataset_id: 'ds1', document_id: 'd2', content: 'graphite graphite' }),
        chunk({ id: 'c', dataset_id: 'ds2', document_id: 'd3', content: 'graphite' }),
        chunk({ id: 'd', dataset_id: 'ds1', document_id: 'd1', content: 'graphite', available: false }),
      ]);
      assert.deepEqual(sorted(ids(await index.fullText('graphite', { datasetIds: ['ds1'] }, 10))), ['a', 'b', 'd']);
      assert.deepEqual(sorted(ids(await index.fullText('graphite', { datasetIds: ['ds1'], availableOnly: true }, 10))), ['a', 'b']);
      assert.deepEqual(sorted(ids(await index.fullText('graphite', { datasetIds: ['ds1', 'ds2'], documentIds: ['d1', 'd3'] }, 10))), ['a', 'c', 'd']);
      assert.equal((await index.fullText('graphite', { datasetIds: ['ds1', 'ds2'] }, 2)).length, 2);
      assert.deepEqual(await index.fullText('graphite', { datasetIds: [] }, 10), []);
    });

    it('returns nothing for a question made only of stopwords or punctuation', async () => {
      const { index } = memoryIndex();
      await index.upsert([chunk({ id: 'a', content: 'the and of' })]);
      assert.deepEqual(await index.fullText('the of and', { datasetIds: ['ds1'] }, 10), []);
      assert.deepEqual(await index.fullText('"*:()^', { datasetIds: ['ds1'] }, 10), []);
    });

    it('treats FTS5 syntax in the question as plain words', async () => {
      const { index } = memoryIndex();
      await index.upsert([chunk({ id: 'a', content: 'near or not' })]);
      assert.deepEqual(ids(await index.fullText('NEAR("x" OR NOT) title:*', { datasetIds: ['ds1'] }, 10)), ['a']);
    });

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
    it('returns cosine similarities, best first', async () => {
      const { index } = memoryIndex();
      await index.upsert([
        chunk({ id: 'same', vector: [1, 0, 0, 0, 0] }),
        chunk({ id: 'three-quarters', vector: [3, 2, 1, 1, 1] }),
        chunk({ id: 'half', vector: [1, 1, 1, 1, 0] }),
        chunk({ id: 'orthogonal', vector: [0, 1, 0, 0, 0] }),
        chunk({ id: 'opposite', vector: [-1, 0, 0, 0, 0] }),
        chunk({ id: 'no-vector' }),
      ]);
      const hits = await index.vectorSearch([1, 0, 0, 0, 0], { datasetIds: ['ds1'] }, 10);
      assert.deepEqual(hits.map((h) => [h.id, h.score]), [
        ['same', 1], ['three-quarters', 0.75], ['half', 0.5], ['orthogonal', 0], ['opposite', -1],
      ]);
      assert.deepEqual(ids(await index.vectorSearch([1, 0, 0, 0, 0], { datasetIds: ['ds1'] }, 2)), ['same', 'three-quarters']);
    });

    it('keeps datasets with different dimensions apart', async () => {
      const { index } = memoryIndex();
      await index.upsert([
        chunk({ id: 'small', dataset_id: 'mini', vector: [1, 0, 0] }),
        chunk({ id: 'large', dataset_id: 'big', vector: [1, 0, 0, 0, 0, 0, 0, 0, 0, 0] }),
      ]);
      const both = { datasetIds: ['mini', 'big'] };
      assert.deepEqual((await index.vectorSearch([0, 1, 0], both, 10)).map((h) => [h.id, h.score]), [['small', 0]]);
      assert.deepEqual(ids(await index.vectorSearch([1, 0, 0, 0, 0, 0, 0, 0, 0, 0], both, 10)), ['large']);
      assert.deepEqual([...await index.cosineSimilarities(['small', 'large'], [1, 0, 0])], [['small', 1]]);
    });

    it('filters by dataset, document and availability', async () => {
      const { index } = memoryIndex();
      await index.upsert([
        chunk({ id: 'a', dataset_id: 'ds1', document_id: 'd1', vector: [1, 0] }),
        chunk({ id: 'b', dataset_id: 'ds1', document_id: 'd2', vector: [1, 0] }),
        chunk({ id: 'c', dataset_id: 'ds2', document_id: 'd3', vector: [1, 0] }),
        chunk({ id: 'd', dataset_id: 'ds1', document_id: 'd1', vector: [1, 0], available: false }),
      ]);
      const q = [1, 0];
      assert.deepEqual(sorted(ids(await index.vectorSearch(q, { datasetIds: ['ds1'] }, 10))), ['a', 'b', 'd']);
      assert.deepEqual(sorted(ids(await index.vectorSearch(q, { datasetIds: ['ds1'], availableOnly: true }, 10))), ['a', 'b']);
      assert.deepEqual(sorted(ids(await index.vectorSearch(q, { datasetIds: ['ds1', 'ds2'], documentIds: ['d1', 'd3'] }, 10))), ['a', 'c', 'd']);
      assert.deepEqual(await index.vectorSearch([], { datasetIds: ['ds1'] }, 10), []);
    });

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
        assert.equal((await reader.termStats(['alpha'])).chunkFrequency.get('alpha'), 1);
        await writer.upsert([chunk({ id: 'b', content: 'alpha', vector: [1, 0.5] })]);
        assert.deepEqual(ids(await reader.vectorSearch([1, 0], f, 5)), ['a', 'b']);
        assert.deepEqual(await reader.termStats(['alpha']), { chunkCount: 2, chunkFrequency: new Map([['alpha', 2]]) });
        await writer.update('a', { available: false });
        assert.deepEqual(ids(await reader.vectorSearch([1, 0], f, 5)), ['b']);
        await writer.deleteChunks(['b']);
        assert.deepEqual(ids(await reader.vectorSearch([1, 0], f, 5)), []);
        assert.deepEqual(ids(await reader.fullText('alpha', { datasetIds: ['ds1'] }, 5)), ['a']);
        assert.equal((await reader.termStats([])).chunkCount, 1);
      } finally {
        dbA.close();
        dbB.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('termStats, hit features, cosines', () => {
    it('counts chunks per stem over every indexed field', async () => {
      const { index } = memoryIndex();
      await index.upsert([
        chunk({ id: 'a', content: 'Running fast' }),
        chunk({ id: 'b', content: 'nothing', important_keywords: ['runs'] }),
        chunk({ id: 'c', content: 'nothing', document_name: 'run.txt' }),
        chunk({ id: 'd', content: 'walk' }),
      ]);
      const stats = await index.termStats(['run', 'walk', 'absent']);
      assert.equal(stats.chunkCount, 4);
      assert.deepEqual([...stats.chunkFrequency].sort(), [['run', 3], ['walk', 1]]);
      await index.deleteChunks(['d']);
      const after = await index.termStats(['walk']);
      assert.equal(after.chunkCount, 3);
      assert.equal(after.chunkFrequency.get('walk') ?? 0, 0);
    });

    it('hits carry dataset, document and the terms of content, keywords, questions and document name', async () => {
      const { index } = memoryIndex();
      await index.upsert([chunk({
        id: 'a', document_name: 'Budget.xlsx', content: 'Revenue grew', important_keywords: ['forecast'],
        questions: ['Which costs rose?'], vector: [1, 1, 1, 1, 0],
      })]);
      const [text] = await index.fullText('revenue', { datasetIds: ['ds1'] }, 5);
      const [vector] = await index.vectorSearch([1, 0, 0, 0, 0], { datasetIds: ['ds1'] }, 5);
      for (const hit of [text, vector]) {
        assert.ok(hit);
        assert.deepEqual([hit.id, hit.dataset_id, hit.document_id, hit.document_name], ['a', 'ds1', 'doc1', 'Budget.xlsx']);
        for (const stem of ['budget', 'xlsx', 'revenu', 'grew', 'forecast', 'cost', 'rose']) assert.ok(hit.hasTerm(stem), stem);
        for (const stem of ['which', 'grow', 'revenue', 'bud']) assert.ok(!hit.hasTerm(stem), stem);
      }
      assert.equal(vector?.score, 0.5);
    });

    it('gives cosines of the chunks that have a vector of the dimension asked', async () => {
      const { index } = memoryIndex();
      await index.upsert([
        chunk({ id: 'a', vector: [1, 1, 1, 1, 0] }),
        chunk({ id: 'b', vector: [-1, 0, 0, 0, 0] }),
        chunk({ id: 'c' }),
        chunk({ id: 'd', vector: [1, 0] }),
        chunk({ id: 'z', vector: [0, 0, 0, 0, 0] }),
      ]);
      const cosines = await index.cosineSimilarities(['a', 'b', 'c', 'd', 'z', 'missing', 'a'], [1, 0, 0, 0, 0]);
      assert.deepEqual([...cosines].sort(), [['a', 0.5], ['b', -1]], 'zero vectors have no cosine (not NaN)');
      assert.deepEqual(await index.cosineSimilarities(['a'], []), new Map());
      assert.deepEqual(await index.vectorSearch([1, 0, 0, 0, 0], { datasetIds: ['ds1'] }, 5).then((h) => h.map((x) => x.id)), ['a', 'b']);
    });
  });
});
