import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../threads.js';
import type { Sqlite } from './sqlite-database.js';

/** What `PRAGMA wal_checkpoint` reports: frames in the log, and how many of them are in the database file. */
export interface WalState {
  busy: number;
  log: number;
  checkpointed: number;
}

/** What the checkpoint thread is started with. */
export interface CheckpointerData {
  file: string;
  intervalMs: number;
  restartFrames: number;
}

export interface WalCheckpointerOptions {
  /** How often the thread copies the log (ms). */
  intervalMs?: number;
  /** Once the log has this many frames (4 KB pages), the writer lets it start over (see restartIfLong). */
  restartFrames?: number;
}

const DEFAULT_INTERVAL_MS = 250;
const DEFAULT_RESTART_FRAMES = 8192;
/** A frame of the log: a page (SQLite's default 4 KB) and its header. */
const WAL_PAGE_BYTES = 4096 + 24;
/** SQLite's own default, put back if the thread dies, so that the log never grows without end. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

/**
 * Copies the write-ahead log of the writer's database file into the file on a thread of its own, instead of in
 * the writer's commits. SQLite's automatic checkpoint runs inside the commit that takes the log past 1,000 pages,
 * on the connection that commits: for Cairn that is the event loop's, and the copy (with its syncs) was ~40% of
 * the commits' time in a large document's writes (`npx tsx bench/ingest/index-writes.ts --chunks 145000
 * [--sqlite-checkpoints]`; docs/operations.md, "Large documents").
 *
 * The log starts over only when a write begins with all of it copied, which a thread running beside a steady
 * writer never arranges: once the log is long, the writer checkpoints too, between transactions, as soon as the
 * thread reports a pass (so it copies only what was committed since), and its next write starts the log over.
 */
export class WalCheckpointer {
  private state: WalState = { busy: 0, log: 0, checkpointed: 0 };
  private readonly worker: Worker;
  private readonly timer: NodeJS.Timeout;
  private readonly restartFrames: number;

  constructor(
    private readonly db: Sqlite,
    options: WalCheckpointerOptions = {},
  ) {
    const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.restartFrames = options.restartFrames ?? DEFAULT_RESTART_FRAMES;
    db.pragma('wal_autocheckpoint = 0');
    // A log that grew past this during a long write is cut back to it when it starts over.
    db.pragma(`journal_size_limit = ${this.restartFrames * 2 * WAL_PAGE_BYTES}`);
    const data: CheckpointerData = { file: db.name, intervalMs, restartFrames: this.restartFrames };
    this.worker = startModuleWorker(new URL('./wal-checkpoint-worker.ts', import.meta.url), { workerData: data });
    this.worker.unref();
    this.worker.on('message', (state: WalState) => {
      this.state = state;
      this.restartIfLong();
    });
    this.worker.on('error', () => this.fallBack());
    this.worker.on('exit', () => this.fallBack());
    this.timer = setInterval(() => this.restartIfLong(), intervalMs);
    this.timer.unref();
  }

  /** The log as last seen by the thread or the writer. */
  wal(): WalState {
    return this.state;
  }

  private restartIfLong(): void {
    if (this.state.log < this.restartFrames || !this.db.open || this.db.inTransaction) return;
    try {
      const [state] = this.db.pragma('wal_checkpoint(PASSIVE)') as WalState[];
      if (!state) return;
      // All copied: the next write starts the log over, so there is nothing to do until the thread says otherwise.
      this.state = state.checkpointed === state.log ? { ...state, log: 0, checkpointed: 0 } : state;
    } catch {
      // Busy: the next tick tries again.
    }
  }

  /** Without the thread, SQLite checkpoints in the writer's commits again. */
  private fallBack(): void {
    clearInterval(this.timer);
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.worker.terminate();
  }
}
