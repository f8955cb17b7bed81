import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { packHits, packStrings, unpackHits, unpackStrings } from '../../../../src/index/chunks/hit-wire.js';
import { openIndexDatabase } from '../../../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../../../src/index/chunks/sqlite-index.js';
import { SqliteReadPool } from '../../../../src/index/chunks/sqlite-read-pool.js';
import { ThreadedSqliteChunkIndex } from '../../../../src/index/chunks/sqlite-threaded-index.js';
import type { HitRow } from '../../../../src/index/chunks/sqlite-statements.js';
import { chunk } from '../helpers.js';

const filter = { datasetIds: ['ds1'], availableOnly: true };

const CORPUS = [
  chunk({ id: 'a', document_id: 'd1', document_name: 'Alps.pdf', content: 'Granite cairns mark the summit trail', vector: [1, 0.2, 0, 0] }),
  chunk({ id: 'b', document_id: 'd1', document_name: 'Alps.pdf', content: 'Snow covers the granite ridge', vector: [0.8, 0, 0.6, 0], important_keywords: ['winter'] }),
  chunk({ id: 'c', document_id: 'd2', document_name: 'Sahara.pdf', content: 'Cairns in the desert guide caravans', vector: [0, 1, 0, 0] }),
  chunk({ id: 'd', document_id: 'd2', document_name: 'Sahara.pdf', content: 'Desert trail between wells', vector: [0, 0.5, 0.5, 0.7], available: false }),
];

describe('ThreadedSqliteChunkIndex (reads on reader threads)', function () {
  this.timeout(30_000);
  let dir: string;
  let db: Database;
  let writer: SqliteChunkIndex;
  let pool: SqliteReadPool;
  let index: ThreadedSqliteChunkIndex;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-threaded-'));
    db = openIndexDatabase(join(dir, 'cairn.db'));
    writer = new SqliteChunkIndex(db);
    pool = new SqliteReadPool(join(dir, 'cairn.db'), 2);
    index = new ThreadedSqliteChunkIndex(writer, pool);
    await index.upsert(CORPUS);
  });

  afterEach(async () => {
    await index.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers every read exactly as the index on the event loop does', async () => {
    const vector = [0.9, 0.3, 0.1, 0];
    assert.deepEqual(await index.fullText('granite cairns trail', filter, 10), await writer.fullText('granite cairns trail', filter, 10));
    assert.deepEqual(await index.vectorSearch(vector, filter, 10), await writer.vectorSearch(vector, filter, 10));
    assert.ok((await index.fullText('granite cairns trail', filter, 10)).length >= 2);
    assert.deepEqual(await index.cosineSimilarities(['a', 'c', 'missing'], vector), await writer.cosineSimilarities(['a', 'c', 'missing'], vector));
    assert.deepEqual(await index.getMany(['c', 'a', 'missing']), await writer.getMany(['c', 'a', 'missing']));
    assert.deepEqual(await index.get('b'), await writer.get('b'));
    const query = { page: 1, pageSize: 10, keywords: 'DESERT' };
    assert.deepEqual(await index.list('d2', query), await writer.list('d2', query));
    assert.equal(await index.countByDocument('d1'), 2);
  });

  it('a read sent after a write returned sees it', async () => {
    await index.upsert([chunk({ id: 'e', content: 'Lighthouse keeper logs the weather', vector: [0, 0, 0, 1] })]);
    assert.deepEqual((await index.fullText('lighthouse', filter, 5)).map((h) => h.id), ['e']);
    assert.equal((await index.vectorSearch([0, 0, 0, 1], filter, 1))[0]?.id, 'e');
    await index.update('e', { available: false });
    assert.deepEqual(await index.fullText('lighthouse', filter, 5), []);
    await index.deleteChunks(['e']);
    assert.equal(await index.get('e'), undefined);
    await index.renameDocument('d1', 'Summits.pdf');
    assert.deepEqual((await index.fullText('summits', filter, 5)).map((h) => h.id).sort(), ['a', 'b']);
  });

  it('sends reads to the reader threads, and writes and ping to the writer connection', async () => {
    await pool.close();
    await assert.rejects(index.fullText('granite', filter, 5), /reader pool is closed/);
    await assert.rejects(index.getMany(['a']), /reader pool is closed/);
    await index.upsert([chunk({ id: 'e', content: 'still writable' })]);
    await index.ping();
    assert.equal((await writer.get('e'))?.content, 'still writable');
  });

  it('answers ping without waiting behind queued searches', async () => {
    const searches = Array.from({ length: 20 }, () => index.vectorSearch([1, 0, 0, 0], filter, 10).then(() => 'search'));
    assert.equal(await Promise.race([index.ping().then(() => 'ping'), ...searches]), 'ping');
    await Promise.all(searches);
  });

  it('spreads concurrent reads over its threads and queues the rest', async () => {
    const searches = Array.from({ length: 10 }, () => index.fullText('granite', filter, 5));
    assert.deepEqual(pool.load(), { running: 2, queued: 8 });
    for (const hits of await Promise.all(searches)) assert.deepEqual(hits.map((h) => h.id).sort(), ['a', 'b']);
    assert.deepEqual(pool.load(), { running: 0, queued: 0 });
  });

  it('replaces a reader thread that died, failing only the read it was running', async () => {
    const slots = (pool as unknown as { slots: { worker: { terminate(): Promise<number> } }[] }).slots;
    const inFlight = index.fullText('granite', filter, 5);
    await slots[0]!.worker.terminate();
    await assert.rejects(inFlight, /index reader thread exited/);
    for (let i = 0; i < 4; i++) assert.equal((await index.fullText('granite', filter, 5)).length, 2);
  });

  it('reports the reader threads\' caches', async () => {
    await index.vectorSearch([1, 0, 0, 0], filter, 5);
    await index.fullText('granite', filter, 5);
    const caches = new Map((await index.cacheSizes()).map((c) => [c.name, c]));
    assert.ok(caches.get('sign_bits')!.entries >= 3, 'the sign bits of the searched dataset');
    assert.ok(caches.get('term_frequencies')!.entries >= 1);
  });

  it('runs its reader threads at a lower priority than the event loop (Linux)', async function () {
    if (process.platform !== 'linux') this.skip();
    await Promise.all([index.fullText('granite', filter, 5), index.fullText('cairns', filter, 5)]);
    const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    const threads = readdirSync(`/proc/${process.pid}/task`).map((tid) => niceOf(readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8')));
    const mine = niceOf(readFileSync(`/proc/${process.pid}/stat`, 'utf8'));
    assert.ok(threads.filter((nice) => nice === Math.min(19, mine + 5)).length >= 2, `nice values: ${threads.join(',')}`);
  });

  it('refuses a pool without threads', () => {
    assert.throws(() => new SqliteReadPool(join(dir, 'cairn.db'), 0), /at least one thread/);
  });
});

