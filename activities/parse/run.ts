import { Context, heartbeat } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityDeps } from '../deps.js';
import type { DocumentRow } from '../../src/store/documents.js';
import { nowMs } from '../../src/time.js';

/** One parse run of one document: every step names it. */
export interface RunRef {
  documentId: string;
  runSeq: number;
}

/**
 * Progress bands of the stages, so the document's progress only goes up. Generating keywords and
 * questions (when asked for) is the slow stage: the embedding starts after its band.
 */
export const BANDS = { extract: [0.02, 0.4], chunk: [0.4, 0.45], enrich: [0.45, 0.75], embed: [0.45, 0.95], embedAfterEnrich: [0.75, 0.95], index: [0.95, 1] } as const;

/** Thrown when the run is no longer the document's current one: the workflow ends without writing. */
export const STALE = 'StaleRun';

/** What every step of a run checks and writes: whether the run is still current, and its progress. */
export type RunGuard = ReturnType<typeof runGuard>;

export function runGuard({ store }: Pick<ActivityDeps, 'store'>) {
  return {
    /** The document, if this run is still its current RUNNING run; otherwise a non-retryable StaleRun. */
    async currentRun(ref: RunRef): Promise<DocumentRow> {
      const doc = await store.documents.byId(ref.documentId);
      if (!doc || doc.run_seq !== ref.runSeq || doc.run !== 'RUNNING') throw staleRun(ref);
      return doc;
    },

    /**
     * A signal that aborts when the activity is cancelled or when the run stops being the document's
     * current one (stopped, deleted, re-parsed): Temporal delivers a cancel with a heartbeat response,
     * which the SDK throttles to seconds, and every second of model calls after a stop is paid for.
     */
    watchRun(ref: RunRef) {
      const controller = new AbortController();
      const cancelled = Context.current().cancellationSignal;
      const onCancel = () => controller.abort(cancelled.reason);
      cancelled.addEventListener('abort', onCancel, { once: true });
      let stale = false;
      const timer = setInterval(() => {
        void store.documents.byId(ref.documentId).then(
          (doc) => {
            if (doc && doc.run_seq === ref.runSeq && doc.run === 'RUNNING') return;
            stale = true;
            controller.abort(new CancelledFailure(`run ${ref.runSeq} of document ${ref.documentId} is no longer current`));
          },
          () => undefined, // a failed look-up proves nothing: the next one decides
        );
      }, 1000);
      return {
        signal: controller.signal,
        stale: () => stale,
        stop: () => {
          clearInterval(timer);
          cancelled.removeEventListener('abort', onCancel);
        },
      };
    },

    /** The run's progress, written only while it is the document's RUNNING run: a stopped run's message stays. Whether it was written. */
    async report(ref: RunRef, progress: number, message: string): Promise<boolean> {
      return store.documents.updateRun(ref.documentId, ref.runSeq, { progress, progress_msg: message, update_time: nowMs() }, 'RUNNING');
    },
  };
}

/**
 * Heartbeats every `everyMs` (a second unless told) while a long step runs, so a dead worker is noticed and
 * cancels arrive; each carries `details()` when given (shown in the Temporal UI).
 */
export function keepAlive(everyMs = 1000, details?: () => unknown): () => void {
  const timer = setInterval(() => heartbeat(details?.()), everyMs);
  return () => clearInterval(timer);
}

/** The run is no longer the document's current one (stopped, deleted, re-parsed): the workflow ends without writing. */
export function staleRun(ref: RunRef): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`run ${ref.runSeq} of document ${ref.documentId} is no longer current`, STALE);
}

export function throwIfCancelled(): void {
  if (Context.current().cancellationSignal.aborted) throw new CancelledFailure('parsing was cancelled');
}

/** Errors of a file that cannot be read, or that goes over a parsing limit or ceiling: retrying would not help. */
const BAD_INPUT = new Set(['UnsupportedFormatError', 'CorruptFileError', 'ParseLimitError']);

/** Bad input fails the document at once; anything else is retried by Temporal. */
export function asFailure(err: unknown): unknown {
  if (err instanceof Error && BAD_INPUT.has(err.name)) return ApplicationFailure.nonRetryable(err.message, err.name);
  if (Context.current().cancellationSignal.aborted) return new CancelledFailure('parsing was cancelled');
  return err;
}
