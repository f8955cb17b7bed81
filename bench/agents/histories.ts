/**
 * Reads agentRun workflow histories with the Temporal client: how many events and bytes a run leaves,
 * and where its time went, from the server's event timestamps:
 *
 * - workflow tasks: wait = Scheduled → Started (the task sat in the queue: worker slots busy, or the
 *   worker's event loop slow to poll), run = Started → Completed (the worker replaying and running the
 *   graph walk, plus the round trip of the completion);
 * - activities: wait = Scheduled → Started, run = Started → Completed/Failed/TimedOut/Canceled.
 *
 * Each is summed over the run; `open` is WorkflowExecutionStarted → the closing event.
 */
import type { Client } from '@temporalio/client';
import { workflowIds } from '../../src/engine/task-queues.js';
import { percentile } from '../common.js';

type Long = number | { toNumber(): number } | null | undefined;
type Timestamp = { seconds?: Long; nanos?: number | null } | null | undefined;

const num = (v: Long): number => (v === null || v === undefined ? NaN : typeof v === 'number' ? v : v.toNumber());
const tsMs = (ts: Timestamp): number => (ts ? num(ts.seconds ?? 0) * 1000 + (ts.nanos ?? 0) / 1e6 : NaN);

export interface RunHistory {
  events: number;
  bytes: number;
  /** Events by kind, in order of first appearance: "activityTaskScheduled" → count. */
  kinds: Map<string, number>;
  /** Activity types in the order they were scheduled. */
  activities: string[];
  /** Local activity types in the order they were recorded (their markers). */
  localActivities: string[];
  /** Workflow tasks completed (each one a round trip to the server and at least one activation on the workflow thread). */
  workflowTasks: number;
  open: number;
  /** Epoch ms of WorkflowExecutionStarted and of the first ActivityTaskStarted (NaN without one). */
  startedAtMs: number;
  firstActivityStartedAtMs: number;
  /** Epoch ms the first workflow task started and completed (the server's times). */
  firstTaskStartedAtMs: number;
  firstTaskCompletedAtMs: number;
  wftWait: number;
  wftRun: number;
  actWait: number;
  actRun: number;
}

type HistoryEvent = Record<string, unknown> & { eventId?: Long; eventTime?: Timestamp };

/** The event's kind, from the one `…EventAttributes` field it carries (no proto enum needed). */
function kindOf(e: HistoryEvent): string {
  for (const [k, v] of Object.entries(e)) if (k.endsWith('EventAttributes') && v) return k.slice(0, -'EventAttributes'.length);
  return 'unknown';
}

export function summarize(events: HistoryEvent[], bytes: number): RunHistory {
  const run: RunHistory = { events: events.length, bytes, kinds: new Map(), activities: [], localActivities: [], workflowTasks: 0, open: NaN, startedAtMs: NaN, firstActivityStartedAtMs: NaN, firstTaskStartedAtMs: NaN, firstTaskCompletedAtMs: NaN, wftWait: 0, wftRun: 0, actWait: 0, actRun: 0 };
  const scheduledAt = new Map<number, number>();
  const decoder = new TextDecoder();
  const startedAt = new Map<number, number>();
  let start = NaN;
  for (const e of events) {
    const kind = kindOf(e);
    run.kinds.set(kind, (run.kinds.get(kind) ?? 0) + 1);
    const at = tsMs(e.eventTime);
    const attrs = (e[`${kind}EventAttributes`] ?? {}) as {
      scheduledEventId?: Long;
      activityType?: { name?: string | null } | null;
      markerName?: string | null;
      details?: Record<string, { payloads?: { data?: Uint8Array | null }[] | null }> | null;
    };
    const id = num(e.eventId);
    switch (kind) {
      case 'workflowExecutionStarted':
        start = at;
        run.startedAtMs = at;
        break;
      case 'workflowExecutionCompleted':
      case 'workflowExecutionFailed':
      case 'workflowExecutionCanceled':
      case 'workflowExecutionTerminated':
      case 'workflowExecutionTimedOut':
        run.open = at - start;
        break;
      case 'activityTaskScheduled':
        run.activities.push(attrs.activityType?.name ?? '?');
        scheduledAt.set(id, at);
        break;
      case 'workflowTaskScheduled':
        scheduledAt.set(id, at);
        break;
      case 'workflowTaskStarted':
        if (Number.isNaN(run.firstTaskStartedAtMs)) run.firstTaskStartedAtMs = at;
        run.wftWait += at - (scheduledAt.get(num(attrs.scheduledEventId)) ?? at);
        startedAt.set(num(attrs.scheduledEventId), at);
        break;
      case 'markerRecorded':
        if (attrs.markerName === 'core_local_activity') {
          const data = attrs.details?.data?.payloads?.[0]?.data;
          run.localActivities.push(data ? String(JSON.parse(decoder.decode(data)).activity_type ?? '?') : '?');
        }
        break;
      case 'workflowTaskCompleted':
        if (!run.workflowTasks) run.firstTaskCompletedAtMs = at;
        run.workflowTasks++;
        run.wftRun += at - (startedAt.get(num(attrs.scheduledEventId)) ?? at);
        break;
      case 'workflowTaskFailed':
      case 'workflowTaskTimedOut':
        run.wftRun += at - (startedAt.get(num(attrs.scheduledEventId)) ?? at);
        break;
      case 'activityTaskStarted':
        if (Number.isNaN(run.firstActivityStartedAtMs)) run.firstActivityStartedAtMs = at;
        run.actWait += at - (scheduledAt.get(num(attrs.scheduledEventId)) ?? at);
        startedAt.set(num(attrs.scheduledEventId), at);
        break;
      case 'activityTaskCompleted':
      case 'activityTaskFailed':
      case 'activityTaskTimedOut':
      case 'activityTaskCanceled':
        run.actRun += at - (startedAt.get(num(attrs.scheduledEventId)) ?? at);
        break;
    }
  }
  return run;
}

