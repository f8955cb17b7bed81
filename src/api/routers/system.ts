import { route, type RouteSpec } from '../routes.js';
import { buildOpenApi } from '../openapi.js';
import { safeJson } from '../envelope.js';

export interface HealthCheck {
  name: string;
  check(): Promise<void>;
  /** Details reported instead of 'ok' when the check passes (e.g. a model's state and memory). */
  details?(): Record<string, unknown>;
}

export const VERSION = 'v0.1.0';

/** Health, version and the OpenAPI document. `routes` is the full table, for the OpenAPI document. */
export function systemRoutes(checks: HealthCheck[], routes: () => RouteSpec[]): RouteSpec[] {
  return [
    route({
      method: 'get', path: '/system/ping', tag: 'system', summary: 'Liveness: plain text pong', public: true, raw: true,
      handler: ({ res }) => void res.type('text/plain').send('pong'),
    }),
    route({
      method: 'get', path: '/system/healthz', tag: 'system', summary: 'Database, chunk index, Temporal and built-in chat model status', public: true, raw: true,
      handler: async ({ res }) => {
        const body: Record<string, unknown> = {};
        const failures: Record<string, string> = {};
        await Promise.all(
          checks.map(async (c) => {
            try {
              await withTimeout(c.check(), 3000);
              body[c.name] = c.details ? { status: 'ok', ...c.details() } : 'ok';
            } catch (err) {
              body[c.name] = 'nok';
              failures[c.name] = (err as Error).message;
            }
          }),
        );
        const healthy = Object.keys(failures).length === 0;
        body.status = healthy ? 'ok' : 'nok';
        if (!healthy) body._meta = failures;
        res.status(healthy ? 200 : 500).type('application/json').send(safeJson(body));
      },
    }),
    route({
      method: 'get', path: '/system/version', tag: 'system', summary: 'Service version',
      handler: () => VERSION,
    }),
    route({
      method: 'get', path: '/openapi.json', tag: 'system', summary: 'This OpenAPI 3.1 document', public: true, raw: true,
      handler: ({ res }) => void res.json(buildOpenApi(routes(), VERSION)),
    }),
  ];
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    );
  });
}
