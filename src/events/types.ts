/**
 * The RunEvents port: how an agent run's events (node events, message deltas, the end of the run)
 * travel from the activity or workflow that produces them to the API process holding the caller's
 * stream. Events are appended to a per-run log and read in order, so a reader that attaches late (or
 * a second reader) sees the whole run.
 */

/** One event of a run: a RAGFlow canvas event (`event` + `data`), or one of Cairn's internal ones. */
export interface RunEvent {
  event: string;
  data: unknown;
  /** Unix seconds when the event was made. */
  created_at?: number;
  /** For `message` deltas: the component whose stream this is, and the activity attempt that made it. */
  stream?: string;
  attempt?: number;
}

/** Internal events, never forwarded as-is: the run failed (`data.message`), or the run is over. */
export const RUN_ERROR = 'run_error';
export const RUN_END = 'run_end';

export interface LoggedEvent {
  seq: number;
  event: RunEvent;
}

export interface RunEvents {
  publish(runKey: string, events: RunEvent[]): Promise<void>;
  /** Events of the run after `afterSeq`, in order. */
  read(runKey: string, afterSeq: number): Promise<LoggedEvent[]>;
  /** Whether the run's log holds its end (RUN_END): everything the run publishes was published. */
  ended(runKey: string): Promise<boolean>;
  /** Resolves when the run may have new events, or after `timeoutMs`. */
  wait(runKey: string, timeoutMs: number): Promise<void>;
  /** Drops the logs of these runs. */
  remove(runKeys: string[]): Promise<void>;
  /** Drops whole logs as `retention` says (see LogRetention); returns how many events went. */
  purgeLogs(retention: LogRetention): Promise<number>;
}

/**
 * How long a run's log is kept. A log goes as a whole, never event by event, so a turn's record
 * (rebuilt from its log when it ends) always has every step, however long the turn ran: a log is
 * purged `endedMs` after its run's end (its RUN_END event), and a log that never ended (its workflow
 * terminated from outside, a component's debug run) once nothing was written to it for `idleMs`.
 */
export interface LogRetention {
  endedMs: number;
  idleMs: number;
}

/** Ended logs are read within seconds (an hour is plenty for a slow reader); a live turn writes far more often than daily. */
export const LOG_RETENTION: LogRetention = { endedMs: 60 * 60 * 1000, idleMs: 24 * 60 * 60 * 1000 };

/** A stored event as JSON, `event` first, so a log's end is found by its text (RUN_END_PREFIX) without parsing bodies. */
export function eventBody(e: RunEvent): string {
  const { event, ...rest } = e;
  return JSON.stringify({ event, ...rest });
}

/** How the stored body of a RUN_END event starts (see eventBody). */
export const RUN_END_PREFIX = `{"event":"${RUN_END}"`;

/** Follows a run's log until its RUN_END event (not yielded), or until `signal` aborts. */
export async function* followRun(bus: RunEvents, runKey: string, signal?: AbortSignal, pollMs = 25): AsyncGenerator<RunEvent> {
  let seq = 0;
  while (!signal?.aborted) {
    const batch = await bus.read(runKey, seq);
    for (const logged of batch) {
      seq = logged.seq;
      if (logged.event.event === RUN_END) return;
      yield logged.event;
    }
    if (!batch.length) await bus.wait(runKey, pollMs);
  }
}

/**
 * Internal: the resolved inputs of an I/O component (its prompts, query, params), published by its
 * activity for the run's record (docs/agents.md, "Runs and replay"); never forwarded to a caller.
 */
export const STEP_INPUTS = 'step_inputs';

/**
 * Internal: the chunks and documents one component added to the turn's reference (`{component_id,
 * reference}`), for the run's record, so a replay that reuses the component has them in its reference
 * too; never forwarded to a caller.
 */
export const STEP_REFERENCE = 'step_reference';

/** Internal events a caller's stream never carries. */
export const RECORD_ONLY_EVENTS: ReadonlySet<string> = new Set([STEP_INPUTS, STEP_REFERENCE]);
