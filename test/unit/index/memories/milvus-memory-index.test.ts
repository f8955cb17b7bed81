import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MilvusClient } from '@zilliz/milvus2-sdk-node';
import { connectMilvus } from '../../../../src/index/chunks/milvus/client.js';
import { loadConfig } from '../../../../src/config.js';
import type { MilvusLocation } from '../../../../src/index/location.js';
import { MilvusMemoryIndex } from '../../../../src/index/memories/milvus-memory-index.js';
import type { MetaDb } from '../../../../src/store/db.js';
import { openBackends } from '../../../../src/wiring.js';
import { sharedMilvus } from '../../../support/milvus-server.js';
import { freshDatabaseUrl, openTestMetaDb, testProfiles, type TestProfile } from '../../../support/meta-store.js';
import { memoryIndexConformance, msg, opts } from './memory-index-conformance.js';
import { messageSize } from '../../../../src/memories/size.js';
import { openIndexDatabase } from '../../../../src/index/sqlite-database.js';
import { SqliteMemoryIndex } from '../../../../src/index/memories/sqlite-memory-index.js';
import { copyMessages, messageMismatches } from '../../../../src/cli/migration/messages.js';

const ledgerName = (profile: TestProfile) => (profile === 'scale-out' ? 'PostgreSQL' : 'SQLite');

/**
 * Each write reaches milvus-lite (~15 ms), so the random walks are shorter than on the embedded index. The
 * contract runs with both ledgers; the processes-apart tests with the scale-out profile's (PostgreSQL).
 */
const SIZES = { randomSteps: 150, fifoRounds: 8 };

/** Message ids of the memory's search copies in Milvus, read straight from the collection. */
async function copiesIn(location: MilvusLocation, memoryId: string): Promise<number[]> {
  const client = new MilvusClient({ address: location.address, telemetry: { enabled: false }, logLevel: 'error' });
  try {
    await client.useDatabase({ db_name: location.database });
    const { data } = await client.query({ collection_name: 'cairn_memory_messages', filter: `memory_id == "${memoryId}"`, output_fields: ['message_id'], limit: 1000 });
    return data.map((r) => Number(r.message_id)).sort((a, b) => a - b);
  } finally {
    await client.closeConnection();
  }
}

