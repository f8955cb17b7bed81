import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { S3BlobStore, s3ClientFor } from '../../../src/blobs/s3-blob-store.js';
import { blobStoreFromConfig } from '../../../src/blobs/from-config.js';
import { FsBlobStore } from '../../../src/blobs/fs-blob-store.js';
import { loadConfig } from '../../../src/config.js';
import { freePort } from '../../../src/engine/dev-server.js';
import { startS3Server, type S3TestServer } from '../../support/s3-server.js';

describe('S3BlobStore', function () {
  this.timeout(120_000);
  let s3: S3TestServer;
  let bucketSeq = 0;
  const newBucket = async () => {
    const bucket = `s3-store-${++bucketSeq}`;
    await s3.createBucket(bucket);
    return bucket;
  };
  const listKeys = async (bucket: string) => ((await s3.client.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((o) => o.Key).sort();

  before(async () => {
    s3 = await startS3Server();
  });
  after(async () => s3?.stop());

  it('stores keys below the configured prefix and leaves objects outside it alone', async () => {
    const bucket = await newBucket();
    await s3.client.send(new PutObjectCommand({ Bucket: bucket, Key: 'other-app/datasets/d1/documents/x', Body: 'not ours' }));
    const store = new S3BlobStore(s3.client, bucket, 'cairn/prod');
    await store.put('datasets/d1/documents/x', Buffer.from('ours'));
    assert.deepEqual(await listKeys(bucket), ['cairn/prod/datasets/d1/documents/x', 'other-app/datasets/d1/documents/x']);
    await store.deletePrefix('datasets/d1');
    assert.deepEqual(await listKeys(bucket), ['other-app/datasets/d1/documents/x']);
  });

  it('puts keys at the bucket root when no prefix is configured', async () => {
    const bucket = await newBucket();
    await new S3BlobStore(s3.client, bucket).put('datasets/d1/documents/x', Buffer.from('root'));
    assert.deepEqual(await listKeys(bucket), ['datasets/d1/documents/x']);
  });

  it('fails on a missing bucket with a message naming it, instead of reading as a missing file', async () => {
    const store = new S3BlobStore(s3.client, 'no-such-bucket', 'p');
    await assert.rejects(store.get('datasets/d1/documents/x'), /S3 GetObject s3:\/\/no-such-bucket\/p\/datasets\/d1\/documents\/x failed: NoSuchBucket \(HTTP 404\)/);
    await assert.rejects(store.put('k', Buffer.from('x')), /S3 PutObject s3:\/\/no-such-bucket\/p\/k failed: NoSuchBucket/);
    await assert.rejects(store.deletePrefix('datasets'), /NoSuchBucket/);
  });

  it('refuses keys that are empty, absolute or have empty, "." or ".." segments', async () => {
    const store = new S3BlobStore(s3.client, await newBucket());
    for (const key of ['', '/abs', 'a//b', 'a/./b', 'a/../b', 'trailing/']) {
      await assert.rejects(store.put(key, Buffer.from('x')), /invalid blob key/, JSON.stringify(key));
      await assert.rejects(store.get(key), /invalid blob key/, JSON.stringify(key));
    }
    await assert.rejects(store.deletePrefix(''), /invalid blob key/, 'an empty prefix would empty the bucket');
  });

  it('reports an unreachable endpoint as an error naming the object, after bounded retries', async () => {
    const port = await freePort();
    const client = s3ClientFor(
      { kind: 's3', bucket: 'b1k', prefix: '', region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } },
    );
    const started = Date.now();
    await assert.rejects(new S3BlobStore(client, 'b1k').get('k'), /S3 GetObject s3:\/\/b1k\/k failed after 3 attempts: .*ECONNREFUSED/);
    assert.ok(Date.now() - started < 30_000, 'the SDK gives up instead of retrying forever');
    client.destroy();
  });

  it('blobStoreFromConfig stores in the bucket for CAIRN_BLOBS=s3://bucket/prefix, and in the data dir by default', async () => {
    const bucket = await newBucket();
    const config = loadConfig({ CAIRN_DATA_DIR: os.tmpdir(), ...s3.env(bucket, 'from-config') });
    const store = blobStoreFromConfig(config);
    await store.put('a/b', Buffer.from('via config'));
    const object = await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: 'from-config/a/b' }));
    assert.equal(await object.Body!.transformToString(), 'via config', 'the object is in the bucket, below the prefix');
    assert.equal((await store.get('a/b'))!.toString(), 'via config');
    assert.equal(await store.get('a/missing'), undefined);

    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-blobs-'));
    try {
      const local = blobStoreFromConfig(loadConfig({ CAIRN_DATA_DIR: dataDir }));
      assert.ok(local instanceof FsBlobStore);
      await local.put('a/b', Buffer.from('on disk'));
      assert.equal(fs.readFileSync(path.join(dataDir, 'blobs', 'a', 'b'), 'utf8'), 'on disk');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
