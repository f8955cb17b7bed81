import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { SharedVectorRegistry } from '../../../../src/index/vectors/shared-vector-registry.js';
import { openIndexDatabase } from '../../../../src/index/sqlite-database.js';
import { SqliteChunkIndex, type SqliteChunkIndexOptions } from '../../../../src/index/chunks/sqlite-index.js';
import { SqliteReadPool } from '../../../../src/index/chunks/sqlite-read-pool.js';
import { ThreadedSqliteChunkIndex } from '../../../../src/index/chunks/sqlite-threaded-index.js';
import type { CacheSize, IndexedChunk } from '../../../../src/index/chunks/chunk-index.js';
import type { ExactDatasetVectors } from '../../../../src/index/vectors/vector-copies.js';
import { chunk } from '../helpers.js';

const DIMS = 24;
/** Deterministic pseudo-random components in -1..1. */
const vectorOf = (seed: number, dims = DIMS) => Array.from({ length: dims }, (_, d) => Math.sin(seed * 12.9898 + d * 78.233) % 1);

function corpus(datasetId: string, count: number, from = 0): IndexedChunk[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    return chunk({
      id: `${datasetId}-${i}`,
      dataset_id: datasetId,
      document_id: `${datasetId}-doc${i % 4}`,
      available: i % 7 !== 3,
      content: `granite cairn ${i}`,
      // A zero vector (no cosine), one of another dimension and one without a vector among them.
      vector: i === 5 ? new Array(DIMS).fill(0) : i === 6 ? vectorOf(i, 8) : i === 9 ? [] : vectorOf(i),
    });
  });
}

/** A connection that builds its copies at the first search after a write (the service waits 1 s, after the search). */
const inMemory = (db: Database, options: SqliteChunkIndexOptions = {}) =>
  new SqliteChunkIndex(db, { vectorsQuietMs: 0, vectorsSchedule: (build) => build(), ...options });
const fromSqlite = (db: Database) => new SqliteChunkIndex(db, { vectorsCacheBytes: 0 });
const vectorsCache = async (index: { cacheSizes(): Promise<CacheSize[]> }) => (await index.cacheSizes()).find((c) => c.name === 'vectors')!;
/** The bytes of a dataset's copy alone (vectors, row ids, norms, flags, documents, ids and their hash table). */
async function copyBytes(db: Database, datasetId: string): Promise<number> {
  const index = inMemory(db);
  index.vectorSearchHits(vectorOf(0), { datasetIds: [datasetId] }, 1);
  return (await vectorsCache(index)).bytes!;
}