describe('hit wire format', () => {
  it('carries ids, scores and documents through a copy, each document once', () => {
    const rows: HitRow[] = [
      ['a', 2.5, 'ds1', 'd1', 'One.pdf'],
      ['b', -0.25, 'ds1', 'd1', 'One.pdf'],
      ['c', 1, 'ds2', 'd2', 'Two.pdf'],
    ];
    const packed = structuredClone(packHits(rows));
    assert.equal(packed.documents.ends.length, 2 * 3, 'each document once');
    assert.deepEqual(unpackHits(packed), [
      { id: 'a', score: 2.5, dataset_id: 'ds1', document_id: 'd1', document_name: 'One.pdf' },
      { id: 'b', score: -0.25, dataset_id: 'ds1', document_id: 'd1', document_name: 'One.pdf' },
      { id: 'c', score: 1, dataset_id: 'ds2', document_id: 'd2', document_name: 'Two.pdf' },
    ]);
    assert.deepEqual(unpackHits(packHits([])), []);
  });

  it('carries strings joined into one, each back as it was: empty, non-ASCII, astral and lone surrogates', () => {
    const parts = ['', 'chunk-1', '', 'Ελληνικά.pdf', '日本語', '🤔x', '\ud800', '\udc00b', 'a'.repeat(5000), ''];
    const packed = structuredClone(packStrings(parts));
    assert.equal(typeof packed.text, 'string', 'one string travels, not one per part');
    assert.deepEqual(unpackStrings(packed), parts);
    assert.deepEqual(unpackStrings(packStrings([])), []);
  });
});
