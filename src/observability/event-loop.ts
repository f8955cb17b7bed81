import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

let histogram: IntervalHistogram | undefined;

/** Starts measuring this process's event-loop delay (idempotent); healthz and /metrics read it. */
export function watchEventLoop(): void {
  if (histogram) return;
  histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
}

export interface EventLoopLag {
  /** Milliseconds since the last reset. */
  mean_ms: number;
  p99_ms: number;
  max_ms: number;
}

/** Event-loop delay since the previous call (each call starts a new window). */
export function eventLoopLag(): EventLoopLag {
  watchEventLoop();
  const h = histogram!;
  const ms = (ns: number) => Math.round((Number.isFinite(ns) ? ns : 0) / 1e4) / 100;
  const lag = { mean_ms: ms(h.mean), p99_ms: ms(h.percentile(99)), max_ms: ms(h.max) };
  h.reset();
  return lag;
}
