import type { Logger } from 'pino';
import type { DocumentService, OrphanCursor } from './documents.js';
import { nowMs } from '../time.js';

/** Rows one pass reads (each costs a `describe` in Temporal when it is old enough): the cost of a pass is bounded. */
export const ORPHANED_RUN_PAGE = 100;

/**
 * Repairs documents left RUNNING without a workflow (DocumentService.restartOrphaned) once at start and then
 * every minute (every half of the age when shorter), a page of old RUNNING rows per pass, going on from
 * where the last pass stopped so a long queue of parses is walked through rather than its first page read
 * again. A pass never overlaps the previous one. Returns the stop function.
 */
export function startOrphanedRunRepair(documents: Pick<DocumentService, 'restartOrphaned'>, ageSec: number, log: Logger): () => Promise<void> {
  const ageMs = ageSec * 1000;
  let cursor: OrphanCursor | undefined;
  let pass: Promise<void> = Promise.resolve();
  let running = false;
  const runPass = () => {
    if (running) return;
    running = true;
    pass = documents
      .restartOrphaned(nowMs() - ageMs, ORPHANED_RUN_PAGE, cursor)
      .then(({ restarted, failed, last }) => {
        cursor = last;
        if (restarted.length || failed.length) {
          log.warn({ restarted, failed }, `parsing anew ${restarted.length} document(s) left RUNNING without a workflow${failed.length ? `; ${failed.length} could not start and are FAIL` : ''}`);
        }
      })
      // Temporal or the database unreachable: the next pass tries again.
      .catch((err: unknown) => log.warn({ err }, 'could not check for documents left RUNNING without a workflow'))
      .finally(() => {
        running = false;
      });
  };
  runPass();
  const timer = setInterval(runPass, Math.min(60_000, Math.max(1000, ageMs / 2)));
  timer.unref();
  return async () => {
    clearInterval(timer);
    await pass;
  };
}
