/**
 * Workflows of bench/ingest/temporal-cost.ts: the shapes whose cost on the Temporal dev server it measures,
 * with activities that do nothing but (optionally) wait and heartbeat.
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { CostActivities } from './temporal-cost.js';

/** Started and completed, nothing else: the per-workflow cost alone. */
export async function emptyWorkflow(): Promise<number> {
  return 1;
}

export interface StepsInput {
  /** How long each activity waits (heartbeating), ms. */
  stepMs: number;
  heartbeatTimeout?: string;
  /** The first step on `<queue>-extract`, as parseDocument's extraction. */
  extractQueue: boolean;
}

/** parseDocument's shape: one activity on the extraction queue, one on the workflow's own queue. */
export async function twoStepsWorkflow(input: StepsInput): Promise<number> {
  const options = { startToCloseTimeout: '10 minutes', ...(input.heartbeatTimeout ? { heartbeatTimeout: input.heartbeatTimeout } : {}) };
  const main = proxyActivities<CostActivities>(options);
  const first = input.extractQueue ? proxyActivities<CostActivities>({ ...options, taskQueue: `${workflowInfo().taskQueue}-extract` }) : main;
  await first.step(input.stepMs);
  await main.step(input.stepMs);
  return 2;
}
