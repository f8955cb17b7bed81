import { Counter } from 'prom-client';
import { processMetrics } from './metrics.js';

const starts = new Counter({
  name: 'cairn_agent_turn_starts_total',
  help: 'Agent turns started, by how their first workflow task reached a worker: "eager" (handed back with the start to the worker in this process) or "queued" (through the task queue).',
  labelNames: ['start'] as const,
  registers: [processMetrics],
});

/** Counts a started agent turn; `eager` when Temporal handed its first workflow task back with the start. */
export function recordAgentTurnStart(eager: boolean): void {
  starts.inc({ start: eager ? 'eager' : 'queued' });
}
