import assert from 'node:assert/strict';
import type { Database } from 'better-sqlite3';
import { openIndexDatabase } from '../../../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../../../src/index/chunks/sqlite-index.js';
import type { CacheSize } from '../../../../src/index/chunks/chunk-index.js';
import { chunk } from '../helpers.js';

const WORDS = 'amber basalt cedar delta ember fjord glacier harbor island juniper kestrel lagoon meadow nebula orchard prairie'.split(' ');
const DIMS = 8;
const vector = (i: number) => Array.from({ length: DIMS }, (_, d) => ((i * 7 + d * 3) % 5) - 2 + 0.5);

/** The embedded index's caches stay within the bounds it is given (CAIRN_CACHE_SIGN_BITS_MB, CAIRN_CACHE_TERM_FREQUENCIES). */
describe('SqliteChunkIndex: bounded caches', () => {
  let db: Database;
  const sizeOf = async (index: SqliteChunkIndex, name: string): Promise<CacheSize> => (await index.cacheSizes()).find((c) => c.name === name)!;

  beforeEach(async () => {
    db = openIndexDatabase(':memory:');
    // Three datasets of 40 chunks, every chunk with a vector and two of the words.
    await new SqliteChunkIndex(db).upsert(
      Array.from({ length: 120 }, (_, i) =>
        chunk({ id: `c${i}`, dataset_id: `ds${i % 3}`, document_id: `doc${i % 3}`, content: `${WORDS[i % WORDS.length]} ${WORDS[(i * 5) % WORDS.length]}`, vector: vector(i) }),
      ),
    );
  });
  afterEach(() => db.close());

  it('keeps the chunk frequencies of at most the configured number of words', async () => {
    const index = new SqliteChunkIndex(db, { termFrequencyCacheEntries: 5 });
    for (let i = 0; i < WORDS.length; i += 2) {
      await index.fullText(`${WORDS[i]} ${WORDS[i + 1]}`, { datasetIds: ['ds0', 'ds1', 'ds2'] }, 10);
      const { entries } = await sizeOf(index, 'term_frequencies');
      assert.ok(entries > 0 && entries <= 5, `${entries} words cached after query ${i / 2 + 1}`);
    }
    const unbounded = new SqliteChunkIndex(db);
    for (let i = 0; i < WORDS.length; i += 2) await unbounded.fullText(`${WORDS[i]} ${WORDS[i + 1]}`, { datasetIds: ['ds0'] }, 10);
    assert.equal((await sizeOf(unbounded, 'term_frequencies')).entries, WORDS.length, 'the default bound (50,000) holds them all');
  });

  it('keeps the sign bits of the most recently searched datasets within the configured bytes', async () => {
    // One dataset's copy: 40 rows x (8-byte row id + 1-byte flag + one 64-bit word of 8 sign bits) = 680 bytes.
    const index = new SqliteChunkIndex(db, { signBitsCacheBytes: 1400 });
    for (const ds of ['ds0', 'ds1', 'ds2', 'ds0']) {
      const hits = await index.vectorSearch(vector(1), { datasetIds: [ds] }, 5);
      assert.equal(hits.length, 5);
    }
    assert.deepEqual(await sizeOf(index, 'sign_bits'), { name: 'sign_bits', entries: 80, bytes: 1360 });
    const unbounded = new SqliteChunkIndex(db);
    for (const ds of ['ds0', 'ds1', 'ds2']) await unbounded.vectorSearch(vector(1), { datasetIds: [ds] }, 5);
    assert.deepEqual(await sizeOf(unbounded, 'sign_bits'), { name: 'sign_bits', entries: 120, bytes: 2040 });
  });
});
