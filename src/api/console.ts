import fs from 'node:fs';
import path from 'node:path';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';

/**
 * The web console's own policy: only this origin's scripts; inline styles are allowed because the
 * canvas library positions nodes with style attributes.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Cairn</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; line-height: 1.5">
<h1>Cairn is running</h1>
<p>The web console is not built yet. Build it with <code>make console</code> (<code>make run</code> builds it too), then reload this page.</p>
<p>The HTTP API is at <a href="/api/v1/openapi.json">/api/v1</a>.</p>
</body></html>`;

/**
 * Serves the built console (web/ built into `dir`) at `/`: its files, and index.html for every other
 * GET that wants HTML outside /api, so the console's own paths load on reload. Mount it after the
 * API routes and before the 404 handler. Without a build, `/` says how to make one.
 */
export function serveConsole(app: Express, dir: string): void {
  const index = path.join(dir, 'index.html');
  app.use(
    express.static(dir, {
      index: false,
      setHeaders: (res, file) => {
        // Vite puts a content hash in every asset name: a changed file gets a new name.
        if (file.includes(`${path.sep}assets${path.sep}`)) res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      },
    }),
  );
  app.use((req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || req.path === '/api' || req.path.startsWith('/api/') || req.path === '/mcp' || req.path.startsWith('/mcp/')) return next();
    if (!req.accepts('html')) return next();
    res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    res.setHeader('Cache-Control', 'no-cache');
    if (!fs.existsSync(index)) return void res.status(503).type('html').send(NOT_BUILT);
    res.sendFile(index);
  });
}
