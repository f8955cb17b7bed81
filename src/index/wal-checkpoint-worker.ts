/** Worker-thread side of wal-checkpointer.ts: copies the write-ahead log into the database file on its own connection. */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import type { CheckpointerData, WalState } from './wal-checkpointer.js';

/** A pass that copies fewer frames than this has caught up with the writer. */
const CAUGHT_UP_FRAMES = 64;
const MAX_CATCH_UP_PASSES = 8;

const { file, intervalMs, restartFrames } = workerData as CheckpointerData;
const db = new Database(file, { fileMustExist: true });
// A pass that finds the checkpoint lock taken gives up at once; the next one tries again.
db.pragma('busy_timeout = 0');

const checkpoint = () => (db.pragma('wal_checkpoint(PASSIVE)') as WalState[])[0]!;

/**
 * Once the log is long the writer will copy what is left and start it over (wal-checkpointer.ts): passes run
 * back to back first, each copying what was committed during the one before, so that what is left is little.
 */
function catchUp(state: WalState): WalState {
  for (let pass = 0; pass < MAX_CATCH_UP_PASSES; pass++) {
    const next = checkpoint();
    const copied = next.checkpointed - state.checkpointed;
    state = next;
    if (copied < CAUGHT_UP_FRAMES) break;
  }
  return state;
}

let last: WalState | undefined;
setInterval(() => {
  try {
    let state = checkpoint();
    if (state.log >= restartFrames) state = catchUp(state);
    if (last && state.log === last.log && state.checkpointed === last.checkpointed) return;
    last = state;
    parentPort!.postMessage(state);
  } catch (err) {
    // Busy: the next pass tries again. Anything else ends the thread, and the writer's commits checkpoint again
    // (wal-checkpointer.ts) rather than the log growing while every pass fails.
    if (!/^SQLITE_(BUSY|LOCKED)/.test((err as { code?: string }).code ?? '')) throw err;
  }
}, intervalMs);
