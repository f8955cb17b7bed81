import { route, type RouteSpec } from '../routes.js';
import { buildOpenApi } from '../openapi.js';
import { safeJson } from '../envelope.js';
import { eventLoopLag, watchEventLoop } from '../../observability/event-loop.js';
import { withTimeout } from '../../time.js';
import type { CacheSize } from '../../index/chunks/chunk-index.js';
import { embeddingProcessStatus } from '../../models/builtin/host.js';

export interface HealthCheck {
  name: string;
  check(): Promise<void>;
  /** Details reported instead of 'ok' when the check passes (e.g. a model's state and memory). */
  details?(): Record<string, unknown>;
}

export const VERSION = 'v0.1.0';

/**
 * Health, version and the OpenAPI document. `routes` is the full table, for the OpenAPI document.
 * `temporalUiUrl`, when known, is reported by healthz as `temporal_ui` (the console links to it).
 * `caches`, when given, are reported by healthz beside the process's memory.
 */
export function systemRoutes(checks: HealthCheck[], routes: () => RouteSpec[], temporalUiUrl?: string, caches?: () => Promise<CacheSize[]>): RouteSpec[] {
  watchEventLoop();
  return [
    route({
      method: 'get', path: '/system/ping', tag: 'system', summary: 'Liveness: plain text pong', public: true, raw: true,
      responses: { '200': { description: 'The text pong', content: { 'text/plain': { const: 'pong' } } } },
      handler: ({ res }) => void res.type('text/plain').send('pong'),
    }),
    route({
      method: 'get', path: '/system/healthz', tag: 'system', summary: 'Database, chunk index, Temporal and built-in chat model status', public: true, raw: true,
      responses: {
        '200': { description: 'Every check passed (status ok)', content: { 'application/json': healthReport(checks, 'ok') } },
        '500': { description: 'A check failed (status nok; _meta says why)', content: { 'application/json': healthReport(checks, 'nok') } },
      },
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
        // How long work waits for this process's event loop, and its memory: the first signs of overload.
        body.event_loop = eventLoopLag();
        body.rss_mb = Math.round(process.memoryUsage.rss() / (1024 * 1024));
        // What holds that memory and is released or bounded (docs/operations.md, "Memory").
        if (caches) body.caches = await reportCaches(caches);
        const embedding = embeddingProcessStatus();
        body.builtin_embedding = { running: embedding.running, pending_requests: embedding.pending };
        body.status = healthy ? 'ok' : 'nok';
        if (temporalUiUrl) body.temporal_ui = temporalUiUrl;
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
      responses: { '200': { description: 'The OpenAPI 3.1 document', content: { 'application/json': { type: 'object', required: ['openapi', 'info', 'paths'] } } } },
      handler: ({ res }) => void res.json(buildOpenApi(routes(), VERSION)),
    }),
  ];
}

/** Each cache's entries (and bytes when known) by name; `unavailable` when the sizes could not be read in time. */
async function reportCaches(caches: () => Promise<CacheSize[]>): Promise<Record<string, { entries: number; bytes?: number }> | 'unavailable'> {
  try {
    const sizes = await withTimeout(caches(), 2000);
    return Object.fromEntries(sizes.map((c) => [c.name, c.bytes === undefined ? { entries: c.entries } : { entries: c.entries, bytes: c.bytes }]));
  } catch {
    return 'unavailable';
  }
}

/** healthz's body: `status`, one field per check ('ok', 'nok', or an object with its details), and other gauges. */
function healthReport(checks: HealthCheck[], status: 'ok' | 'nok') {
  const check = { anyOf: [{ enum: ['ok', 'nok'] }, { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } }] };
  return {
    type: 'object',
    required: ['status', ...checks.map((c) => c.name), ...(status === 'nok' ? ['_meta'] : [])],
    properties: {
      status: { const: status },
      ...Object.fromEntries(checks.map((c) => [c.name, check])),
      _meta: { type: 'object', description: 'The failed checks, each with its error', additionalProperties: { type: 'string' } },
    },
  };
}
