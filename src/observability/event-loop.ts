import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface EventLoopLag {
  mean_ms: number;
  p99_ms: number;
  max_ms: number;
}

/** Readers (healthz, /metrics) see the last full window, so one reader never resets another's view. */
const WINDOW_MS = 5000;

let histogram: IntervalHistogram | undefined;
let lastWindow: EventLoopLag = { mean_ms: 0, p99_ms: 0, max_ms: 0 };

function summary(h: IntervalHistogram): EventLoopLag {
  const ms = (ns: number) => Math.round((Number.isFinite(ns) ? ns : 0) / 1e4) / 100;
  return { mean_ms: ms(h.mean), p99_ms: ms(h.percentile(99)), max_ms: ms(h.max) };
}

/** Starts measuring this process's event-loop delay (idempotent). */
export function watchEventLoop(): void {
  if (histogram) return;
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  histogram = h;
  setInterval(() => {
    lastWindow = summary(h);
    h.reset();
  }, WINDOW_MS).unref();
}

/** Event-loop delay over the last few seconds: the worse of the last full window and the current one. */
export function eventLoopLag(): EventLoopLag {
  watchEventLoop();
  const current = summary(histogram!);
  return {
    mean_ms: Math.max(lastWindow.mean_ms, current.mean_ms),
    p99_ms: Math.max(lastWindow.p99_ms, current.p99_ms),
    max_ms: Math.max(lastWindow.max_ms, current.max_ms),
  };
}
