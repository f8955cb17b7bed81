import { Counter, Histogram } from 'prom-client';
import { processMetrics } from './metrics.js';

/** The `route` label of requests that matched no route: unknown paths must not each make a series. */
export const UNMATCHED_ROUTE = 'unmatched';

/** The status recorded when the client went away before the answer was complete (nginx's convention). */
export const CLIENT_CLOSED = 499;

const requests = new Counter({
  name: 'cairn_http_requests_total',
  help: 'HTTP requests answered, by route pattern, method and status code.',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [processMetrics],
});

const durations = new Histogram({
  name: 'cairn_http_request_duration_seconds',
  help: 'Time from a request arriving to its answer finishing (the whole stream, for streamed answers), by route pattern, method and status class.',
  labelNames: ['route', 'method', 'status_class'] as const,
  // Up to a minute: streamed chat and agent answers take that long.
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [processMetrics],
});

export interface AnsweredRequest {
  /** The route pattern, e.g. `/api/v1/datasets/:dataset_id`, or UNMATCHED_ROUTE. */
  route: string;
  method: string;
  status: number;
  seconds: number;
}

export function recordRequest({ route, method, status, seconds }: AnsweredRequest): void {
  requests.inc({ route, method, status: String(status) });
  durations.observe({ route, method, status_class: `${Math.floor(status / 100)}xx` }, seconds);
}
