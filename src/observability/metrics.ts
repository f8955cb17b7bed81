import { Counter, Gauge, Registry } from 'prom-client';
import { eventLoopLag } from './event-loop.js';

/**
 * Metrics of this process, whichever Cairn instance serves them: HTTP requests (http-metrics.ts), model
 * calls (models/call-metrics.ts), memory, CPU and event-loop lag. Process-wide because the code that
 * records them (model clients, the request middleware) is shared by everything the process runs;
 * each instance adds its own registry for what it owns (service-metrics.ts).
 */
export const processMetrics = new Registry();

/** `text/plain; version=0.0.4; charset=utf-8`, the Prometheus text exposition format. */
export const METRICS_CONTENT_TYPE = processMetrics.contentType;

/** The exposition text of the process metrics and the given instance registries (metric names must not repeat). */
export async function renderMetrics(registries: Registry[]): Promise<string> {
  return Registry.merge([processMetrics, ...registries]).metrics();
}

const registers = [processMetrics];

// Names follow prom-client's default process metrics, so stock Node.js dashboards read them.
new Gauge({
  name: 'process_resident_memory_bytes',
  help: 'Resident set size of the process in bytes.',
  registers,
  collect() {
    this.set(process.memoryUsage.rss());
  },
});

new Gauge({
  name: 'nodejs_heap_size_used_bytes',
  help: 'V8 heap in use, in bytes.',
  registers,
  collect() {
    this.set(process.memoryUsage().heapUsed);
  },
});

new Gauge({
  name: 'nodejs_heap_size_total_bytes',
  help: 'V8 heap allocated, in bytes.',
  registers,
  collect() {
    this.set(process.memoryUsage().heapTotal);
  },
});

new Gauge({
  name: 'nodejs_external_memory_bytes',
  help: 'Memory of C++ objects bound to JavaScript objects (buffers, native modules), in bytes.',
  registers,
  collect() {
    this.set(process.memoryUsage().external);
  },
});

let cpuSeen = 0;
new Counter({
  name: 'process_cpu_seconds_total',
  help: 'User and system CPU time of the process (all threads), in seconds.',
  registers,
  collect() {
    const { user, system } = process.cpuUsage();
    const total = (user + system) / 1e6;
    if (total > cpuSeen) this.inc(total - cpuSeen);
    cpuSeen = Math.max(cpuSeen, total);
  },
});

new Gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch, in seconds.', registers }).set(
  Math.round((Date.now() - process.uptime() * 1000) / 1000),
);

for (const stat of ['mean', 'p99', 'max'] as const) {
  new Gauge({
    name: `nodejs_eventloop_lag_${stat}_seconds`,
    help: `Event-loop delay (${stat}) over the last 5 to 10 seconds, the figure /system/healthz reports.`,
    registers,
    collect() {
      this.set(eventLoopLag()[`${stat}_ms`] / 1000);
    },
  });
}
