/**
 * The ChunkIndex port's contract, one suite for every implementation: `chunkIndexConformance(name, open)`
 * registers it for a factory that gives a new, empty index at each call. Scores are compared to six
 * decimals (Milvus computes cosines in float32) and BM25 scores only by order and sign (each engine has
 * its own BM25).
 */
import assert from 'node:assert/strict';
import { ChunkNotFoundError, type ChunkIndex } from '../../../../src/index/chunks/chunk-index.js';
import { chunk } from '../helpers.js';

const ids = (hits: { id: string }[]) => hits.map((h) => h.id);
const sorted = (values: string[]) => [...values].sort();
const rounded = (hits: { id: string; score: number }[]) => hits.map((h) => [h.id, Math.round(h.score * 1e6) / 1e6 + 0]);

export function chunkIndexConformance(name: string, open: () => Promise<ChunkIndex>): void {
  describe(`${name}: the ChunkIndex contract`, () => {
    it('answers ping', async () => {
      await (await open()).ping();
    });

    describe('upsert / get', () => {
      it('round-trips every field', async () => {
        const index = await open();
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

      it('round-trips a chunk of several hundred kilobytes, lists it by the words at its end and updates it', async () => {
        const index = await open();
        const content = `${'Lorem ipsum dolor sit amet, consectetur adipiscing élit. '.repeat(5000)}closing zygote`;
        const big = chunk({ id: 'big', content, parent_content: content.toUpperCase(), vector: [1, 0] });
        await index.upsert([big]);
        assert.deepEqual(await index.get('big'), big);
        const listed = await index.list('doc1', { keywords: 'CLOSING ZYGOTE', page: 1, pageSize: 5 });
        assert.deepEqual([listed.total, ids(listed.chunks)], [1, ['big']]);
        assert.deepEqual(ids(await index.fullText('lorem', { datasetIds: ['ds1'] }, 5)), ['big']);
        await index.update('big', { content: 'short now' });
        assert.equal((await index.get('big'))?.content, 'short now');
        assert.equal((await index.get('big'))?.parent_content, big.parent_content);
      });

      it('is idempotent: re-upserting the same ids replaces, never duplicates', async () => {
        const index = await open();
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
        const index = await open();
        await index.upsert([chunk({ id: 'a', content: 'first' }), chunk({ id: 'a', content: 'second' })]);
        assert.equal((await index.get('a'))?.content, 'second');
        assert.equal(await index.countByDocument('doc1'), 1);
      });

      it('getMany returns found chunks in the order asked', async () => {
        const index = await open();
        await index.upsert([chunk({ id: 'a' }), chunk({ id: 'b' }), chunk({ id: 'c' })]);
        assert.deepEqual(ids(await index.getMany(['c', 'x', 'a', 'c'])), ['c', 'a', 'c']);
        assert.deepEqual(await index.getMany([]), []);
      });

      it('getMany without vectors returns the same chunks with an empty vector', async () => {
        const index = await open();
        await index.upsert([chunk({ id: 'a', vector: [1, 0] }), chunk({ id: 'b', vector: [0, 0] }), chunk({ id: 'c' })]);
        const full = await index.getMany(['c', 'a', 'b']);
        const light = await index.getMany(['c', 'a', 'b'], { vectors: false });
        assert.deepEqual(light, full.map((c) => ({ ...c, vector: [] })));
        assert.deepEqual((await index.getMany(['a'], { vectors: true }))[0]?.vector, [1, 0]);
      });

      it('takes ids with quotes, backslashes and line breaks as they are', async () => {
        const index = await open();
        const odd = ['say "hi"', 'back\\slash', "it's", 'line\nbreak', 'ü€𝄞'];
        await index.upsert(odd.map((id) => chunk({ id, document_id: id, content: `word ${id}` })));
        assert.deepEqual(ids(await index.getMany(odd)), odd);
        for (const id of odd) assert.equal(await index.countByDocument(id), 1, id);
        assert.deepEqual(ids((await index.list('say "hi"', { id: 'say "hi"', page: 1, pageSize: 5 })).chunks), ['say "hi"']);
        assert.equal(await index.deleteChunks(['back\\slash', 'back\\']), 1);
        assert.equal(await index.deleteByDocument('line\nbreak'), 1);
        assert.deepEqual(sorted(ids(await index.fullText('word', { datasetIds: ['ds1'], documentIds: odd }, 10))), sorted(['say "hi"', "it's", 'ü€𝄞']));
      });
    });

    describe('update', () => {
      it('patches fields and re-indexes text, vector and availability', async () => {
        const index = await open();
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

      it('moves a chunk whose vector changes dimension, or loses it', async () => {
        const index = await open();
        await index.upsert([chunk({ id: 'a', vector: [1, 0] })]);
        await index.update('a', { vector: [1, 0, 0] });
        assert.deepEqual(ids(await index.vectorSearch([1, 0], { datasetIds: ['ds1'] }, 5)), []);
        assert.deepEqual(ids(await index.vectorSearch([1, 0, 0], { datasetIds: ['ds1'] }, 5)), ['a']);
        await index.update('a', { vector: [] });
        assert.deepEqual((await index.get('a'))?.vector, []);
        assert.deepEqual(ids(await index.vectorSearch([1, 0, 0], { datasetIds: ['ds1'] }, 5)), []);
      });

      it('ignores undefined patch values', async () => {
        const index = await open();
        await index.upsert([chunk({ id: 'a', content: 'kept' })]);
        await index.update('a', { content: undefined, tag_kwd: ['t'] });
        assert.equal((await index.get('a'))?.content, 'kept');
        assert.deepEqual((await index.get('a'))?.tag_kwd, ['t']);
      });

      it('throws ChunkNotFoundError for an unknown id', async () => {
        await assert.rejects((await open()).update('nope', { content: 'x' }), ChunkNotFoundError);
      });

      it("keeps a RAPTOR summary's level through upsert, list and update; other chunks have none", async () => {
        const index = await open();
        await index.upsert([chunk({ id: 's', content: 'summary', raptor_layer: 2, vector: [1, 0] }), chunk({ id: 'c', content: 'plain', vector: [0, 1] })]);
        assert.equal((await index.get('s'))?.raptor_layer, 2);
        assert.equal('raptor_layer' in (await index.get('c'))!, false);
        await index.update('s', { content: 'summary, edited' });
        assert.equal((await index.get('s'))?.raptor_layer, 2);
        const listed = await index.list('doc1', { page: 1, pageSize: 10 });
        assert.deepEqual(listed.chunks.map((c) => [c.id, c.raptor_layer]).sort(), [['c', undefined], ['s', 2]]);
      });
    });

    describe('delete and rename', () => {
      async function populated() {
        const index = await open();
        await index.upsert([
          chunk({ id: 'a', dataset_id: 'ds1', document_id: 'd1', content: 'shared word', vector: [1, 0] }),
          chunk({ id: 'b', dataset_id: 'ds1', document_id: 'd1', content: 'shared word', vector: [1, 0] }),
          chunk({ id: 'c', dataset_id: 'ds1', document_id: 'd2', content: 'shared word', vector: [1, 0] }),
          chunk({ id: 'd', dataset_id: 'ds2', document_id: 'd3', content: 'shared word', vector: [1, 0] }),
        ]);
        return index;
      }
      const everywhere = { datasetIds: ['ds1', 'ds2'] };

      it('deletes chunks by id and reports how many existed', async () => {
        const index = await populated();
        assert.equal(await index.deleteChunks(['a', 'zzz', 'a']), 1);
        assert.deepEqual(sorted(ids(await index.fullText('shared', everywhere, 10))), ['b', 'c', 'd']);
        assert.deepEqual(sorted(ids(await index.vectorSearch([1, 0], everywhere, 10))), ['b', 'c', 'd']);
        assert.deepEqual([...(await index.cosineSimilarities(['a', 'b'], [1, 0])).keys()], ['b']);
        assert.equal(await index.deleteChunks([]), 0);
      });

      it('deletes by document', async () => {
        const index = await populated();
        assert.equal(await index.deleteByDocument('d1'), 2);
        assert.equal(await index.deleteByDocument('d1'), 0);
        assert.equal(await index.countByDocument('d1'), 0);
        assert.equal(await index.countByDocument('d2'), 1);
        assert.deepEqual(sorted(ids(await index.vectorSearch([1, 0], everywhere, 10))), ['c', 'd']);
        assert.deepEqual(sorted(ids(await index.fullText('shared', everywhere, 10))), ['c', 'd']);
      });

      it('deletes by dataset', async () => {
        const index = await populated();
        assert.equal(await index.deleteByDataset('ds1'), 3);
        assert.equal(await index.deleteByDataset('ds1'), 0);
        assert.deepEqual(ids(await index.fullText('shared', everywhere, 10)), ['d']);
        assert.deepEqual(ids(await index.vectorSearch([1, 0], everywhere, 10)), ['d']);
        assert.deepEqual(await index.getMany(['a', 'b', 'c']), []);
      });

      it('renames a document: hits carry the new name and full text finds it, the old name is gone', async () => {
        const index = await populated();
        assert.equal(await index.renameDocument('d1', 'Turbine manual.pdf'), 2);
        assert.equal(await index.renameDocument('missing', 'x'), 0);
        const byName = await index.fullText('turbine', everywhere, 10);
        assert.deepEqual(sorted(ids(byName)), ['a', 'b']);
        assert.ok(byName.every((h) => h.document_name === 'Turbine manual.pdf'));
        assert.deepEqual(ids(await index.fullText('doc1', everywhere, 10)).filter((id) => id === 'a' || id === 'b'), []);
        const near = await index.vectorSearch([1, 0], { datasetIds: ['ds1'], documentIds: ['d1'] }, 10);
        assert.deepEqual(near.map((h) => h.document_name), ['Turbine manual.pdf', 'Turbine manual.pdf']);
        const renamed = await index.get('a');
        assert.deepEqual([renamed?.document_name, renamed?.content, renamed?.vector], ['Turbine manual.pdf', 'shared word', [1, 0]]);
      });

      it('a renamed chunk is still found by its content, keywords and questions, and keeps every other field', async () => {
        const index = await open();
        const original = chunk({
          id: 'k', document_id: 'd9', document_name: 'before.txt', content: 'gearbox lubrication', important_keywords: ['flange', 'bearing'],
          questions: ['How is the impeller balanced?', 'Which torque?'], tag_kwd: ['t'], positions: [[3, 1, 2, 3, 4]], vector: [0, 1],
        });
        await index.upsert([original]);
        assert.equal(await index.renameDocument('d9', 'Gasket atlas.txt'), 1);
        for (const word of ['lubrication', 'bearing', 'flange', 'impeller', 'torque', 'gasket', 'atlas']) {
          assert.deepEqual(ids(await index.fullText(word, { datasetIds: ['ds1'] }, 10)), ['k'], word);
        }
        assert.deepEqual(await index.get('k'), { ...original, document_name: 'Gasket atlas.txt' });
      });
    });

    describe('list', () => {
      it('lists a document in reading order with paging, keyword and id filters', async () => {
        const index = await open();
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

      it('keeps the write order of chunks without positions, within a batch and across batches', async () => {
        const index = await open();
        const order = ['z', 'm', 'a', 'q', 'b', 'y', 'c'];
        await index.upsert(order.slice(0, 4).map((id) => chunk({ id })));
        await index.upsert(order.slice(4).map((id) => chunk({ id })));
        assert.deepEqual(ids((await index.list('doc1', { page: 1, pageSize: 10 })).chunks), order);
      });

      it('matches keywords case-insensitively beyond ASCII', async () => {
        const index = await open();
        await index.upsert([chunk({ id: 'a', content: 'ÉCOLE Supérieure' })]);
        assert.equal((await index.list('doc1', { keywords: 'école', page: 1, pageSize: 5 })).total, 1);
      });

      it('matches keywords with LIKE and quoting characters literally', async () => {
        const index = await open();
        await index.upsert([
          chunk({ id: 'pct', content: 'a 50%_off "deal" \\ here' }),
          chunk({ id: 'near', content: 'a 50xxoff deal' }),
        ]);
        for (const keywords of ['50%_off', '"deal" \\', '%', '_']) {
          assert.deepEqual(ids((await index.list('doc1', { keywords, page: 1, pageSize: 5 })).chunks), ['pct'], keywords);
        }
      });
    });

    describe('fullText', () => {
      it('ranks with BM25, weighting keywords and questions above content', async () => {
        const index = await open();
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

      it('finds a word in the content, keywords, questions or document name, in any inflection', async () => {
        const index = await open();
        await index.upsert([
          chunk({ id: 'a', content: 'Running fast' }),
          chunk({ id: 'b', content: 'nothing', important_keywords: ['runs'] }),
          chunk({ id: 'c', content: 'nothing', document_name: 'run.txt' }),
          chunk({ id: 'd', content: 'nothing', questions: ['Who runs?'] }),
          chunk({ id: 'e', content: 'walk', document_name: 'Quarterly Reports.pdf' }),
        ]);
        const f = { datasetIds: ['ds1'] };
        const hits = await index.fullText('run', f, 10);
        assert.deepEqual(sorted(ids(hits)), ['a', 'b', 'c', 'd']);
        for (const hit of hits) assert.ok(hit.score > 0, `${hit.id}: ${hit.score}`);
        assert.deepEqual(ids(await index.fullText('report', f, 10)), ['e']);
      });

      it('filters by dataset, document and availability, and honours the limit', async () => {
        const index = await open();
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
        assert.deepEqual(await index.fullText('graphite', { datasetIds: ['ds1'], documentIds: [] }, 10), []);
        assert.deepEqual(await index.fullText('graphite', { datasetIds: ['ds1'] }, 0), []);
      });

      it('returns nothing for a question made only of stopwords or punctuation', async () => {
        const index = await open();
        await index.upsert([chunk({ id: 'a', content: 'the and of' })]);
        assert.deepEqual(await index.fullText('the of and', { datasetIds: ['ds1'] }, 10), []);
        assert.deepEqual(await index.fullText('"*:()^', { datasetIds: ['ds1'] }, 10), []);
      });

      it('treats query syntax in the question as plain words', async () => {
        const index = await open();
        await index.upsert([chunk({ id: 'a', content: 'near or not' })]);
        assert.deepEqual(ids(await index.fullText('NEAR("x" OR NOT) title:* id == "a" || true', { datasetIds: ['ds1'] }, 10)), ['a']);
      });
    });

    describe('vectorSearch and cosines', () => {
      it('returns cosine similarities, best first', async () => {
        const index = await open();
        await index.upsert([
          chunk({ id: 'same', vector: [1, 0, 0, 0, 0] }),
          chunk({ id: 'three-quarters', vector: [3, 2, 1, 1, 1] }),
          chunk({ id: 'half', vector: [1, 1, 1, 1, 0] }),
          chunk({ id: 'orthogonal', vector: [0, 1, 0, 0, 0] }),
          chunk({ id: 'opposite', vector: [-1, 0, 0, 0, 0] }),
          chunk({ id: 'zero', vector: [0, 0, 0, 0, 0] }),
          chunk({ id: 'no-vector' }),
        ]);
        const hits = await index.vectorSearch([1, 0, 0, 0, 0], { datasetIds: ['ds1'] }, 10);
        assert.deepEqual(rounded(hits), [
          ['same', 1], ['three-quarters', 0.75], ['half', 0.5], ['orthogonal', 0], ['opposite', -1],
        ]);
        assert.deepEqual(ids(await index.vectorSearch([1, 0, 0, 0, 0], { datasetIds: ['ds1'] }, 2)), ['same', 'three-quarters']);
        assert.deepEqual((await index.get('zero'))?.vector, [0, 0, 0, 0, 0]);
      });

      it('keeps datasets with different dimensions apart', async () => {
        const index = await open();
        await index.upsert([
          chunk({ id: 'small', dataset_id: 'mini', vector: [1, 0, 0] }),
          chunk({ id: 'large', dataset_id: 'big', vector: [1, 0, 0, 0, 0, 0, 0, 0, 0, 0] }),
        ]);
        const both = { datasetIds: ['mini', 'big'] };
        assert.deepEqual(rounded(await index.vectorSearch([0, 1, 0], both, 10)), [['small', 0]]);
        assert.deepEqual(ids(await index.vectorSearch([1, 0, 0, 0, 0, 0, 0, 0, 0, 0], both, 10)), ['large']);
        assert.deepEqual(ids(await index.vectorSearch([1, 0, 0, 0], both, 10)), []);
        assert.deepEqual([...await index.cosineSimilarities(['small', 'large'], [1, 0, 0])], [['small', 1]]);
      });

      it('filters by dataset, document and availability', async () => {
        const index = await open();
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
        assert.deepEqual(await index.vectorSearch(q, { datasetIds: [] }, 10), []);
      });

      it('hits carry dataset, document and document name', async () => {
        const index = await open();
        await index.upsert([chunk({
          id: 'a', document_name: 'Budget.xlsx', content: 'Revenue grew', important_keywords: ['forecast'],
          questions: ['Which costs rose?'], vector: [1, 1, 1, 1, 0],
        })]);
        const [text] = await index.fullText('revenue', { datasetIds: ['ds1'] }, 5);
        const [vector] = await index.vectorSearch([1, 0, 0, 0, 0], { datasetIds: ['ds1'] }, 5);
        for (const hit of [text, vector]) {
          assert.ok(hit);
          assert.deepEqual([hit.id, hit.dataset_id, hit.document_id, hit.document_name], ['a', 'ds1', 'doc1', 'Budget.xlsx']);
        }
        assert.deepEqual(rounded([vector!]), [['a', 0.5]]);
      });

      it('gives cosines of the chunks that have a vector of the dimension asked', async () => {
        const index = await open();
        await index.upsert([
          chunk({ id: 'a', vector: [1, 1, 1, 1, 0] }),
          chunk({ id: 'b', vector: [-1, 0, 0, 0, 0] }),
          chunk({ id: 'c' }),
          chunk({ id: 'd', vector: [1, 0] }),
          chunk({ id: 'z', vector: [0, 0, 0, 0, 0] }),
        ]);
        const cosines = await index.cosineSimilarities(['a', 'b', 'c', 'd', 'z', 'missing', 'a'], [1, 0, 0, 0, 0]);
        assert.deepEqual(rounded([...cosines].map(([id, score]) => ({ id, score }))).sort(), [['a', 0.5], ['b', -1]], 'zero vectors have no cosine (not NaN)');
        assert.deepEqual(await index.cosineSimilarities(['a'], []), new Map());
        assert.deepEqual(ids(await index.vectorSearch([1, 0, 0, 0, 0], { datasetIds: ['ds1'] }, 5)), ['a', 'b']);
      });
    });
  });
}
