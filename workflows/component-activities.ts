import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { CallOptions } from '../src/agents/interpreter.js';

/**
 * The activities of a component call, for a turn (agent-run.ts) and a component's debug run
 * (agent-debug.ts). The component's own timeout is enforced inside the activity (per retry); the
 * start-to-close timeout is the backstop. A worker that dies is noticed within seconds (heartbeats) and
 * the component runs again elsewhere.
 */
export function componentActivities(options: CallOptions, cancellationType?: ActivityCancellationType) {
  const perAttempt = options.timeoutSec + options.delayAfterErrorSec;
  return proxyActivities<Activities>({
    startToCloseTimeout: `${Math.ceil(perAttempt * (options.maxRetries + 1) + 30)} seconds`,
    heartbeatTimeout: '5 seconds',
    retry: { initialInterval: '500 milliseconds', maximumAttempts: 3 },
    ...(cancellationType === undefined ? {} : { cancellationType }),
  });
}
