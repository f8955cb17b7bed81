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
  /** Resolves when the run may have new events, or after `timeoutMs`. */
  wait(runKey: string, timeoutMs: number): Promise<void>;
  /** Drops the logs of these runs. */
  remove(runKeys: string[]): Promise<void>;
  /** Drops logs older than `ageMs`; returns how many events went. */
  purgeOlderThan(ageMs: number): Promise<number>;
}

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
