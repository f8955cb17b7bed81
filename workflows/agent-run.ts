import { ActivityFailure, ApplicationFailure, CancellationScope, ActivityCancellationType, defineSignal, isCancellation, makeContinueAsNewFunc, proxyActivities, patched, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { runCanvas, emptyBucket, type Executor } from '../src/agents/interpreter.js';
import { AGENT_TURN_SIGNAL, COMPONENT_ACTIVITY, type AgentRunInput, type AgentTurnSignal, type RunStatus, type TurnOutcome } from '../src/agents/run-types.js';
import { RUN_ERROR, type RunEvent } from '../src/events/types.js';
import { componentActivities } from './component-activities.js';
import type { TurnFile } from '../src/services/agent-attachments.js';
import type { RunFailure } from '../src/agents/run-failure.js';

/** Short and idempotent: a local activity, so the turn ends without another round trip to a task queue. */
const bookkeeping = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', maximumAttempts: 10 },
});

/** The turn's attached files, parsed to text for `sys.files` (a parser process may take a while on a large PDF). */
const files = proxyActivities<Activities>({ startToCloseTimeout: '10 minutes', retry: { initialInterval: '1 second', maximumAttempts: 3 } });

export const CANCELLED_TEXT = 'Task has been canceled';

/** A turn submitted with multitask_strategy enqueue / interrupt / rollback while this one runs. */
const turnSignal = defineSignal<[AgentTurnSignal]>(AGENT_TURN_SIGNAL);

/**
 * One turn of an agent session: walks the canvas (deterministic code below), each I/O component an
 * activity. Events the walk makes travel to the caller on the next activity; message tokens go from
 * the activities straight to the RunEvents log, never through this history. The turn's end is
 * persisted by `agentFinishTurn`, which also closes the event log.
 */
