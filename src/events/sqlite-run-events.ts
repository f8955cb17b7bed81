import type { Sqlite } from '../index/sqlite-database.js';
import { LocalWakeups } from './local-wakeups.js';
import { eventBody, RUN_END_PREFIX, type LogRetention, type LoggedEvent, type RunEvent, type RunEvents } from './types.js';

/**
 * Run events in the embedded SQLite file. A reader in the process that published is woken at once; a
 * reader in another process (a separate `cairn worker` publishes, the API reads) polls the log.
 * SQLite has one writer at a time, so sequence numbers are committed in order.
 */
export class SqliteRunEvents implements RunEvents {
  private readonly wakeups = new LocalWakeups();
  private readonly insert;
  private readonly select;
  private readonly end;

  constructor(private readonly sqlite: Sqlite) {
    // The metadata migration 0004 makes the same table when the metadata lives in this file.
    sqlite.exec(`
      create table if not exists "run_events" ("seq" integer primary key autoincrement, "run_key" varchar(64) not null, "body" text not null, "create_time" bigint not null);
      create index if not exists "run_events_run" on "run_events" ("run_key", "seq");
    `);
    this.insert = sqlite.prepare('insert into run_events (run_key, body, create_time) values (?, ?, ?)');
    this.select = sqlite.prepare('select seq, body from run_events where run_key = ? and seq > ? order by seq limit 500');
    this.end = sqlite.prepare('select 1 from run_events where run_key = ? and substr(body, 1, ?) = ? limit 1');
  }

  async ended(runKey: string): Promise<boolean> {
    return this.end.get(runKey, RUN_END_PREFIX.length, RUN_END_PREFIX) !== undefined;
  }

  async publish(runKey: string, events: RunEvent[]): Promise<void> {
    if (!events.length) return;
    const now = Date.now();
    this.sqlite.transaction(() => {
      for (const e of events) this.insert.run(runKey, eventBody(e), now);
    })();
    this.wakeups.notify(runKey);
  }

  async read(runKey: string, afterSeq: number): Promise<LoggedEvent[]> {
    const rows = this.select.all(runKey, afterSeq) as { seq: number; body: string }[];
    return rows.map((r) => ({ seq: r.seq, event: JSON.parse(r.body) as RunEvent }));
  }

  wait(runKey: string, timeoutMs: number): Promise<void> {
    return this.wakeups.wait(runKey, timeoutMs);
  }

  async remove(runKeys: string[]): Promise<void> {
    const del = this.sqlite.prepare('delete from run_events where run_key = ?');
    this.sqlite.transaction(() => runKeys.forEach((k) => del.run(k)))();
  }

  async purgeLogs(retention: LogRetention): Promise<number> {
    const now = Date.now();
    return this.sqlite
      .prepare(
        `delete from run_events where run_key in (
           select run_key from run_events group by run_key
           having max(case when substr(body, 1, ?) = ? then create_time end) < ? or max(create_time) < ?)`,
      )
      .run(RUN_END_PREFIX.length, RUN_END_PREFIX, now - retention.endedMs, now - retention.idleMs).changes;
  }
}