describe('in-memory vector copies (vector-copies.ts)', () => {
  let db: Database;
  beforeEach(async () => {
    db = openIndexDatabase(':memory:');
    await fromSqlite(db).upsert([...corpus('ds1', 60), ...corpus('ds2', 40)]);
  });
  afterEach(() => db.close());

  it('give the same hits and the same scores, bit for bit, as sqlite-vec', async () => {
    const memory = inMemory(db);
    const sqlite = fromSqlite(db);
    const filters = [
      { datasetIds: ['ds1'], availableOnly: true },
      { datasetIds: ['ds1', 'ds2'] },
      { datasetIds: ['ds2'], documentIds: ['ds2-doc1', 'ds2-doc3'], availableOnly: true },
    ];
    const ids = [...corpus('ds1', 60), ...corpus('ds2', 40)].map((c) => c.id).concat('missing');
    for (let q = 0; q < 8; q++) {
      const query = vectorOf(1000 + q);
      for (const filter of filters) {
        for (const limit of [3, 20, 100]) {
          assert.deepEqual(memory.vectorSearchHits(query, filter, limit), sqlite.vectorSearchHits(query, filter, limit));
        }
      }
      assert.deepEqual(memory.cosineSimilaritiesNow(ids, query), sqlite.cosineSimilaritiesNow(ids, query));
      assert.deepEqual(memory.cosineSimilaritiesNow(ids, vectorOf(q, 8)), sqlite.cosineSimilaritiesNow(ids, vectorOf(q, 8)));
    }
    assert.deepEqual(memory.cosineSimilaritiesNow(ids, new Array(DIMS).fill(0)), new Map(), 'a zero query has no cosine');
    // Both datasets, 24-dimension and 8-dimension vectors (the zero vector is kept: it is a row of the table).
    const { entries, bytes } = await vectorsCache(memory);
    assert.equal(entries, 98);
    assert.equal(bytes, (await copyBytes(db, 'ds1')) + (await copyBytes(db, 'ds2')));
    assert.ok(bytes! > 96 * DIMS * 4 + 2 * 8 * 4 && bytes! < 98 * (DIMS * 4 + 100), `${bytes} bytes`);
  });

  it('are rebuilt after a write from another connection, and serve SQLite until then', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-vectors-'));
    const [readerDb, writerDb] = [openIndexDatabase(join(dir, 'cairn.db')), openIndexDatabase(join(dir, 'cairn.db'))];
    try {
      const writer = fromSqlite(writerDb);
      await writer.upsert(corpus('ds1', 30));
      const quiet = () => new Promise((resolve) => setTimeout(resolve, 60));
      const reader = inMemory(readerDb, { vectorsQuietMs: 50 });
      const query = vectorOf(7);
      const filter = { datasetIds: ['ds1'] };
      const search = () => reader.vectorSearchHits(query, filter, 50).map((h) => h[0]);
      assert.equal(search().length, 27, 'the vectors of 24 dimensions but the zero one');
      assert.equal((await vectorsCache(reader)).entries, 0, 'not built before the dataset has gone unwritten for the quiet period');
      await quiet();
      search();
      assert.equal((await vectorsCache(reader)).entries, 29);

      const moved = chunk({ ...corpus('ds1', 1, 1)[0]!, vector: query });
      await writer.upsert([moved, ...corpus('ds1', 2, 30)]);
      await writer.deleteChunks(['ds1-2']);
      const expected = fromSqlite(readerDb).vectorSearchHits(query, filter, 50);
      assert.equal(expected[0]![0], 'ds1-1');
      assert.deepEqual(reader.vectorSearchHits(query, filter, 50), expected, 'stale copy: served from SQLite');
      assert.deepEqual(reader.cosineSimilaritiesNow(['ds1-1', 'ds1-2', 'ds1-30'], query), fromSqlite(readerDb).cosineSimilaritiesNow(['ds1-1', 'ds1-2', 'ds1-30'], query));
      await quiet();
      assert.deepEqual(reader.vectorSearchHits(query, filter, 50), expected, 'rebuilt copy');
      assert.equal((await vectorsCache(reader)).entries, 30);
      assert.equal(reader.cosineSimilaritiesNow(['ds1-1'], query).get('ds1-1'), fromSqlite(readerDb).cosineSimilaritiesNow(['ds1-1'], query).get('ds1-1'));
    } finally {
      readerDb.close();
      writerDb.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stay within the bound: least recently searched datasets dropped first, one that does not fit served from SQLite', async () => {
    await fromSqlite(db).upsert([...corpus('ds3', 20), ...corpus('ds1', 40, 60)]);
    // ds1 holds 98 vectors, ds2 39, ds3 19: the bound holds ds2 and ds3, not ds1.
    const [ds1, ds2, ds3] = [await copyBytes(db, 'ds1'), await copyBytes(db, 'ds2'), await copyBytes(db, 'ds3')];
    const bound = ds2 + ds3;
    assert.ok(ds1 > bound);
    const memory = inMemory(db, { vectorsCacheBytes: bound });
    const sqlite = fromSqlite(db);
    const query = vectorOf(3);
    for (const ds of ['ds2', 'ds3', 'ds1']) {
      assert.deepEqual(memory.vectorSearchHits(query, { datasetIds: [ds] }, 10), sqlite.vectorSearchHits(query, { datasetIds: [ds] }, 10));
    }
    assert.equal((await vectorsCache(memory)).entries, 39 + 19, 'ds1 does not fit: SQLite serves it');
    const small = inMemory(db, { vectorsCacheBytes: ds2 });
    for (const ds of ['ds2', 'ds3']) small.vectorSearchHits(query, { datasetIds: [ds] }, 10);
    assert.equal((await vectorsCache(small)).entries, 19, 'ds2, searched longest ago, was dropped for ds3');
    small.vectorSearchHits(query, { datasetIds: ['ds2'] }, 10);
    assert.equal((await vectorsCache(small)).entries, 39);
  });

  it('one connection adopts the copies another built, through the registry a pool keeps', async () => {
    const registry = new SharedVectorRegistry(await copyBytes(db, 'ds1'));
    const [a, b] = ['a', 'b'].map((thread) => inMemory(db, { vectorsPublish: (copy) => registry.register(copy, thread) }));
    const query = vectorOf(11);
    a!.vectorSearchHits(query, { datasetIds: ['ds2'] }, 5);
    b!.syncVectors(registry.syncFor('b')!);
    const [copy] = registry.copies();
    assert.equal(copy?.datasetId, 'ds2');
    // b searches from the very memory a built: changing it changes b's answer.
    const before = b!.cosineSimilaritiesNow(['ds2-0'], query).get('ds2-0')!;
    assert.equal(copy!.kind, 'exact');
    const group = (copy as ExactDatasetVectors).groups.find((g) => g.dim === DIMS)!;
    group.vectors.subarray(0, DIMS).set(query);
    group.norms[0] = Math.hypot(...Float32Array.from(query));
    const after = b!.cosineSimilaritiesNow(['ds2-0'], query).get('ds2-0')!;
    assert.notEqual(before, after);
    assert.ok(Math.abs(after - 1) < 1e-6);
    // ds1 pushes ds2 out of the registry's bound; b is told to let go of it.
    a!.vectorSearchHits(query, { datasetIds: ['ds1'] }, 5);
    assert.deepEqual(registry.copies().map((c) => c.datasetId), ['ds1']);
    const sync = registry.syncFor('b')!;
    assert.deepEqual(sync.drop, [['ds2', copy!.generation]]);
    assert.deepEqual(sync.adopt.map((c) => c.datasetId), ['ds1']);
    assert.equal(registry.syncFor('b'), undefined, 'nothing new');
    assert.deepEqual(registry.syncFor('a'), { adopt: [], drop: [['ds2', copy!.generation]] }, 'a, which built ds2, lets go of it too');
  });
});