/** Waits for the session's latest run to close, then reads its history and the server's history size. */
export async function runHistory(client: Client, agentId: string, sessionId: string): Promise<RunHistory> {
  const handle = client.workflow.getHandle(workflowIds.agentRun(agentId, sessionId));
  await handle.result();
  const [desc, history] = await Promise.all([handle.describe(), handle.fetchHistory()]);
  return summarize((history.events ?? []) as HistoryEvent[], num(desc.raw.workflowExecutionInfo?.historySizeBytes as Long));
}

/** Histories of many runs, a few at a time, in the order of `sessionIds`. */
export async function runHistories(client: Client, agentId: string, sessionIds: string[], concurrency = 8): Promise<RunHistory[]> {
  const out: RunHistory[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, sessionIds.length) }, async () => {
      while (next < sessionIds.length) {
        const i = next++;
        out[i] = await runHistory(client, agentId, sessionIds[i]!);
      }
    }),
  );
  return out;
}

/**
 * Where the time to an agent's first token went, p50 over runs, ms: request sent → workflow started
 * (the API: checks, the session, the start call), workflow started → its first activity started
 * (split into the first workflow task's wait, its run — the worker's activation and the completion's round trip —
 * and the activity's dispatch), and activity started → first token at the client
 * less the model's own TTFT (the model call's setup, the event log, the stream).
 */
export function firstTokenSplit(samples: { sentAtEpochMs: number; ttft: number }[], runs: RunHistory[], modelTtftMs: number): string {
  const p = (xs: number[]) => percentile(xs.filter((x) => !Number.isNaN(x)), 50).toFixed(0);
  const api = samples.map((s, i) => runs[i]!.startedAtMs - s.sentAtEpochMs);
  const toActivity = runs.map((r) => r.firstActivityStartedAtMs - r.startedAtMs);
  const taskWait = runs.map((r) => r.firstTaskStartedAtMs - r.startedAtMs);
  const taskRun = runs.map((r) => r.firstTaskCompletedAtMs - r.firstTaskStartedAtMs);
  const dispatch = runs.map((r) => r.firstActivityStartedAtMs - r.firstTaskCompletedAtMs);
  const toToken = samples.map((s, i) => s.sentAtEpochMs + s.ttft - runs[i]!.firstActivityStartedAtMs - modelTtftMs);
  return `first token: API ${p(api)} + workflow to activity ${p(toActivity)} (first task ${p(taskWait)} wait + ${p(taskRun)} run, activity dispatch ${p(dispatch)}) + activity to client ${p(toToken)} (beyond the model's TTFT)`;
}

/**
 * What a run cost the workflow side: "2 workflow tasks; activities: agentMessage; local: agentFinishTurn".
 * Every workflow task is a round trip to the server; every activity and local activity completion wakes
 * the workflow again (an activation on the workflow thread), within a task for a local one.
 */
export function taskCounts(run: RunHistory): string {
  const list = (xs: string[]) => (xs.length ? xs.join(', ') : 'none');
  return `${run.workflowTasks} workflow tasks; activities: ${list(run.activities)}; local: ${list(run.localActivities)}`;
}

/** p50 of each time split, ms: "open 812 = workflow tasks 40 wait + 25 run, activities 30 wait + 700 run". */
export function timeSplit(runs: RunHistory[]): string {
  const p = (k: 'open' | 'wftWait' | 'wftRun' | 'actWait' | 'actRun') => percentile(runs.map((r) => r[k]), 50).toFixed(0);
  return `open ${p('open')} ms: workflow tasks ${p('wftWait')} wait + ${p('wftRun')} run; activities ${p('actWait')} wait + ${p('actRun')} run`;
}
