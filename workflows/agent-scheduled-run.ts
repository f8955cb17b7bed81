import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ScheduledRunInput, ScheduledRunResult } from '../src/triggers/scheduled-run.js';

const { agentScheduledTurn } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

/**
 * One run of an agent's schedule (a Temporal Schedule's action): starts the turn as a new session of
 * the agent (source "schedule"), whose own `agentRun` workflow then runs it like any other turn.
 */
export async function agentScheduledRun(input: ScheduledRunInput): Promise<ScheduledRunResult> {
  return agentScheduledTurn(input);
}
