import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request } from 'express';
import { pino } from 'pino';
import { createHttpApp } from '../../../src/api/app.js';
import { routeLabeller } from '../../../src/api/request-metrics.js';
import { route, type RouteSpec } from '../../../src/api/routes.js';
import type { AuthService, Principal } from '../../../src/services/auth.js';
import { processMetrics } from '../../../src/observability/metrics.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';

const principal = { userId: 'u', email: '', nickname: '', tenantId: 'u', teamTenants: [], isAdmin: false } as Principal;
const auth = { resolve: async (header?: string) => (header === 'Bearer good' ? principal : undefined) } as unknown as AuthService;

let hang: (() => void) | undefined;
const routes: RouteSpec[] = [
  route({ method: 'get', path: '/request-metrics/things/:thing_id', tag: 't', summary: 's', handler: ({ params }) => params.thing_id }),
  route({ method: 'post', path: '/request-metrics/things', tag: 't', summary: 's', body: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }, handler: () => 'created' }),
  route({
    method: 'get', path: '/request-metrics/busy', tag: 't', summary: 's', public: true,
    // Stands in for admission control: a route middleware that refuses before the handler runs.
    middleware: [(_req, res) => void res.status(503).json({ code: 503, message: 'busy' })],
    handler: () => 'never',
  }),
  route({
    method: 'get', path: '/request-metrics/slow', tag: 't', summary: 's', public: true, raw: true,
    handler: ({ res }) => new Promise<void>((resolve) => (hang = () => (res.end('late'), resolve()))),
  }),
  route({ method: 'get', path: '/request-metrics-root', root: true, tag: 't', summary: 's', public: true, handler: () => 'root' }),
];

async function counts() {
  const m = parsePrometheusText(await processMetrics.metrics());
  return (routePattern: string, method: string, status: string) => sampleValue(m, 'cairn_http_requests_total', { route: routePattern, method, status }) ?? 0;
}

describe('request metrics', () => {
  let server: http.Server;
  let base: string;

  before(async () => {
    server = http.createServer(createHttpApp(routes, auth, pino({ level: 'silent' }), 1_000_000));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const call = (path: string, init: RequestInit = {}) => fetch(base + path, { ...init, headers: { Authorization: 'Bearer good', ...(init.headers ?? {}) } });

  it('labels answers by route pattern, method and status, whoever gave them: handler, auth, validation, body parser, route middleware, 405', async () => {
    const before = await counts();
    assert.equal((await call('/api/v1/request-metrics/things/a')).status, 200);
    assert.equal((await call('/api/v1/Request-Metrics/things/b/')).status, 200, 'Express matches case-insensitively, with a trailing slash');
    assert.equal((await fetch(`${base}/api/v1/request-metrics/things/c`)).status, 401);
    const json = { 'Content-Type': 'application/json' };
    assert.equal((await call('/api/v1/request-metrics/things', { method: 'POST', headers: json, body: '{}' })).status, 400);
    assert.equal((await call('/api/v1/request-metrics/things', { method: 'POST', headers: json, body: '{"name":' })).status, 400);
    assert.equal((await call('/api/v1/request-metrics/busy')).status, 503);
    assert.equal((await call('/api/v1/request-metrics/things/a', { method: 'DELETE' })).status, 405);
    assert.equal((await call('/request-metrics-root')).status, 200);
    const after = await counts();
    const delta = (pattern: string, method: string, status: string) => after(pattern, method, status) - before(pattern, method, status);
    assert.equal(delta('/api/v1/request-metrics/things/:thing_id', 'GET', '200'), 2);
    assert.equal(delta('/api/v1/request-metrics/things/:thing_id', 'GET', '401'), 1);
    assert.equal(delta('/api/v1/request-metrics/things', 'POST', '400'), 2);
    assert.equal(delta('/api/v1/request-metrics/busy', 'GET', '503'), 1);
    assert.equal(delta('/api/v1/request-metrics/things/:thing_id', 'DELETE', '405'), 1);
    assert.equal(delta('/request-metrics-root', 'GET', '200'), 1);
  });

  it('puts every unknown path under one label', async () => {
    const before = await counts();
    for (const path of ['/api/v1/request-metrics/nothing-here', '/api/v1/no/such/thing', '/elsewhere']) assert.equal((await call(path)).status, 404);
    assert.equal((await counts())('unmatched', 'GET', '404') - before('unmatched', 'GET', '404'), 3);
  });

  it('records a request whose client left before the answer as 499', async () => {
    const before = await counts();
    await new Promise<void>((resolve) => {
      const req = http.get(`${base}/api/v1/request-metrics/slow`);
      req.on('error', () => resolve());
      setTimeout(() => req.destroy(), 100);
    });
    const pattern = '/api/v1/request-metrics/slow';
    for (let i = 0; i < 50 && (await counts())(pattern, 'GET', '499') === before(pattern, 'GET', '499'); i++) await new Promise((r) => setTimeout(r, 20));
    hang?.();
    assert.equal((await counts())(pattern, 'GET', '499') - before(pattern, 'GET', '499'), 1);
    assert.equal((await counts())(pattern, 'GET', '200') - before(pattern, 'GET', '200'), 0, 'counted once, as the client saw it');
  });

  it('finds the pattern of a request answered before routing from its path, as Express would match it', () => {
    const label = routeLabeller(routes);
    const req = (originalUrl: string) => ({ originalUrl }) as Request;
    assert.equal(label(req('/api/v1/request-metrics/things/x1?verbose=1')), '/api/v1/request-metrics/things/:thing_id');
    assert.equal(label(req('/API/V1/request-metrics/things/')), '/api/v1/request-metrics/things');
    assert.equal(label(req('/request-metrics-root')), '/request-metrics-root');
    assert.equal(label(req('/api/v1/request-metrics/things/x1/more')), 'unmatched');
    assert.equal(label(req('/api/v1/request-metricsXthings')), 'unmatched');
    assert.equal(label({ originalUrl: '/whatever', route: { path: '/dispatched/:id' } } as unknown as Request), '/dispatched/:id');
  });
});
