import assert from 'node:assert/strict';
import { Api, newUser } from './client.js';
import { upload, waitForRun } from './documents-helpers.js';
import { fakeJpeg, pageTreePdf } from '../fixtures/page-tree-pdf.js';

/** Twenty small documents of one tenant. */
const smallFiles = (prefix: string) => Array.from({ length: 20 }, (_, i) => ({ name: `${prefix}-${i}.txt`, bytes: Buffer.from(`Note ${i} of ${prefix}: the trail crosses the river at bend ${i}.`) }));

async function dataset(api: Api, name: string): Promise<string> {
  return (await api.post('/datasets', { name })).body.data.id;
}

/** Uploads the files, starts their parse, and returns their ids. */
async function startParsing(api: Api, datasetId: string, files: { name: string; bytes: Uint8Array }[]): Promise<string[]> {
  const uploaded = await upload(api, datasetId, files);
  assert.equal(uploaded.status, 200, JSON.stringify(uploaded.body));
  const ids = uploaded.body.data.map((d: { id: string }) => d.id);
  assert.equal((await api.post(`/datasets/${datasetId}/chunks`, { document_ids: ids })).status, 200);
  return ids;
}

describe('fair parsing across tenants', function () {
  this.timeout(240_000);

  it("another tenant's 20 small documents finish in about the time they take alone while a 300,000-page PDF is queued first, and the PDF fails on its page limit", async () => {
    const a = (await newUser('fair-a')).api;
    const b = (await newUser('fair-b')).api;
    const aData = await dataset(a, 'big');
    const bAlone = await dataset(b, 'alone');
    const bTogether = await dataset(b, 'together');
    const tree = pageTreePdf(300_000);

    let started = Date.now();
    const alone = await startParsing(b, bAlone, smallFiles('alone'));
    for (const id of alone) assert.equal((await waitForRun(b, bAlone, id)).run, 'DONE');
    const aloneMs = Date.now() - started;

    started = Date.now();
    const [pdf] = await startParsing(a, aData, [{ name: 'tree.pdf', bytes: tree }]);
    const together = await startParsing(b, bTogether, smallFiles('together'));
    for (const id of together) assert.equal((await waitForRun(b, bTogether, id)).run, 'DONE');
    const togetherMs = Date.now() - started;
    const failed = await waitForRun(a, aData, pdf!);
    const pdfMs = Date.now() - started;

    assert.equal(failed.run, 'FAIL');
    assert.match(failed.progress_msg, /tree\.pdf was refused: it has 300000 pages, more than the limit of 10000 pages \(CAIRN_PARSE_MAX_PAGES\)/);
    assert.ok(togetherMs <= aloneMs * 2 + 5000, `alone ${aloneMs} ms, beside the PDF ${togetherMs} ms`);
    assert.ok(pdfMs < 60_000, `the PDF failed after ${pdfMs} ms`);
  });

  it('a JPEG of random data behind valid magic bytes fails at once, naming the pixel limit', async () => {
    const { api } = await newUser('fake-jpeg');
    const ds = await dataset(api, 'images');
    const started = Date.now();
    const [id] = await startParsing(api, ds, [{ name: 'fake.jpg', bytes: fakeJpeg() }]);
    const doc = await waitForRun(api, ds, id!);
    assert.equal(doc.run, 'FAIL');
    assert.match(doc.progress_msg, /fake\.jpg was refused: its image header gives no size.*\(CAIRN_PARSE_IMAGE_MAX_MEGAPIXELS\)/);
    assert.ok(Date.now() - started < 60_000, `failed after ${Date.now() - started} ms`);
  });
});
