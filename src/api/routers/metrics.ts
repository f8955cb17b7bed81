import type { Logger } from 'pino';
import { forbidden } from '../../errors.js';
import type { ChunkIndex } from '../../index/chunks/chunk-index.js';
import { watchEventLoop } from '../../observability/event-loop.js';
import { cacheSizes } from '../../observability/caches.js';
import { METRICS_CONTENT_TYPE, renderMetrics } from '../../observability/metrics.js';
import { serviceMetrics } from '../../observability/service-metrics.js';
import type { RunState } from '../../store/documents.js';
import { route, type RouteSpec } from '../routes.js';

export interface MetricsDeps {
  documents: { countByRun(): Promise<Record<RunState, number>> };
  workflows: { countAgentRuns(): Promise<Map<string, number>> };
  /** Memory extraction tasks by state (one per raw message added to a memory). */
  memories: { countTasksByState(): Promise<Map<string, number>> };
  index: ChunkIndex;
  /** The model clients cache (services/model-clients.ts). */
  modelClients: { readonly size: number };
  log: Logger;
}

/**
 * GET /metrics in the Prometheus text format, for admin users (an admin's API key as the scraper's bearer
 * token): the numbers say how busy the whole installation is, which is no tenant's business.
 */
export function metricsRoutes(deps: MetricsDeps): RouteSpec[] {
  watchEventLoop();
  const instance = serviceMetrics(
    {
      documentsByRun: () => deps.documents.countByRun(),
      agentRunsByStatus: () => deps.workflows.countAgentRuns(),
      memoryExtractionsByStatus: () => deps.memories.countTasksByState(),
      caches: () => cacheSizes(deps),
    },
    (source, err) => deps.log.warn({ err, source }, 'metrics: a source did not answer; its metrics are left out of this scrape'),
  );
  return [
    route({
      method: 'get',
      path: '/metrics',
      root: true,
      tag: 'system',
      summary: 'Prometheus metrics (text exposition format 0.0.4): requests, model calls, documents, agent runs and memory extractions by state, caches, memory, event loop. Admin users only (403 otherwise).',
      raw: true,
      produces: { contentType: METRICS_CONTENT_TYPE, description: 'The Prometheus text exposition format, version 0.0.4 (see docs/metrics.md)' },
      handler: async ({ principal, res }) => {
        if (!principal.isAdmin) throw forbidden('Forbidden: /metrics is only for admin users (scrape with an API key of an admin user)');
        res.status(200).set('Content-Type', METRICS_CONTENT_TYPE).send(await renderMetrics([instance]));
      },
    }),
  ];
}
