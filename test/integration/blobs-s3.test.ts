import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startHarness, type Harness } from './harness.js';
import { Api, eventually } from './client.js';
import { upload, waitForRun } from './documents-helpers.js';
import { makePdf, paragraphMarker } from '../fixtures/generate.js';
import { startS3Server, type S3TestServer } from '../support/s3-server.js';

/** The scale-out profile's file storage, as a user sees it: a Cairn and its worker process on CAIRN_BLOBS=s3://... */
describe('files on S3 (CAIRN_BLOBS=s3://bucket/prefix)', function () {
  this.timeout(240_000);
  const bucket = 'cairn-files';
  const prefix = 'it/blobs';
  let s3: S3TestServer;
  let h: Harness;
  let api: Api;

  const keysBelow = async (folder: string): Promise<string[]> => {
    const res = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/${folder}` }));
    return (res.Contents ?? []).map((o) => o.Key!).sort();
  };
  const download = (datasetId: string, documentId: string) =>
    fetch(`${h.url}/api/v1/datasets/${datasetId}/documents/${documentId}`, { headers: { Authorization: `Bearer ${h.adminKey}` } });

  before(async () => {
    s3 = await startS3Server();
    await s3.createBucket(bucket);
    h = await startHarness({ env: s3.env(bucket, prefix) });
    api = new Api(h.url, h.adminKey);
  });
  after(async () => {
    await h?.stop();
    await s3?.stop();
  });

  it('stores uploads in the bucket, the worker process parses them from there, and downloads are byte-exact', async () => {
    const ds = (await api.post('/datasets', { name: 's3-parse' })).body.data.id;
    const pdf = await makePdf({ pages: 2, paragraphsPerPage: 2 });
    const binary = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256));
    const res = await upload(api, ds, [
      { name: 'guide.pdf', bytes: pdf },
      { name: 'notes.txt', bytes: binary },
    ]);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [doc, notes] = res.body.data;
    assert.deepEqual(await keysBelow(`datasets/${ds}/documents/`), [`${prefix}/datasets/${ds}/documents/${doc.id}`, `${prefix}/datasets/${ds}/documents/${notes.id}`].sort());
    assert.ok(!fs.existsSync(path.join(h.config.dataDir, 'blobs')), 'nothing is written to the local blobs folder');

    assert.equal((await api.post(`/datasets/${ds}/chunks`, { document_ids: [doc.id] })).status, 200);
    const done = await waitForRun(api, ds, doc.id);
    assert.equal(done.run, 'DONE', done.progress_msg);
    assert.ok(done.chunk_count > 0);
    const chunks = await api.get(`/datasets/${ds}/documents/${doc.id}/chunks`);
    assert.ok(chunks.body.data.chunks.some((c: any) => c.content.includes(paragraphMarker(1, 1))), 'chunks carry the text of the PDF read from S3');
    await eventually(async () => (await keysBelow(`datasets/${ds}/work/`)).length === 0, 30_000);

    for (const [id, bytes] of [[doc.id, pdf], [notes.id, binary]] as const) {
      const got = await download(ds, id);
      assert.equal(got.status, 200);
      assert.ok(Buffer.from(await got.arrayBuffer()).equals(bytes), 'byte-exact');
    }
  });

  it('answers 404 with the error envelope when the object was removed from the bucket behind Cairn, and parsing it fails with the reason', async () => {
    const ds = (await api.post('/datasets', { name: 's3-gone' })).body.data.id;
    const doc = (await upload(api, ds, [{ name: 'gone.txt', bytes: Buffer.from('soon gone') }])).body.data[0];
    await s3.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${prefix}/datasets/${ds}/documents/${doc.id}` }));

    const res = await api.get(`/datasets/${ds}/documents/${doc.id}`);
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 404);
    assert.match(res.body.message, /missing from storage/);

    await api.post(`/datasets/${ds}/chunks`, { document_ids: [doc.id] });
    const failed = await waitForRun(api, ds, doc.id);
    assert.equal(failed.run, 'FAIL');
    assert.match(failed.progress_msg, /missing from storage/);
  });

  it("deleting a dataset removes its objects from the bucket, and no other dataset's", async () => {
    const gone = (await api.post('/datasets', { name: 's3-delete-me' })).body.data.id;
    const kept = (await api.post('/datasets', { name: 's3-keep-me' })).body.data.id;
    await upload(api, gone, [{ name: 'a.txt', bytes: Buffer.from('a') }, { name: 'b.txt', bytes: Buffer.from('b') }]);
    await upload(api, kept, [{ name: 'c.txt', bytes: Buffer.from('c') }]);
    assert.equal((await keysBelow(`datasets/${gone}/`)).length, 2);

    assert.equal((await api.delete('/datasets', { ids: [gone] })).status, 200);
    await eventually(async () => (await keysBelow(`datasets/${gone}/`)).length === 0, 60_000);
    assert.equal((await keysBelow(`datasets/${kept}/`)).length, 1);
  });
});
