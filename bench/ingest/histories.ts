import { stepComponentOf } from '../../src/pipelines/run-types.js';
/**
 * Per-stage timings of parseDocument workflows, read from outside the pipeline: Temporal's workflow
 * histories carry ActivityTaskScheduled / Started / Completed events with server timestamps.
 *
 * - wait: Scheduled -> Started (the activity task sat in the task queue, e.g. all worker slots busy);
 * - run:  Started -> Completed (time inside the activity, including any in-process waiting such as
 *   queueing for the embedding model's single worker thread).
 * Temporal records ActivityTaskStarted when an activity closes, for the last attempt only, so a retried
 * activity's run time is that of its last attempt; retries are counted separately.
 */
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';

type Timestamp = { seconds?: number | { toNumber(): number } | null; nanos?: number | null } | null | undefined;

function tsMs(ts: Timestamp): number {
  if (!ts) return NaN;
  const s = ts.seconds;
  const seconds = s === null || s === undefined ? 0 : typeof s === 'number' ? s : s.toNumber();
  return seconds * 1000 + (ts.nanos ?? 0) / 1e6;
}

export interface ActivityRun {
  type: string;
  scheduled: number;
  started: number;
  closed: number;
  attempt: number;
  /** Why the attempt before the last one failed (Temporal's lastFailure), for retried activities. */
  lastFailure?: string;
  status: 'completed' | 'failed' | 'timedOut' | 'canceled' | 'open';
  result?: unknown;
}

export interface WorkflowRun {
  workflowId: string;
  start: number;
  end: number;
  status: string;
  activities: ActivityRun[];
}

/** Downloads the histories of every parseDocument workflow on the server (retrying until `expected` are visible). */
export async function fetchParseHistories(address: string, namespace: string, expected: number): Promise<WorkflowRun[]> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const runs: WorkflowRun[] = [];
      for await (const { workflowId, history } of client.workflow.list({ query: "WorkflowType='parseDocument'" }).intoHistories({ concurrency: 8 })) {
        runs.push(summarize(workflowId, (history as { events?: HistoryEvent[] | null }).events ?? []));
      }
      const closed = runs.filter((r) => r.status !== 'open').length;
      if (closed >= expected || Date.now() > deadline) return runs;
      await new Promise((r) => setTimeout(r, 1000)); // visibility is eventually consistent
    }
  } finally {
    await connection.close();
  }
}

/** The history of one workflow (its latest run), by id. */
export async function fetchWorkflowRun(address: string, namespace: string, workflowId: string): Promise<WorkflowRun> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace });
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    return summarize(workflowId, (history.events ?? []) as HistoryEvent[]);
  } finally {
    await connection.close();
  }
}

// The event shapes we read (temporal.api.history.v1.IHistoryEvent, trimmed).
interface HistoryEvent {
  eventId?: number | { toNumber(): number } | null;
  eventTime?: Timestamp;
  workflowExecutionStartedEventAttributes?: object | null;
  workflowExecutionCompletedEventAttributes?: object | null;
  workflowExecutionFailedEventAttributes?: object | null;
  workflowExecutionCanceledEventAttributes?: object | null;
  workflowExecutionTerminatedEventAttributes?: object | null;
  workflowExecutionTimedOutEventAttributes?: object | null;
  activityTaskScheduledEventAttributes?: { activityId?: string | null; activityType?: { name?: string | null } | null } | null;
  activityTaskStartedEventAttributes?: {
    scheduledEventId?: number | { toNumber(): number } | null;
    attempt?: number | null;
    lastFailure?: { message?: string | null } | null;
  } | null;
  activityTaskCompletedEventAttributes?: { scheduledEventId?: number | { toNumber(): number } | null; result?: { payloads?: unknown[] | null } | null } | null;
  activityTaskFailedEventAttributes?: { scheduledEventId?: number | { toNumber(): number } | null } | null;
  activityTaskTimedOutEventAttributes?: { scheduledEventId?: number | { toNumber(): number } | null } | null;
  activityTaskCanceledEventAttributes?: { scheduledEventId?: number | { toNumber(): number } | null } | null;
}

const num = (v: number | { toNumber(): number } | null | undefined): number => (v === null || v === undefined ? NaN : typeof v === 'number' ? v : v.toNumber());