describe('in-memory vector copies: cosines by id', () => {
  it('finds each chunk by its id, ASCII or not, and never one id for another of the same byte length', async () => {
    const db = openIndexDatabase(':memory:');
    try {
      // 'é' is two bytes in UTF-8: 'caf\u00e9' and 'cafee' have the same byte length, 'caf' is a prefix of both.
      const ids = ['cafe', 'caf\u00e9', 'cafee', 'caf', '\u{1d11e}clef', 'x'.repeat(300)];
      await fromSqlite(db).upsert(ids.map((id, i) => chunk({ id, dataset_id: 'ds', document_id: 'doc', vector: vectorOf(i) })));
      const memory = inMemory(db);
      memory.vectorSearchHits(vectorOf(0), { datasetIds: ['ds'] }, 1);
      assert.equal((await vectorsCache(memory)).entries, ids.length, 'the copy is built');
      const asked = [...ids, 'cafef', 'caf\u00e8', 'CAFE', ''];
      const query = vectorOf(99);
      assert.deepEqual(memory.cosineSimilaritiesNow(asked, query), fromSqlite(db).cosineSimilaritiesNow(asked, query));
      assert.deepEqual([...memory.cosineSimilaritiesNow(asked, query).keys()].sort(), [...ids].sort());
    } finally {
      db.close();
    }
  });
});

describe('in-memory vector copies shared by the reader threads of a pool', function () {
  this.timeout(60_000);
  let dir: string;
  let db: Database;
  let pool: SqliteReadPool;
  let index: ThreadedSqliteChunkIndex;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-vectors-pool-'));
    db = openIndexDatabase(join(dir, 'cairn.db'));
    const writer = fromSqlite(db);
    pool = new SqliteReadPool(join(dir, 'cairn.db'), 2, { vectorsQuietMs: 0 });
    index = new ThreadedSqliteChunkIndex(writer, pool);
    await index.upsert(corpus('ds1', 60));
  });
  afterEach(async () => {
    await index.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hold one copy, built by one thread and used by both', async () => {
    const query = vectorOf(5);
    const filter = { datasetIds: ['ds1'], availableOnly: true };
    const expected = fromSqlite(db).vectorSearchHits(query, filter, 20).map(([id, score]) => ({ id, score }));
    // The first search schedules the build on its thread; the copy reaches the pool after it.
    for (let i = 0; i < 100 && pool.sharedVectors().length === 0; i++) {
      await index.vectorSearch(query, filter, 20);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const [copy] = pool.sharedVectors();
    assert.ok(copy, 'a copy was built');
    assert.deepEqual(await vectorsCache(index), { name: 'vectors', entries: 59, bytes: await copyBytes(db, 'ds1') }, 'counted once for the two threads');
    // Both threads answer from the shared memory: after changing it here, every search sees the change.
    const group = (copy as ExactDatasetVectors).groups.find((g) => g.dim === DIMS)!;
    const position = 10;
    group.vectors.subarray(position * DIMS, (position + 1) * DIMS).set(query);
    group.norms[position] = Math.hypot(...Float32Array.from(query));
    const answers = await Promise.all(Array.from({ length: 6 }, () => index.vectorSearch(query, filter, 20)));
    assert.equal(pool.load().running, 0);
    for (const hits of answers) {
      assert.ok(Math.abs(hits[0]!.score - 1) < 1e-6, 'the changed vector is the best hit');
      assert.deepEqual(hits.slice(1).map((h) => h.id), expected.filter((h) => hits[0]!.id !== h.id).slice(0, 19).map((h) => h.id));
    }
  });
});

