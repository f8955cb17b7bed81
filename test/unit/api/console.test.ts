import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { serveConsole } from '../../../src/api/console.js';

/** An app like Cairn's: an API route, the console, then the API's JSON 404. */
async function serve(dir: string) {
  const app = express();
  app.get('/api/v1/system/ping', (_req, res) => void res.type('text/plain').send('pong'));
  serveConsole(app, dir);
  app.use((req, res) => void res.status(404).json({ code: 404, message: `Not Found: ${req.path}` }));
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { base, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('console serving', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-console-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('serves index.html at / and at any console path, with a content security policy', async () => {
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>console</title>');
    const s = await serve(dir);
    try {
      for (const p of ['/', '/datasets/abc', '/agents/x/y?z=1']) {
        const res = await fetch(s.base + p, { headers: { Accept: 'text/html' } });
        assert.equal(res.status, 200, p);
        assert.match(await res.text(), /<title>console<\/title>/);
        assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self'/);
      }
    } finally {
      await s.close();
    }
  });

  it('serves hashed assets as immutable files', async () => {
    fs.writeFileSync(path.join(dir, 'index.html'), 'x');
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    const s = await serve(dir);
    try {
      const res = await fetch(`${s.base}/assets/index-abc123.js`);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'console.log(1)');
      assert.match(res.headers.get('cache-control') ?? '', /immutable/);
    } finally {
      await s.close();
    }
  });

  it('leaves the API alone: routes answer, unknown API paths and non-HTML requests stay JSON 404s', async () => {
    fs.writeFileSync(path.join(dir, 'index.html'), 'x');
    const s = await serve(dir);
    try {
      assert.equal(await (await fetch(`${s.base}/api/v1/system/ping`)).text(), 'pong');
      const missing = await fetch(`${s.base}/api/v1/nothing`, { headers: { Accept: 'text/html' } });
      assert.equal(missing.status, 404);
      assert.equal((await missing.json()).code, 404);
      const json = await fetch(`${s.base}/whatever`, { headers: { Accept: 'application/json' } });
      assert.equal(json.status, 404);
      const post = await fetch(`${s.base}/datasets`, { method: 'POST', headers: { Accept: 'text/html' } });
      assert.equal(post.status, 404);
    } finally {
      await s.close();
    }
  });

  it('without a build, / explains how to build the console instead of failing', async () => {
    const s = await serve(path.join(dir, 'missing'));
    try {
      const res = await fetch(`${s.base}/`, { headers: { Accept: 'text/html' } });
      assert.equal(res.status, 503);
      assert.match(await res.text(), /make console/);
    } finally {
      await s.close();
    }
  });
});
