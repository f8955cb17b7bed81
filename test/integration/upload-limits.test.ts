import assert from 'node:assert/strict';
import { newUser, type Api } from './client.js';

/**
 * A multipart part built by hand, its name as RFC 5987 `filename*` so every character (NUL too) reaches
 * the server (a raw NUL in a part header is refused by the multipart parser: 400 Malformed part header).
 */
function part(boundary: string, filename: string, content: string): Buffer {
  return Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''${encodeURIComponent(filename)}\r\nContent-Type: text/plain\r\n\r\n${content}\r\n`);
}

function post(api: Api, path: string, boundary: string, body: BodyInit, extra: RequestInit = {}) {
  return fetch(new URL(`/api/v1${path}`, api.url), {
    method: 'POST',
    headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
    body,
    ...extra,
  });
}

describe('uploads: a body far over the limit, and hostile file names', function () {
  this.timeout(90_000);
  let api: Api;
  let datasetId: string;

  before(async () => {
    api = (await newUser('uploads')).api;
    datasetId = (await api.post('/datasets', { name: 'uploads' })).body.data.id;
  });

  it('a 200 MB upload is refused with 413 naming the limit and CAIRN_UPLOAD_LIMIT, without the server holding the whole body', async () => {
    const boundary = 'cairn-big-upload';
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    let sent = 0;
    const total = 200;
    // Generated as it is sent: the test never holds the 200 MB either.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`)));
      },
      pull(controller) {
        if (sent === total) {
          controller.enqueue(new Uint8Array(Buffer.from(`\r\n--${boundary}--\r\n`)));
          controller.close();
          return;
        }
        sent++;
        controller.enqueue(new Uint8Array(chunk));
      },
    });
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    try {
      const res = await post(api, `/datasets/${datasetId}/documents`, boundary, body, { duplex: 'half' } as RequestInit);
      const answer = (await res.json()) as { code: number; message: string };
      assert.equal(res.status, 413, JSON.stringify(answer));
      assert.equal(answer.code, 413);
      assert.match(answer.message, /^File too large: the limit is 104857600 bytes per file \(setting CAIRN_UPLOAD_LIMIT\)$/);
    } finally {
      clearInterval(sampler);
    }
    const grewMb = (peak - before) / 2 ** 20;
    // The API runs in this process: its growth is the server's. Multer holds at most the limit (100 MB) of one file.
    console.log(`      rss growth during the 200 MB upload: ${grewMb.toFixed(0)} MB (sent ${sent} MB)`);
    assert.ok(grewMb < 200, `grew ${grewMb.toFixed(0)} MB`);
    const docs = (await api.get(`/datasets/${datasetId}/documents`)).body.data.docs;
    assert.equal(docs.length, 0, 'nothing was stored');
  });

  it('file names with ../, NUL, U+202E and other control characters are stored as safe names, and downloads send a safe Content-Disposition', async () => {
    const boundary = 'cairn-names';
    const names = ['../../etc/passwd.txt', 'nul\u0000byte.txt', 'report\u202Etxt.md', 'tab\tand\u0007bell.txt'];
    const body = Buffer.concat([...names.map((n, i) => part(boundary, n, `file ${i}`)), Buffer.from(`--${boundary}--\r\n`)]);
    const res = await post(api, `/datasets/${datasetId}/documents`, boundary, new Uint8Array(body));
    const answer = (await res.json()) as { code: number; data: { id: string; name: string }[] };
    assert.equal(res.status, 200, JSON.stringify(answer));
    assert.deepEqual(answer.data.map((d) => d.name), ['passwd.txt', 'nulbyte.txt', 'reporttxt.md', 'tabandbell.txt']);
    for (const doc of answer.data) {
      const file = await fetch(new URL(`/api/v1/datasets/${datasetId}/documents/${doc.id}`, api.url), { headers: { Authorization: `Bearer ${api.key}` } });
      assert.equal(file.status, 200);
      const disposition = file.headers.get('content-disposition')!;
      assert.equal(disposition, `attachment; filename="${doc.name}"; filename*=UTF-8''${encodeURIComponent(doc.name)}`);
      assert.match(await file.text(), /^file \d$/);
    }
  });
});