describe('the int8 coarse stage of the in-memory copies (int8-candidates.ts)', function () {
  this.timeout(60_000);
  // Above INT8_MIN_ROWS (2,048): the copies carry int8 rows, which pick the candidates instead of the sign bits.
  const ROWS = 3000;
  const BIG = 32;
  const bigCorpus = (datasetId: string) => Array.from({ length: ROWS }, (_, i) => chunk({
    id: `${datasetId}-${i}`,
    dataset_id: datasetId,
    document_id: `${datasetId}-doc${i % 5}`,
    available: i % 11 !== 4,
    content: `basalt ${i}`,
    vector: vectorOf(i + 1, BIG),
  }));
  let db: Database;
  before(async () => {
    db = openIndexDatabase(':memory:');
    await fromSqlite(db).upsert(bigCorpus('big'));
  });
  after(() => db.close());

  const exactSearch = () => new SqliteChunkIndex(db, { vectorsCacheBytes: 0, vectorOversample: Infinity });
  const filters = [
    { datasetIds: ['big'] },
    { datasetIds: ['big'], availableOnly: true },
    { datasetIds: ['big'], documentIds: ['big-doc1', 'big-doc2', 'big-doc4'], availableOnly: true },
  ];

  /** Recall@30 against exact search over every question and filter; the hits found keep SQLite's exact scores. */
  function assertExactEnough(index: SqliteChunkIndex): void {
    const exact = exactSearch();
    let found = 0;
    let asked = 0;
    for (let q = 0; q < 8; q++) {
      const query = vectorOf(5000 + q, BIG);
      for (const filter of filters) {
        const truth = new Map(exact.vectorSearchHits(query, filter, 100).map((h) => [h[0], h]));
        const hits = index.vectorSearchHits(query, filter, 100);
        assert.equal(hits.length, 100);
        for (const hit of hits) if (truth.has(hit[0])) assert.deepEqual(hit, truth.get(hit[0]), 'same score, dataset and document as SQLite');
        found += hits.slice(0, 30).filter((h) => [...truth.keys()].slice(0, 30).includes(h[0])).length;
        asked += 30;
      }
    }
    assert.ok(found / asked >= 0.98, `recall@30 ${found / asked}`);
  }

  it('find the exact top 30 (recall ≥ 0.98) with exact scores, and let go of the sign bits', async () => {
    const sizesOf = async (index: SqliteChunkIndex) => new Map((await index.cacheSizes()).map((c) => [c.name, c]));
    const signBitsOnly = new SqliteChunkIndex(db, { vectorsCacheBytes: 0 });
    signBitsOnly.vectorSearchHits(vectorOf(1, BIG), filters[0]!, 100);
    assert.equal((await sizesOf(signBitsOnly)).get('sign_bits')!.entries, ROWS, 'without copies the sign bits serve');
    const memory = inMemory(db);
    assertExactEnough(memory);
    const sizes = await sizesOf(memory);
    assert.equal(sizes.get('sign_bits')!.entries, 0, 'the int8 copy serves: no sign bits held');
    assert.equal(sizes.get('vectors')!.entries, ROWS);
  });

  it('give a dataset whose exact copy does not fit an int8 copy alone, counted in the bound, with cosines from SQLite', async () => {
    const exactBytes = await copyBytes(db, 'big');
    const bounded = inMemory(db, { vectorsCacheBytes: Math.floor(exactBytes / 2) });
    assertExactEnough(bounded);
    const { entries, bytes } = await vectorsCache(bounded);
    assert.equal(entries, ROWS);
    // Row ids (8 B), flags (1 B), int8 rows (32 B + a 4-byte scale + a 4-byte sum) and 4-bit rows (16 B + a
    // 4-byte scale, aligned to 16: the copy fits the bound with them), in whole 64 KiB pages.
    assert.ok(bytes! >= ROWS * (8 + 1 + 32 + 4 + 4 + 16 + 4) && bytes! < ROWS * (8 + 1) + ROWS * 60 + 16 + 65536, `${bytes} bytes`);
    assert.ok(bytes! < exactBytes / 2);
    const tooSmall = inMemory(db, { vectorsCacheBytes: Math.floor(bytes! / 2) });
    tooSmall.vectorSearchHits(vectorOf(1, BIG), filters[0]!, 10);
    assert.equal((await vectorsCache(tooSmall)).entries, 0, 'neither copy fits: sign bits and SQLite serve');
  });

  it('are not used once the dataset is written, until rebuilt at its new generation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-int8-'));
    const [readerDb, writerDb] = [openIndexDatabase(join(dir, 'cairn.db')), openIndexDatabase(join(dir, 'cairn.db'))];
    try {
      const writer = fromSqlite(writerDb);
      await writer.upsert(bigCorpus('big'));
      const reader = inMemory(readerDb, { vectorsQuietMs: 50 });
      const quiet = () => new Promise((resolve) => setTimeout(resolve, 60));
      const query = vectorOf(9999, BIG);
      const filter = { datasetIds: ['big'] };
      reader.vectorSearchHits(query, filter, 10);
      await quiet();
      reader.vectorSearchHits(query, filter, 10);
      assert.equal((await vectorsCache(reader)).entries, ROWS, 'built');
      await writer.upsert([chunk({ id: 'newcomer', dataset_id: 'big', document_id: 'big-doc0', vector: query })]);
      const expected = new SqliteChunkIndex(readerDb, { vectorsCacheBytes: 0, vectorOversample: Infinity }).vectorSearchHits(query, filter, 10);
      assert.equal(expected[0]![0], 'newcomer');
      assert.deepEqual(reader.vectorSearchHits(query, filter, 10)[0], expected[0], 'the stale copy is not used');
      // Rebuilt once the dataset has gone unwritten for the quiet period and 10× the last build's time.
      for (let i = 0; i < 100 && (await vectorsCache(reader)).entries === ROWS; i++) {
        await quiet();
        reader.vectorSearchHits(query, filter, 10);
      }
      assert.equal((await vectorsCache(reader)).entries, ROWS + 1);
      assert.deepEqual(reader.vectorSearchHits(query, filter, 10)[0], expected[0], 'the rebuilt copy holds it');
    } finally {
      readerDb.close();
      writerDb.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are scanned by both reader threads of a pool from one copy', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-int8-pool-'));
    const file = join(dir, 'cairn.db');
    const writerDb = openIndexDatabase(file);
    const index = new ThreadedSqliteChunkIndex(fromSqlite(writerDb), new SqliteReadPool(file, 2, { vectorsQuietMs: 0 }));
    try {
      await index.upsert(bigCorpus('big'));
      const filter = { datasetIds: ['big'], availableOnly: true };
      const query = vectorOf(31, BIG);
      const exact = new SqliteChunkIndex(writerDb, { vectorsCacheBytes: 0, vectorOversample: Infinity }).vectorSearchHits(query, filter, 30);
      for (let i = 0; i < 100 && (await vectorsCache(index)).entries === 0; i++) {
        await index.vectorSearch(query, filter, 30);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal((await vectorsCache(index)).entries, ROWS);
      const answers = await Promise.all(Array.from({ length: 6 }, () => index.vectorSearch(query, filter, 30)));
      for (const hits of answers) {
        const found = hits.filter((h) => exact.some((e) => e[0] === h.id && e[1] === h.score)).length;
        assert.ok(found >= 29, `${found} of the exact top 30`);
      }
    } finally {
      await index.close();
      writerDb.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