function summarize(workflowId: string, events: HistoryEvent[]): WorkflowRun {
  const run: WorkflowRun = { workflowId, start: NaN, end: NaN, status: 'open', activities: [] };
  const bySchedule = new Map<number, ActivityRun>();
  const close = (id: number | { toNumber(): number } | null | undefined, at: number, status: ActivityRun['status']) => {
    const a = bySchedule.get(num(id));
    if (a) Object.assign(a, { closed: at, status });
    return a;
  };
  for (const e of events) {
    const at = tsMs(e.eventTime);
    if (e.workflowExecutionStartedEventAttributes) run.start = at;
    else if (e.workflowExecutionCompletedEventAttributes) Object.assign(run, { end: at, status: 'completed' });
    else if (e.workflowExecutionFailedEventAttributes) Object.assign(run, { end: at, status: 'failed' });
    else if (e.workflowExecutionCanceledEventAttributes) Object.assign(run, { end: at, status: 'canceled' });
    else if (e.workflowExecutionTerminatedEventAttributes) Object.assign(run, { end: at, status: 'terminated' });
    else if (e.workflowExecutionTimedOutEventAttributes) Object.assign(run, { end: at, status: 'timedOut' });
    else if (e.activityTaskScheduledEventAttributes) {
      const a: ActivityRun = { type: activityName(e.activityTaskScheduledEventAttributes), scheduled: at, started: NaN, closed: NaN, attempt: 0, status: 'open' };
      bySchedule.set(num(e.eventId), a);
      run.activities.push(a);
    } else if (e.activityTaskStartedEventAttributes) {
      const attrs = e.activityTaskStartedEventAttributes;
      const a = bySchedule.get(num(attrs.scheduledEventId));
      if (a) Object.assign(a, { started: at, attempt: attrs.attempt ?? 1, lastFailure: attrs.lastFailure?.message ?? undefined });
    } else if (e.activityTaskCompletedEventAttributes) {
      const attrs = e.activityTaskCompletedEventAttributes;
      const a = close(attrs.scheduledEventId, at, 'completed');
      const payload = attrs.result?.payloads?.[0];
      if (a && payload) {
        try {
          a.result = defaultPayloadConverter.fromPayload(payload as never);
        } catch {
          // an undecodable result only costs us the page/chunk counts
        }
      }
    } else if (e.activityTaskFailedEventAttributes) close(e.activityTaskFailedEventAttributes.scheduledEventId, at, 'failed');
    else if (e.activityTaskTimedOutEventAttributes) close(e.activityTaskTimedOutEventAttributes.scheduledEventId, at, 'timedOut');
    else if (e.activityTaskCanceledEventAttributes) close(e.activityTaskCanceledEventAttributes.scheduledEventId, at, 'canceled');
  }
  return run;
}

/** Total length of the union of [start, end) intervals: wall time during which at least one was running. */
export function unionMs(intervals: [number, number][]): number {
  const sorted = intervals.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  let total = 0;
  let curStart = -Infinity;
  let curEnd = -Infinity;
  for (const [a, b] of sorted) {
    if (a > curEnd) {
      if (curEnd > curStart) total += curEnd - curStart;
      curStart = a;
      curEnd = b;
    } else if (b > curEnd) curEnd = b;
  }
  if (curEnd > curStart) total += curEnd - curStart;
  return total;
}

/** Largest number of intervals open at the same instant. */
export function peakOverlap(intervals: [number, number][]): number {
  const points = intervals.flatMap(([a, b]) => [[a, 1] as const, [b, -1] as const]).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let open = 0;
  let peak = 0;
  for (const [, d] of points) peak = Math.max(peak, (open += d));
  return peak;
}

export { percentile } from '../common.js';

/**
 * Splits wall time among labelled intervals: at each instant the elapsed time is shared equally by the
 * intervals running then, and credited to their labels. The credits add up to the union of all intervals.
 */
export function wallShares(intervals: { label: string; start: number; end: number }[]): Map<string, number> {
  const points = intervals
    .filter((i) => i.end > i.start)
    .flatMap((i) => [{ at: i.start, label: i.label, d: 1 }, { at: i.end, label: i.label, d: -1 }])
    .sort((a, b) => a.at - b.at || a.d - b.d);
  const open = new Map<string, number>();
  const shares = new Map<string, number>();
  let running = 0;
  let last = points[0]?.at ?? 0;
  for (const p of points) {
    const dt = p.at - last;
    if (dt > 0 && running > 0) for (const [label, n] of open) shares.set(label, (shares.get(label) ?? 0) + (dt * n) / running);
    last = p.at;
    open.set(p.label, (open.get(p.label) ?? 0) + p.d);
    running += p.d;
  }
  return shares;
}

/**
 * What an activity did: its type, or for a step of an ingestion run (runPipelineStep, whose id is
 * `<index>:<component>:<step id>`) the built-in activity a chunk method's step runs, or the pipeline component.
 */
function activityName(attrs: { activityId?: string | null; activityType?: { name?: string | null } | null }): string {
  const type = attrs.activityType?.name ?? '?';
  if (type !== 'runPipelineStep') return type;
  const component = stepComponentOf(attrs.activityId) ?? '?';
  return CHUNK_METHOD_STEPS[component] ?? component;
}

const CHUNK_METHOD_STEPS: Record<string, string> = { ChunkMethod: 'extractAndChunk', Enrichment: 'enrichChunks', Index: 'embedAndIndex' };
