import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { runCanvas, emptyBucket, type Executor } from '../src/agents/interpreter.js';
import type { AgentRunInput, ComponentCall, RunStatus, TurnOutcome } from '../src/agents/run-types.js';
import { RUN_ERROR, type RunEvent } from '../src/events/types.js';
import type { TurnFile } from '../src/services/agent-attachments.js';

/** The activity that runs each kind of I/O component: one activity type per component, so the history reads like the canvas. */
const ACTIVITY: Record<ComponentCall['kind'], 'agentLLM' | 'agentAgent' | 'agentRetrieval' | 'agentCategorize' | 'agentMessage' | 'agentSaveMemory' | 'agentInvoke' | 'agentCodeExec'> = {
  LLM: 'agentLLM',
  Agent: 'agentAgent',
  Retrieval: 'agentRetrieval',
  Categorize: 'agentCategorize',
  Message: 'agentMessage',
  Memory: 'agentSaveMemory',
  Invoke: 'agentInvoke',
  CodeExec: 'agentCodeExec',
};

/** Short and idempotent: a local activity, so the turn ends without another round trip to a task queue. */
const bookkeeping = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', maximumAttempts: 10 },
});

/** The turn's attached files, parsed to text for `sys.files` (a parser process may take a while on a large PDF). */
const files = proxyActivities<Activities>({ startToCloseTimeout: '10 minutes', retry: { initialInterval: '1 second', maximumAttempts: 3 } });

export const CANCELLED_TEXT = 'Task has been canceled';

/**
 * One turn of an agent session: walks the canvas (deterministic code below), each I/O component an
 * activity. Events the walk makes travel to the caller on the next activity; message tokens go from
 * the activities straight to the RunEvents log, never through this history. The turn's end is
 * persisted by `agentFinishTurn`, which also closes the event log.
 */
export async function agentRun(input: AgentRunInput): Promise<{ status: RunStatus; error?: string }> {
  const ids = { runKey: input.runKey, agentId: input.agentId, sessionId: input.sessionId, tenantId: input.tenantId, createdAt: input.createdAt };
  const pending: RunEvent[] = [];
  const exec: Executor = {
    emit: (events) => pending.push(...events),
    now: () => Date.now(),
    random: () => Math.random(),
    isFatal: (err) => isCancellation(err),
    async call(call, options) {
      const perAttempt = options.timeoutSec + options.delayAfterErrorSec;
      const activities = proxyActivities<Activities>({
        // The component's own timeout is enforced inside the activity (per retry); this is the backstop.
        startToCloseTimeout: `${Math.ceil(perAttempt * (options.maxRetries + 1) + 30)} seconds`,
        // A worker that dies is noticed within seconds and the component runs again elsewhere.
        heartbeatTimeout: '5 seconds',
        retry: { initialInterval: '500 milliseconds', maximumAttempts: 3 },
      });
      return activities[ACTIVITY[call.kind]]({ ...ids, call, before: pending.splice(0), ...options });
    },
  };
  const request = input.request;
  let outcome: TurnOutcome;
  try {
    if (request.files.length) request.files = await files.agentReadFiles({ tenantId: input.tenantId, agentId: input.agentId, files: request.files as TurnFile[] });
    outcome = await runCanvas(input, exec);
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(async () => {
        const now = Math.floor(Date.now() / 1000);
        pending.push({ event: 'workflow_finished', data: { inputs: request.inputs, outputs: { content: CANCELLED_TEXT }, created_at: input.createdAt }, created_at: now });
        input.canvas.paused = false;
        const cancelled: TurnOutcome = { status: 'cancelled', canvas: input.canvas, answer: CANCELLED_TEXT, reference: emptyBucket() };
        await bookkeeping.agentFinishTurn({ ...ids, request, outcome: cancelled, events: pending.splice(0) });
      });
      throw err;
    }
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const message = cause instanceof Error ? cause.message : String(cause);
    pending.push({ event: RUN_ERROR, data: { message } });
    outcome = { status: 'failed', canvas: input.canvas, answer: '', reference: emptyBucket(), error: message };
  }
  await bookkeeping.agentFinishTurn({ ...ids, request, outcome, events: pending.splice(0) });
  if (outcome.status === 'failed') throw ApplicationFailure.nonRetryable(outcome.error ?? 'the run failed', 'AgentRunFailed');
  return { status: outcome.status, error: outcome.error };
}
