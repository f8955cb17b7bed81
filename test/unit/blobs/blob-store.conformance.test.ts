import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BlobStore } from '../../../src/blobs/types.js';
import { FsBlobStore } from '../../../src/blobs/fs-blob-store.js';
import { S3BlobStore } from '../../../src/blobs/s3-blob-store.js';
import { startS3Server, type S3TestServer } from '../../support/s3-server.js';

/** Runs `fn` over `items`, at most `limit` at a time. */
async function inBatches<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += limit) results.push(...(await Promise.all(items.slice(i, i + limit).map(fn))));
  return results;
}

/** The BlobStore port's contract: every implementation passes the same cases. */
function conformance(newStore: () => Promise<BlobStore>) {
  let store: BlobStore;
  beforeEach(async () => {
    store = await newStore();
  });

  it('returns exactly the bytes that were put, binary and empty alike', async () => {
    const everyByte = Uint8Array.from({ length: 256 }, (_, i) => i);
    const random = crypto.randomBytes(200_000);
    await store.put('bytes/every-byte', everyByte);
    await store.put('bytes/random.bin', random);
    await store.put('bytes/empty', new Uint8Array());
    assert.ok((await store.get('bytes/every-byte'))!.equals(everyByte));
    assert.ok((await store.get('bytes/random.bin'))!.equals(random));
    const empty = await store.get('bytes/empty');
    assert.ok(Buffer.isBuffer(empty), 'an empty file is a Buffer, not missing');
    assert.equal(empty.length, 0);
  });

  it('replaces the bytes of a key that is put again', async () => {
    await store.put('over/doc', Buffer.from('first version, longer than the second'));
    await store.put('over/doc', Buffer.from('second'));
    assert.equal((await store.get('over/doc'))!.toString(), 'second');
  });

  it('answers undefined for a key that was never put, also below a folder that does not exist', async () => {
    assert.equal(await store.get('missing/nothing-here'), undefined);
    assert.equal(await store.get('no-such-folder/deeper/file'), undefined);
  });

  it('deletes a key, and deleting a missing key again succeeds', async () => {
    await store.put('del/one', Buffer.from('x'));
    await store.put('del/two', Buffer.from('y'));
    await store.delete('del/one');
    assert.equal(await store.get('del/one'), undefined);
    await store.delete('del/one');
    await store.delete('del/never-existed');
    assert.equal((await store.get('del/two'))!.toString(), 'y', 'the neighbour stays');
  });

  it('deletePrefix removes every key below the folder and nothing beside it', async () => {
    const gone = ['datasets/d1/documents/a', 'datasets/d1/images/b', 'datasets/d1/work/r-1/sections.json'];
    const kept = ['datasets/d10/documents/c', 'datasets/d1-other', 'datasets/d2/documents/d1'];
    for (const key of [...gone, ...kept]) await store.put(key, Buffer.from(key));
    await store.deletePrefix('datasets/d1');
    for (const key of gone) assert.equal(await store.get(key), undefined, `${key} deleted`);
    for (const key of kept) assert.equal((await store.get(key))!.toString(), key, `${key} kept`);
    await store.deletePrefix('datasets/d1');
    await store.deletePrefix('datasets/never-had-files');
  });

  it('deletePrefix removes more keys than one listing page holds (over 1000)', async function () {
    this.timeout(240_000);
    const keys = Array.from({ length: 1205 }, (_, i) => `many/${i % 3}/key-${i}`);
    await inBatches(keys, 32, (key) => store.put(key, Buffer.from(key)));
    await store.put('many-neighbour/keep', Buffer.from('keep'));
    await store.deletePrefix('many');
    const left = (await inBatches(keys, 32, (key) => store.get(key))).filter((v) => v !== undefined);
    assert.equal(left.length, 0, `${left.length} of ${keys.length} keys survived`);
    assert.equal((await store.get('many-neighbour/keep'))!.toString(), 'keep');
  });

  it('keeps keys with spaces, unicode and URL-special characters apart and intact', async () => {
    const keys = ['names/résumé café/naïve 文件 ☃.pdf', 'names/a b/c+d', 'names/a b/c d', 'names/100% & more=yes?#1', 'names/emoji 🪨.txt'];
    for (const key of keys) await store.put(key, Buffer.from(`content of ${key}`));
    for (const key of keys) assert.equal((await store.get(key))!.toString(), `content of ${key}`, key);
    await store.deletePrefix('names/a b');
    assert.equal(await store.get('names/a b/c+d'), undefined);
    assert.equal(await store.get('names/a b/c d'), undefined);
    assert.equal((await store.get('names/emoji 🪨.txt'))!.toString(), 'content of names/emoji 🪨.txt');
  });

  it('serves concurrent puts: distinct keys all land, one key ends with one whole version', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `concurrent/k${i}`);
    await Promise.all(keys.map((key) => store.put(key, Buffer.from(key.repeat(500)))));
    for (const key of keys) assert.equal((await store.get(key))!.toString(), key.repeat(500));
    const versions = Array.from({ length: 10 }, (_, i) => Buffer.alloc(50_000 + i, i + 1));
    await Promise.all(versions.map((v) => store.put('concurrent/same', v)));
    const final = (await store.get('concurrent/same'))!;
    assert.ok(versions.some((v) => v.equals(final)), 'the stored bytes are one of the versions, never a mix');
  });
}

describe('BlobStore port conformance', function () {
  this.timeout(120_000);

  describe('FsBlobStore', () => {
    let root: string;
    before(() => {
      root = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-blobs-'));
    });
    after(() => fs.rmSync(root, { recursive: true, force: true }));
    let n = 0;
    conformance(async () => new FsBlobStore(path.join(root, String(++n))));
  });

  describe('S3BlobStore (moto on loopback)', () => {
    let s3: S3TestServer;
    before(async () => {
      s3 = await startS3Server();
    });
    after(async () => s3?.stop());
    let n = 0;
    // A fresh bucket per case: no case sees another's keys. Keys sit below a prefix, as in production.
    conformance(async () => {
      const bucket = `conformance-${++n}`;
      await s3.createBucket(bucket);
      return new S3BlobStore(s3.client, bucket, 'tenant/blobs');
    });
  });
});
