import { EventEmitter } from 'node:events';
import type { Sqlite } from '../store/db.js';
import type { LoggedEvent, RunEvent, RunEvents } from './types.js';

/**
 * Run events in the shared SQLite file. A reader in the process that published is woken at once; a
 * reader in another process (a separate `cairn worker` publishes, the API reads) polls the log.
 */
export class SqliteRunEvents implements RunEvents {
  private readonly local = new EventEmitter().setMaxListeners(0);
  private readonly insert;
  private readonly select;

  constructor(private readonly sqlite: Sqlite) {
    this.insert = sqlite.prepare('insert into run_events (run_key, body, create_time) values (?, ?, ?)');
    this.select = sqlite.prepare('select seq, body from run_events where run_key = ? and seq > ? order by seq limit 500');
  }

  async publish(runKey: string, events: RunEvent[]): Promise<void> {
    if (!events.length) return;
    const now = Date.now();
    this.sqlite.transaction(() => {
      for (const e of events) this.insert.run(runKey, JSON.stringify(e), now);
    })();
    this.local.emit(runKey);
  }

  async read(runKey: string, afterSeq: number): Promise<LoggedEvent[]> {
    const rows = this.select.all(runKey, afterSeq) as { seq: number; body: string }[];
    return rows.map((r) => ({ seq: r.seq, event: JSON.parse(r.body) as RunEvent }));
  }

  wait(runKey: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.local.off(runKey, done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.local.once(runKey, done);
    });
  }

  async remove(runKeys: string[]): Promise<void> {
    const del = this.sqlite.prepare('delete from run_events where run_key = ?');
    this.sqlite.transaction(() => runKeys.forEach((k) => del.run(k)))();
  }

  async purgeOlderThan(ageMs: number): Promise<number> {
    return this.sqlite.prepare('delete from run_events where create_time < ?').run(Date.now() - ageMs).changes;
  }
}