export async function agentRun(input: AgentRunInput): Promise<{ status: RunStatus; error?: string }> {
  const ids = { runKey: input.runKey, agentId: input.agentId, sessionId: input.sessionId, tenantId: input.tenantId, createdAt: input.createdAt };
  const pending: RunEvent[] = [];
  const request = input.request;
  // Turns submitted while this one runs (multitask_strategy): they run next, in order, each as a new run
  // of this workflow (continue-as-new), so the queue lives in Temporal's history and survives restarts.
  const queue: AgentRunInput[] = [...(input.queued ?? [])];
  /** Turns an interrupt or rollback took out of the queue: they end without running. */
  const dropped: AgentRunInput[] = [];
  const turnScope = new CancellationScope();
  // Runs started before multitask strategies did not wait for a cancelled component to stop; they replay so.
  // Waiting lets the stopped component publish its last text before the turn's end reads it (interrupt).
  const waitForStop = patched('agent-run-multitask');
  let walking = true;
  let stoppedAs: 'interrupted' | 'rolled_back' | undefined;
  setHandler(turnSignal, ({ turn, strategy }) => {
    // Signal-with-start delivers the starting turn as a signal too; a repeated signal is ignored as well.
    if (turn.runKey === input.runKey || queue.some((t) => t.runKey === turn.runKey)) return;
    if (strategy === 'enqueue') {
      queue.push(turn);
      return;
    }
    // LangGraph's interrupt and rollback stop every turn in flight: the running one and those waiting.
    dropped.push(...queue.splice(0, queue.length));
    queue.push(turn);
    if (walking && !stoppedAs) {
      stoppedAs = strategy === 'interrupt' ? 'interrupted' : 'rolled_back';
      turnScope.cancel();
    }
  });
  const exec: Executor = {
    emit: (events) => pending.push(...events),
    now: () => Date.now(),
    random: () => Math.random(),
    isFatal: (err) => isCancellation(err),
    // A component's own failure comes back as its result; an activity that throws was lost by Cairn (its worker died, retries spent).
    isInternal: (err) => err instanceof ActivityFailure,
    async call(call, options) {
      const activities = componentActivities(options, waitForStop ? ActivityCancellationType.WAIT_CANCELLATION_COMPLETED : ActivityCancellationType.TRY_CANCEL);
      return activities[COMPONENT_ACTIVITY[call.kind]]({ ...ids, call, before: pending.splice(0), ...options });
    },
  };
  /** Ends turns that never ran (dropped from the queue, or the workflow cancelled): their callers' streams end. */
  const endUnrun = async (turns: AgentRunInput[]) => {
    for (const t of turns.splice(0, turns.length)) {
      const now = Math.floor(Date.now() / 1000);
      const events: RunEvent[] = [{ event: 'workflow_finished', data: { inputs: t.request.inputs, outputs: { content: CANCELLED_TEXT }, created_at: t.createdAt }, created_at: now }];
      const outcome: TurnOutcome = { status: 'rolled_back', canvas: t.canvas, answer: CANCELLED_TEXT, reference: emptyBucket() };
      await bookkeeping.agentFinishTurn({ runKey: t.runKey, agentId: t.agentId, sessionId: t.sessionId, tenantId: t.tenantId, createdAt: t.createdAt, request: t.request, outcome, events });
    }
  };
  let outcome: TurnOutcome;
  try {
    outcome = await turnScope.run(async () => {
      if (input.fromSession) {
        const fresh = await bookkeeping.agentSessionCanvas({ sessionId: input.sessionId });
        if (fresh) Object.assign(input, fresh);
      }
      if (request.files.length) request.files = await files.agentReadFiles({ tenantId: input.tenantId, agentId: input.agentId, files: request.files as TurnFile[] });
      return runCanvas(input, exec);
    });
  } catch (err) {
    if (isCancellation(err) && stoppedAs && !CancellationScope.current().consideredCancelled) {
      // Stopped by a newer turn: interrupted (its streamed text becomes its answer, see agentFinishTurn) or rolled back.
      input.canvas.paused = false;
      outcome = { status: stoppedAs, canvas: input.canvas, answer: '', reference: emptyBucket() };
      // An interrupted turn's end carries its streamed text (agentFinishTurn reads it); a rolled-back one ends as a stop does.
      if (stoppedAs === 'rolled_back') pending.push({ event: 'workflow_finished', data: { inputs: request.inputs, outputs: { content: CANCELLED_TEXT }, created_at: input.createdAt }, created_at: Math.floor(Date.now() / 1000) });
    } else if (isCancellation(err)) {
      await CancellationScope.nonCancellable(async () => {
        const now = Math.floor(Date.now() / 1000);
        pending.push({ event: 'workflow_finished', data: { inputs: request.inputs, outputs: { content: CANCELLED_TEXT }, created_at: input.createdAt }, created_at: now });
        input.canvas.paused = false;
        const cancelled: TurnOutcome = { status: 'cancelled', canvas: input.canvas, answer: CANCELLED_TEXT, reference: emptyBucket() };
        await bookkeeping.agentFinishTurn({ ...ids, request, outcome: cancelled, events: pending.splice(0) });
        // A stop stops the session: the turns waiting behind this one end too.
        await endUnrun(dropped);
        await endUnrun(queue);
      });
      throw err;
    } else {
      // Not a component's failure (those end the walk with an outcome): the workflow's own, a fault of Cairn's.
      const cause = err instanceof ActivityFailure ? err.cause : err;
      const failure: RunFailure = { kind: 'internal', message: cause instanceof Error ? cause.message : String(cause) };
      pending.push({ event: RUN_ERROR, data: failure });
      outcome = { status: 'failed', canvas: input.canvas, answer: '', reference: emptyBucket(), error: failure.message, failure };
    }
  }
  walking = false;
  await bookkeeping.agentFinishTurn({ ...ids, request, outcome, events: pending.splice(0) });
  await endUnrun(dropped);
  const next = queue.shift();
  if (next) {
    // The memo names the running turn, as for a first start (openAgentRun reads it).
    const continueWith = makeContinueAsNewFunc<typeof agentRun>({ memo: { runKey: next.runKey } });
    return continueWith({ ...next, fromSession: true, queued: queue });
  }
  if (outcome.status === 'failed') throw ApplicationFailure.nonRetryable(outcome.error ?? 'the run failed', 'AgentRunFailed');
  return { status: outcome.status, error: outcome.error };
}
