import assert from 'node:assert/strict';
import { createCanvas } from '@napi-rs/canvas';
import { Api, newUser } from './client.js';
import { upload, waitForRun } from './documents-helpers.js';

function canvas(width: number, height: number, colour: string) {
  const c = createCanvas(width, height);
  const ctx = c.getContext('2d');
  ctx.fillStyle = colour;
  ctx.fillRect(0, 0, width, height);
  return c;
}
const png = (w: number, h: number, colour: string) => canvas(w, h, colour).toBuffer('image/png');

/** GET without the JSON client's parsing: the bytes, the status and the headers. */
async function fetchRaw(api: Api, path: string) {
  const res = await fetch(`${api.url}/api/v1${path}`, { headers: api.key ? { Authorization: `Bearer ${api.key}` } : {} });
  const bytes = Buffer.from(await res.arrayBuffer());
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, type, bytes, headers: res.headers, body: type.includes('json') ? JSON.parse(bytes.toString()) : undefined };
}

describe('document images, artifacts and one dataset over HTTP', function () {
  this.timeout(120_000);
  let api: Api;
  let ds: string;
  let textDoc: string;

  before(async () => {
    api = (await newUser('docimg')).api;
    ds = (await api.post('/datasets', { name: 'images' })).body.data.id;
    textDoc = (await upload(api, ds, [{ name: 'notes.txt', bytes: Buffer.from('A note about cairns.') }])).body.data[0].id;
  });

  describe('GET /documents/images/{image_id}', () => {
    it("serves a chunk's image by its image_id with the image's own content type", async () => {
      const base = `/datasets/${ds}/documents/${textDoc}/chunks`;
      const webp = (await canvas(24, 16, '#00aa00').encode('webp')).toString('base64');
      const chunk = (await api.post(base, { content: 'Green cairn photo.', image_base64: webp })).body.data.chunk;
      assert.equal(chunk.image_id, `${ds}-${chunk.id}`);
      const res = await fetchRaw(api, `/documents/images/${chunk.image_id}`);
      assert.equal(res.status, 200);
      assert.equal(res.type, 'image/webp');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.bytes.subarray(8, 12).toString('latin1'), 'WEBP');
    });

    it('serves the images a parse keeps (an HTML picture), as the chunks and retrieval name them', async () => {
      const picture = png(30, 20, '#ff0000');
      const html = `<html><body><h1>Ridge</h1><p>The ridge path is marked by basalt cairns.</p>` +
        `<img alt="basalt cairn on the ridge" src="data:image/png;base64,${picture.toString('base64')}"></body></html>`;
      const doc = (await upload(api, ds, [{ name: 'ridge.html', bytes: Buffer.from(html) }])).body.data[0].id;
      assert.equal((await api.post(`/datasets/${ds}/chunks`, { document_ids: [doc] })).status, 200);
      assert.equal((await waitForRun(api, ds, doc)).run, 'DONE');
      const chunks = (await api.get(`/datasets/${ds}/documents/${doc}/chunks`)).body.data.chunks;
      const withImage = chunks.find((c: any) => c.image_id);
      assert.ok(withImage, `a chunk with an image: ${JSON.stringify(chunks)}`);
      const res = await fetchRaw(api, `/documents/images/${withImage.image_id}`);
      assert.equal(res.status, 200);
      assert.equal(res.type, 'image/png');
      assert.deepEqual(res.bytes, picture);
    });

    it("serves an image document's file by {dataset_id}-{document_id}; another document is a 404 saying it is no image", async () => {
      const picture = png(10, 10, '#0000ff');
      const doc = (await upload(api, ds, [{ name: 'photo.png', bytes: picture }])).body.data[0].id;
      const res = await fetchRaw(api, `/documents/images/${ds}-${doc}`);
      assert.equal(res.status, 200);
      assert.equal(res.type, 'image/png');
      assert.deepEqual(res.bytes, picture);
      const text = await fetchRaw(api, `/documents/images/${ds}-${textDoc}`);
      assert.equal(text.status, 404);
      assert.equal(text.body.code, 404);
      assert.match(text.body.message, /document notes\.txt is not an image/);
    });

    it('answers 404 naming the id for a malformed id, an unknown key or a path; 404 for an unknown dataset', async () => {
      for (const id of ['nohyphen', `${ds}-`, `-${'a'.repeat(32)}`]) {
        const res = await fetchRaw(api, `/documents/images/${id}`);
        assert.equal(res.status, 404, id);
        assert.match(res.body.message, /an image id is \{dataset_id\}-\{chunk_id\}/);
      }
      const unknown = await fetchRaw(api, `/documents/images/${ds}-${'e'.repeat(32)}`);
      assert.equal(unknown.status, 404);
      assert.match(unknown.body.message, new RegExp(`dataset ${ds} has no chunk image or image document with id 'e{32}'`));
      // Only the first hyphen separates the dataset: the rest is one key, and a key that is not an id names nothing.
      const hyphens = await fetchRaw(api, `/documents/images/${ds}-page-1.png`);
      assert.equal(hyphens.status, 404);
      assert.match(hyphens.body.message, /with id 'page-1\.png'/);
      const traversal = await fetchRaw(api, `/documents/images/${ds}-..%2F..%2F${ds}%2Fimages%2Fx`);
      assert.equal(traversal.status, 404);
      const otherDataset = await fetchRaw(api, `/documents/images/${'f'.repeat(32)}-${'e'.repeat(32)}`);
      assert.equal(otherDataset.status, 404);
      assert.equal(otherDataset.body.code, 404);
    });

    it("hides another tenant's images (404), needs credentials (401) and accepts the owner's beta share token", async () => {
      const base = `/datasets/${ds}/documents/${textDoc}/chunks`;
      const chunk = (await api.post(base, { content: 'Red cairn.', image_base64: png(8, 8, '#ff0000').toString('base64') })).body.data.chunk;
      const stranger = (await newUser('docimg-stranger')).api;
      const hidden = await fetchRaw(stranger, `/documents/images/${chunk.image_id}`);
      assert.equal(hidden.status, 404);
      assert.equal((await fetchRaw(new Api(api.url), `/documents/images/${chunk.image_id}`)).status, 401);
      const beta = (await api.get('/system/tokens')).body.data[0].beta;
      const shared = await fetchRaw(new Api(api.url, beta), `/documents/images/${chunk.image_id}`);
      assert.equal(shared.status, 200);
      assert.equal(shared.type, 'image/png');
      assert.equal((await new Api(api.url, beta).get(`/datasets/${ds}`)).status, 401, 'the share token opens images, not datasets');
    });
  });

  describe('GET /documents/artifact/{filename}', () => {
    it('says that Cairn keeps no sandbox artifacts (404) for a valid name', async () => {
      const res = await api.get('/documents/artifact/0123456789abcdef0123456789abcdef.png', { session_id: 'a'.repeat(32) });
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 404);
      assert.match(res.body.message, /Artifact '0123456789abcdef0123456789abcdef\.png' not found: Cairn's CodeExec sandbox keeps no files/);
    });

    it('refuses a name with a path or a type RAGFlow does not serve (400), and a caller without credentials (401)', async () => {
      const path = await api.get(`/documents/artifact/${encodeURIComponent('..\\secret.png')}`);
      assert.equal(path.status, 400);
      assert.match(path.body.message, /Invalid filename/);
      const type = await api.get('/documents/artifact/script.exe');
      assert.equal(type.status, 400);
      assert.match(type.body.message, /Invalid file type: 'script\.exe'/);
      const none = await api.get('/documents/artifact/noextension');
      assert.equal(none.status, 400);
      assert.equal((await new Api(api.url).get('/documents/artifact/a.png')).status, 401);
    });
  });

  describe('GET /datasets/{id}', () => {
    it('carries size (bytes of its files) and connectors, as RAGFlow; the listing stays as it was', async () => {
      const own = (await api.post('/datasets', { name: 'sized' })).body.data.id;
      const empty = (await api.get(`/datasets/${own}`)).body.data;
      assert.equal(empty.size, 0);
      assert.deepEqual(empty.connectors, []);
      const a = Buffer.from('first file');
      const b = png(12, 12, '#123456');
      await upload(api, own, [{ name: 'a.txt', bytes: a }, { name: 'b.png', bytes: b }]);
      const res = await api.get(`/datasets/${own}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.size, a.byteLength + b.byteLength);
      assert.equal(res.body.data.document_count, 2);
      assert.deepEqual(res.body.data.connectors, []);
      assert.equal(res.body.data.unstart_count, 2);
      const listed = (await api.get('/datasets', { id: own })).body.data[0];
      assert.equal(listed.size, undefined);
      const stranger = (await newUser('docimg-other')).api;
      assert.equal((await stranger.get(`/datasets/${own}`)).status, 404);
    });
  });
});