for (const profile of testProfiles()) {
  describe(`MilvusMemoryIndex (milvus-lite, ledger on ${ledgerName(profile)})`, function () {
    this.timeout(180_000);
    const indexes: MilvusMemoryIndex[] = [];
    const dbs: MetaDb[] = [];
    let client: MilvusClient;
    let prefixes = 0;
    /** Another process of an installation: a client of its own. */
    const connect = async (location: MilvusLocation, db: MetaDb) => {
      const index = await MilvusMemoryIndex.connect(location, db);
      indexes.push(index);
      return index;
    };
    const freshDb = async () => {
      const db = await openTestMetaDb(profile);
      dbs.push(db);
      return db;
    };
    /** A new installation of one process: its own metadata database and Milvus database. */
    const fresh = async () => {
      const location = (await sharedMilvus()).freshLocation();
      const db = await freshDb();
      return { location, db, index: await connect(location, db) };
    };
    /**
     * A new installation on the shared client: its own metadata database and collection prefix in one
     * Milvus database (connecting a client to milvus-lite takes ~1 s; making collections ~0.1 s).
     */
    const freshOnSharedClient = async () => MilvusMemoryIndex.open(client, await freshDb(), { prefix: `i${++prefixes}_` });

    before(async () => {
      client = await connectMilvus((await sharedMilvus()).freshLocation());
    });

    after(async () => {
      await Promise.all(indexes.splice(0).map((index) => index.close().catch(() => undefined)));
      await client?.closeConnection();
      await Promise.all(dbs.splice(0).map((db) => db.close()));
    });

    memoryIndexConformance(`MilvusMemoryIndex [${ledgerName(profile)}]`, freshOnSharedClient, SIZES);

    // Processes apart share one PostgreSQL ledger (the scale-out profile); with SQLite there is one machine.
    const apart = (title: string, test: () => Promise<void>) => {
      if (profile === 'scale-out') it(title, test);
    };

    apart('two processes on one installation share the id sequence, the totals and each other\'s writes at once', async () => {
      const { location, db, index: a } = await fresh();
      const b = await connect(location, db);
      const [one] = (await a.add('m1', [msg({ content: 'alpine lake' })], opts())).messageIds;
      const [two] = (await b.add('m1', [msg({ content: 'alpine meadow' })], opts())).messageIds;
      assert.deepEqual([one, two], [1, 2]);
      assert.deepEqual((await b.fullText('alpine', { memoryIds: ['m1'] }, 5)).map((h) => h.message_id).sort(), [1, 2]);
      await b.setStatus('m1', one!, false);
      assert.deepEqual((await a.vectorSearch([1, 0, 0, 0], { memoryIds: ['m1'] }, 5)).map((h) => h.message_id), [two]);
      assert.deepEqual(await a.usage('m1'), await b.recount('m1'));
    });

    apart('concurrent adds to one memory from two processes keep the total exact and within memory_size', async () => {
      const { location, db, index: a } = await fresh();
      const b = await connect(location, db);
      const size = messageSize('hello', 4);
      const limit = size * 5;
      const results = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 ? a : b).add('m1', [msg()], opts(limit))));
      const ids = results.flatMap((r) => r.messageIds);
      assert.equal(new Set(ids).size, 16, 'every add got its own id');
      assert.deepEqual(await a.usage('m1'), { bytes: limit, messages: 5 });
      assert.deepEqual(await a.recount('m1'), { bytes: limit, messages: 5 });
      assert.equal(results.flatMap((r) => r.evicted).length, 11, 'each message evicted once');
      assert.deepEqual(await copiesIn(location, 'm1'), (await a.recent({ memoryIds: ['m1'], limit: 10 })).map((m) => m.message_id).sort((x, y) => x - y), 'Milvus holds copies of exactly the messages kept');
    });

    apart('a process that dies between the ledger commit and Milvus leaves nothing wrong: the next write or search in any process repairs the copies', async () => {
      const { location, db, index: survivor } = await fresh();
      const doomed = await MilvusMemoryIndex.connect(location, db);
      const [raw] = (await survivor.add('m1', [msg({ content: 'basalt column' })], opts())).messageIds;
      // The doomed process loses Milvus after committing: its adds are stored, their copies are not written.
      await doomed.close();
      const items = [msg({ message_type: 'semantic', source_id: raw!, content: 'obsidian shard' })];
      await assert.rejects(doomed.add('m1', items, opts(10_000, { onceForSource: raw! })), /Milvus/);
      await assert.rejects(doomed.remove('m1', [raw!]), /Milvus/);
      assert.equal((await survivor.usage('m1')).messages, 1, 'the ledger committed both writes');
      const [item] = (await survivor.list('m1', { page: 1, pageSize: 10 })).messages.map((m) => m.message_id);
      assert.deepEqual(await copiesIn(location, 'm1'), [raw], 'Milvus still has the removed message and lacks the new one');
      // The retried extraction (on another worker) stores nothing twice and writes the missing copies.
      assert.equal((await survivor.add('m1', items, opts(10_000, { onceForSource: raw! }))).alreadyStored, true);
      assert.deepEqual(await copiesIn(location, 'm1'), [item]);
      assert.deepEqual((await survivor.fullText('obsidian', { memoryIds: ['m1'] }, 5)).map((h) => h.message_id), [item]);

      // Without any later write: the next search repairs.
      const again = await MilvusMemoryIndex.connect(location, db);
      const [late] = (await survivor.add('m2', [msg({ content: 'pumice stone' })], opts())).messageIds;
      await again.close();
      await assert.rejects(again.setStatus('m2', late!, false), /Milvus/);
      assert.deepEqual(await survivor.vectorSearch([1, 0, 0, 0], { memoryIds: ['m2'] }, 5), [], 'the ledger says disabled: never found, even before the copy is rewritten');
      await survivor.setStatus('m2', late!, true);
      assert.deepEqual((await survivor.fullText('pumice', { memoryIds: ['m2'] }, 5)).map((h) => h.message_id), [late]);
    });

    apart('deleteMemory removes every search copy of the memory, also after a crash in between', async () => {
      const { location, db, index } = await fresh();
      await index.add('m1', [msg({ content: 'one' }), msg({ content: 'two', vector: [0, 1] })], opts());
      const doomed = await MilvusMemoryIndex.connect(location, db);
      await doomed.close();
      await assert.rejects(doomed.deleteMemory('m1'), /Milvus/);
      assert.equal((await copiesIn(location, 'm1')).length, 2);
      assert.deepEqual(await index.fullText('one two', { memoryIds: ['m1'] }, 5), [], 'the search repairs first');
      assert.deepEqual(await copiesIn(location, 'm1'), []);
    });

    it('cairn migrate-to\'s messages stage moves an embedded memory into it: ids, totals, extracted items, search, then new ids above', async () => {
      const source = new SqliteMemoryIndex(openIndexDatabase(':memory:'));
      const [raw] = (await source.add('m1', [msg({ content: 'granite ridge walk' }), msg({ content: 'second raw' })], opts())).messageIds;
      await source.add('m1', [msg({ message_type: 'semantic', source_id: raw!, content: 'likes ridges' })], opts(1e6, { onceForSource: raw! }));
      await source.forget('m1', raw! + 1, 77);
      const target = await freshOnSharedClient();
      const copied = await copyMessages(source, target, [{ id: 'm1', idsUsedThrough: 10 }], () => undefined);
      assert.equal(copied.messages, 3);
      assert.deepEqual(await messageMismatches(target, copied.perMemory), []);
      assert.deepEqual(await target.list('m1', { page: 1, pageSize: 10 }), await source.list('m1', { page: 1, pageSize: 10 }));
      assert.deepEqual((await target.fullText('ridge', { memoryIds: ['m1'] }, 5)).map((h) => h.message_id).sort(), [raw, raw! + 2]);
      assert.deepEqual((await target.add('m1', [msg()], opts())).messageIds, [11]);
    });

    it('refuses vectors Milvus cannot store, storing nothing', async () => {
      const index = await freshOnSharedClient();
      await assert.rejects(index.add('m1', [msg(), msg({ vector: [1] })], opts()), /Milvus stores vectors of 2 to 32768 dimensions, this one has 1/);
      assert.deepEqual(await index.usage('m1'), { bytes: 0, messages: 0 });
    });

    it('is what openBackends builds for CAIRN_INDEX=milvus://…: messages go to the metadata database and Milvus, none to the data dir', async () => {
      const server = await sharedMilvus();
      const location = server.freshLocation();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-milvus-memory-wiring-'));
      const databaseUrl = profile === 'scale-out' ? await freshDatabaseUrl(profile) : `sqlite:${path.join(dataDir, 'meta.db')}`;
      try {
        const backends = await openBackends(loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_DATABASE_URL: databaseUrl, ...server.env(location) }));
        // By name: wiring's dynamic import loads the module apart from this file's import under mocha + tsx.
        assert.equal(backends.memories.constructor.name, 'MilvusMemoryIndex');
        const [id] = (await backends.memories.add('m1', [msg({ content: 'wired memory' })], opts())).messageIds;
        const { kysely } = backends.db;
        assert.equal((await kysely.selectFrom('memory_messages' as never).select('message_id' as never).execute()).length, 1);
        await backends.close();
        assert.deepEqual(await copiesIn(location, 'm1'), [id]);
        const indexFile = new Database(path.join(dataDir, 'cairn.db'), { readonly: true });
        try {
          const embedded = indexFile.prepare(`SELECT name FROM sqlite_master WHERE name = 'memory_rows'`).all();
          assert.deepEqual(embedded, [], 'the embedded memory index is not opened');
        } finally {
          indexFile.close();
        }
        await assert.rejects(backends.memories.ping(), /Milvus checkHealth failed|destroyed|closed/);
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
}
