import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import { LocalWakeups } from './local-wakeups.js';
import { eventBody, RUN_END_PREFIX, type LogRetention, type LoggedEvent, type RunEvent, type RunEvents } from './types.js';

/**
 * Run events in the PostgreSQL metadata database, so API replicas and workers on other machines share
 * them. A reader in the publishing process is woken at once; others poll, as with SQLite (readers
 * wait at most a few tens of milliseconds between reads; see docs/scale-out.md for why not LISTEN/NOTIFY).
 */
export class PgRunEvents implements RunEvents {
  private readonly wakeups = new LocalWakeups();

  constructor(private readonly db: Kysely<Database>) {}

  async publish(runKey: string, events: RunEvent[]): Promise<void> {
    if (!events.length) return;
    const now = Date.now();
    await this.db.transaction().execute(async (trx) => {
      // Readers resume after the last seq they saw, so a run's events must commit in seq order. Two
      // publishers of one run (parallel components) would otherwise race: the later seq could commit
      // first and the reader skip the earlier one. The lock, held to commit, queues them.
      await sql`select pg_advisory_xact_lock(hashtextextended(${runKey}, 0))`.execute(trx);
      await trx
        .insertInto('run_events')
        .values(events.map((e) => ({ run_key: runKey, body: eventBody(e), create_time: now })))
        .execute();
    });
    this.wakeups.notify(runKey);
  }

  async ended(runKey: string): Promise<boolean> {
    const row = await this.db.selectFrom('run_events').select(sql<number>`1`.as('found'))
      .where('run_key', '=', runKey).where(sql<string>`substr(body, 1, ${RUN_END_PREFIX.length})`, '=', RUN_END_PREFIX)
      .limit(1).executeTakeFirst();
    return row !== undefined;
  }

  async read(runKey: string, afterSeq: number): Promise<LoggedEvent[]> {
    const rows = await this.db
      .selectFrom('run_events')
      .select(['seq', 'body'])
      .where('run_key', '=', runKey)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(500)
      .execute();
    return rows.map((r) => ({ seq: r.seq, event: JSON.parse(r.body) as RunEvent }));
  }

  wait(runKey: string, timeoutMs: number): Promise<void> {
    return this.wakeups.wait(runKey, timeoutMs);
  }

  async remove(runKeys: string[]): Promise<void> {
    if (runKeys.length) await this.db.deleteFrom('run_events').where('run_key', 'in', runKeys).execute();
  }

  async purgeLogs(retention: LogRetention): Promise<number> {
    const now = Date.now();
    const res = await sql`
      delete from run_events where run_key in (
        select run_key from run_events group by run_key
        having max(case when substr(body, 1, ${RUN_END_PREFIX.length}) = ${RUN_END_PREFIX} then create_time end) < ${now - retention.endedMs}
            or max(create_time) < ${now - retention.idleMs})`.execute(this.db);
    return Number(res.numAffectedRows ?? 0);
  }
}
