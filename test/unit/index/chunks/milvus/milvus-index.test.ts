import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DataType, MilvusClient } from '@zilliz/milvus2-sdk-node';
import { loadConfig } from '../../../../../src/config.js';
import { freePort } from '../../../../../src/engine/dev-server.js';
import { MilvusChunkIndex } from '../../../../../src/index/chunks/milvus/milvus-index.js';
import type { MilvusLocation } from '../../../../../src/index/location.js';
import { openBackends } from '../../../../../src/wiring.js';
import { sharedMilvus } from '../../../../support/milvus-server.js';
import { chunkIndexConformance } from '../chunk-index-conformance.js';
import { chunk } from '../../helpers.js';

const ids = (hits: { id: string }[]) => hits.map((h) => h.id);

describe('MilvusChunkIndex (on milvus-lite)', function () {
  this.timeout(120_000);
  const opened: MilvusChunkIndex[] = [];
  const connect = async (location: MilvusLocation, prefix?: string) => {
    const index = await MilvusChunkIndex.connect(location, { prefix });
    opened.push(index);
    return index;
  };
  const fresh = async () => connect((await sharedMilvus()).freshLocation());

  before(async () => {
    await sharedMilvus();
  });

  after(async () => {
    await Promise.all(opened.splice(0).map((index) => index.close()));
  });

  chunkIndexConformance('MilvusChunkIndex', fresh);

  it('two processes on one database see each other\'s writes at once', async () => {
    const location = (await sharedMilvus()).freshLocation();
    const [writer, reader] = [await connect(location), await connect(location)];
    const f = { datasetIds: ['ds1'], availableOnly: true };
    await writer.upsert([chunk({ id: 'a', content: 'alpha', vector: [1, 0] })]);
    assert.deepEqual(ids(await reader.vectorSearch([1, 0], f, 5)), ['a'], 'a vectors collection made by the other process is found');
    await writer.upsert([chunk({ id: 'b', content: 'alpha', vector: [1, 0.5] })]);
    assert.deepEqual(ids(await reader.fullText('alpha', f, 5)).sort(), ['a', 'b']);
    await writer.update('a', { available: false });
    assert.deepEqual(ids(await reader.vectorSearch([1, 0], f, 5)), ['b']);
    await reader.deleteChunks(['b']);
    assert.deepEqual(ids(await writer.vectorSearch([1, 0], f, 5)), []);
    assert.deepEqual(ids(await writer.fullText('alpha', { datasetIds: ['ds1'] }, 5)), ['a']);
  });

  it('opens when several processes connect to a fresh database at once (replicas and workers starting together)', async () => {
    const location = (await sharedMilvus()).freshLocation();
    const indexes = await Promise.all([1, 2, 3, 4].map(() => connect(location)));
    await indexes[0]!.upsert([chunk({ id: 'a', content: 'alpha', vector: [1, 0] })]);
    for (const index of indexes) assert.equal((await index.get('a'))?.content, 'alpha');
  });

  it('keeps indexes with different collection prefixes apart in one database', async () => {
    const location = (await sharedMilvus()).freshLocation();
    const [one, two] = [await connect(location, 'one_'), await connect(location, 'two_')];
    await one.upsert([chunk({ id: 'a', content: 'alpha', vector: [1, 0] })]);
    assert.equal(await two.get('a'), undefined);
    assert.deepEqual(await two.fullText('alpha', { datasetIds: ['ds1'] }, 5), []);
    assert.deepEqual(await two.vectorSearch([1, 0], { datasetIds: ['ds1'] }, 5), []);
    assert.equal((await one.get('a'))?.content, 'alpha');
  });

  it('refuses a collection of its name that has another schema, naming it', async () => {
    const server = await sharedMilvus();
    const location = server.freshLocation();
    const client = new MilvusClient({ address: server.address, telemetry: { enabled: false }, logLevel: 'error' });
    try {
      await client.createDatabase({ db_name: location.database });
      await client.useDatabase({ db_name: location.database });
      await client.createCollection({
        collection_name: 'cairn_chunks',
        fields: [
          { name: 'id', data_type: DataType.VarChar, is_primary_key: true, max_length: 64 },
          { name: 'vector', data_type: DataType.FloatVector, dim: 4 },
        ],
      });
    } finally {
      await client.closeConnection();
    }
    await assert.rejects(MilvusChunkIndex.connect(location), /collection cairn_chunks has no field "dataset_id": it was not made by this version of Cairn/);
  });

  it('refuses vectors Milvus cannot store, naming the chunk, and writes nothing of the batch', async () => {
    const index = await fresh();
    await assert.rejects(index.upsert([chunk({ id: 'ok', vector: [1, 0] }), chunk({ id: 'one-d', vector: [1] })]), /chunk one-d: Milvus stores vectors of 2 to 32768 dimensions, this one has 1/);
    assert.equal(await index.countByDocument('doc1'), 0);
  });

  it('is what openBackends builds for CAIRN_INDEX=milvus://…, and its close ends the connection', async () => {
    const server = await sharedMilvus();
    const location = server.freshLocation();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-milvus-wiring-'));
    try {
      const backends = await openBackends(loadConfig({ CAIRN_DATA_DIR: dataDir, ...server.env(location) }));
      // By name: wiring's dynamic import loads the module apart from this file's import under mocha + tsx.
      assert.equal(backends.index.constructor.name, 'MilvusChunkIndex');
      await backends.index.upsert([chunk({ id: 'a', content: 'wired' })]);
      await backends.close();
      const other = await connect(location);
      assert.deepEqual(ids(await other.fullText('wired', { datasetIds: ['ds1'] }, 5)), ['a'], 'the chunk is in Milvus, not in the data dir');
      await assert.rejects(backends.index.ping(), /Milvus checkHealth failed/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('fails to connect to a server that is not there with an error naming the address', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    await assert.rejects(MilvusChunkIndex.connect({ kind: 'milvus', address, database: 'default' }), (err: Error) => {
      assert.match(err.message, new RegExp(`Milvus connect to ${address} failed`));
      return true;
    });
  });
});
