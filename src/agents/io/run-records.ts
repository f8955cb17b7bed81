import type { MetaStore } from '../../store/index.js';
import type { AgentRunRow, AgentRunStepRow } from '../../store/agent-runs.js';
import type { RunEvent, RunEvents } from '../../events/types.js';
import type { AgentRunInput, RunIds, RunRequest, TurnOutcome } from '../run-types.js';
import { stepsFromEvents } from '../run-steps.js';
import { nowMs } from '../../time.js';

/** The run row as a turn starts; `replay` and `trigger` come from its request. */
function runRow(ids: RunIds, request: RunRequest, status: AgentRunRow['status'], startMs: number): AgentRunRow {
  const { replay, trigger, ...asked } = request;
  return {
    id: ids.runKey,
    agent_id: ids.agentId,
    session_id: ids.sessionId,
    tenant_id: ids.tenantId,
    status,
    trigger: trigger ?? 'completion',
    request: JSON.stringify(asked),
    replay_of: replay?.run_id ?? null,
    from_component: replay?.from_component ?? null,
    error: null,
    start_time: startMs,
    end_time: null,
  };
}

/** A started turn is listed as running at once; an end already recorded (a very short turn) is kept. */
export async function recordRunStart(store: MetaStore, run: AgentRunInput): Promise<void> {
  await store.agentRuns.started(runRow(run, run.request, 'running', nowMs()));
}

/** Every event of the run's log, in order (the log is read in pages). */
async function loggedEvents(events: RunEvents, runKey: string): Promise<RunEvent[]> {
  const all: RunEvent[] = [];
  let seq = 0;
  for (;;) {
    const page = await events.read(runKey, seq);
    if (!page.length) return all;
    for (const logged of page) all.push(logged.event);
    seq = page.at(-1)!.seq;
  }
}

/**
 * Writes the ended run and its steps, rebuilt from the run's event log plus the events the workflow
 * has not published yet. Idempotent (keyed by the run id): a retried call writes the same record.
 */
export async function recordRunEnd(store: MetaStore, events: RunEvents, input: RunIds & { request: RunRequest; outcome: TurnOutcome; events: RunEvent[] }): Promise<void> {
  const { outcome } = input;
  const all = [...(await loggedEvents(events, input.runKey)), ...input.events];
  // A turn stopped by a newer one (multitask_strategy interrupt / rollback) is recorded as a stopped run.
  const status = outcome.status === 'interrupted' || outcome.status === 'rolled_back' ? 'cancelled' : outcome.status;
  const row: AgentRunRow = { ...runRow(input, input.request, status, input.createdAt * 1000), error: outcome.error ?? null, end_time: nowMs() };
  const steps: AgentRunStepRow[] = stepsFromEvents(all, outcome.status).map((s, i) => ({
    run_id: input.runKey,
    step_index: i,
    component_id: s.component_id,
    component_name: s.component_name,
    component_type: s.component_type,
    status: s.status,
    reused: s.reused ? 1 : 0,
    started_at: s.started_at,
    duration: s.duration,
    inputs: JSON.stringify(s.inputs ?? {}),
    outputs: JSON.stringify(s.outputs),
    error: s.error,
    trace: JSON.stringify(s.trace),
    reference: s.reference ? JSON.stringify(s.reference) : null,
  }));
  await store.agentRuns.ended(row, steps);
}
