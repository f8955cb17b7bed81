import { sql, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { AgentSchedulesTable, AgentTriggerCallsTable, Database } from './schema.js';

export type AgentScheduleRow = Selectable<AgentSchedulesTable>;
export type AgentTriggerCallRow = Selectable<AgentTriggerCallsTable>;

/** An agent's schedules and the calls of its triggers (webhook, webhook test, schedule runs). */
export class AgentTriggerRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insertSchedule(row: AgentScheduleRow): Promise<void> {
    await this.db.insertInto('agent_schedules').values(row).execute();
  }

  schedule(id: string): Promise<AgentScheduleRow | undefined> {
    return this.db.selectFrom('agent_schedules').selectAll().where('id', '=', id).executeTakeFirst();
  }

  schedulesOfAgent(agentId: string): Promise<AgentScheduleRow[]> {
    return this.db.selectFrom('agent_schedules').selectAll().where('agent_id', '=', agentId).orderBy('create_time', 'desc').orderBy('id').execute();
  }

  /** Every schedule, oldest first (the start's check that Temporal still has each). */
  allSchedules(): Promise<AgentScheduleRow[]> {
    return this.db.selectFrom('agent_schedules').selectAll().orderBy('create_time').orderBy('id').execute();
  }

  async updateScheduleSpec(id: string, spec: string): Promise<void> {
    await this.db.updateTable('agent_schedules').set({ spec }).where('id', '=', id).execute();
  }

  async deleteSchedule(id: string): Promise<void> {
    await this.db.deleteFrom('agent_schedules').where('id', '=', id).execute();
  }

  async insertCall(row: AgentTriggerCallRow): Promise<void> {
    await this.db.insertInto('agent_trigger_calls').values(row).execute();
  }

  async updateCall(id: string, patch: Updateable<AgentTriggerCallsTable>): Promise<void> {
    await this.db.updateTable('agent_trigger_calls').set(patch).where('id', '=', id).execute();
  }

  /** The agent's latest calls of the given triggers, newest first. */
  recentCalls(agentId: string, triggers: string[], offset: number, limit: number): Promise<AgentTriggerCallRow[]> {
    return this.db
      .selectFrom('agent_trigger_calls')
      .selectAll()
      .where('agent_id', '=', agentId)
      .where('trigger', 'in', triggers)
      .orderBy('create_time', 'desc')
      .orderBy('id', 'desc')
      .offset(offset)
      .limit(limit)
      .execute();
  }

  async countCalls(agentId: string, triggers: string[]): Promise<number> {
    const row = await this.db
      .selectFrom('agent_trigger_calls')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('agent_id', '=', agentId)
      .where('trigger', 'in', triggers)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** A schedule's latest runs, newest first. */
  callsOfSchedule(scheduleId: string, limit: number): Promise<AgentTriggerCallRow[]> {
    return this.db.selectFrom('agent_trigger_calls').selectAll().where('schedule_id', '=', scheduleId).orderBy('create_time', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  /** Everything of a deleted agent: its schedules' rows, its calls and its webhook's bucket. */
  async deleteOfAgent(agentId: string): Promise<void> {
    await this.db.deleteFrom('agent_schedules').where('agent_id', '=', agentId).execute();
    await this.db.deleteFrom('agent_trigger_calls').where('agent_id', '=', agentId).execute();
    await this.db.deleteFrom('agent_webhook_rates').where('agent_id', '=', agentId).execute();
  }

  /**
   * Takes one call from the agent's token bucket (`limit` calls, refilled evenly over `windowMs`), in one
   * statement, so every API replica on this database shares the bucket: two replicas together allow the
   * limit, not twice it. Answers 0 when taken, else the milliseconds until a call is free again. A clock
   * behind the bucket's (another replica's) refills nothing and never moves the bucket back.
   */
  async takeWebhookCall(agentId: string, limit: number, windowMs: number, now: number): Promise<number> {
    const perMs = limit / windowMs;
    // The bucket as of now: refilled for the time since its last refill, at most full.
    // Typed casts: PostgreSQL would otherwise take a parameter's type from its neighbour (a bigint rate).
    const at = sql`cast(${Math.floor(now)} as bigint)`;
    const full = sql`cast(${limit} as double precision)`;
    const gained = sql`(case when ${at} > r.refilled_at then ${at} - r.refilled_at else 0 end) * cast(${perMs} as double precision)`;
    const refilled = sql`(case when r.tokens + ${gained} > ${full} then ${full} else r.tokens + ${gained} end)`;
    const taken = await sql<{ tokens: number }>`
      insert into agent_webhook_rates as r (agent_id, tokens, refilled_at) values (${agentId}, ${full} - 1, ${at})
      on conflict (agent_id) do update set tokens = ${refilled} - 1, refilled_at = case when ${at} > r.refilled_at then ${at} else r.refilled_at end
      where ${refilled} >= 1
      returning tokens`.execute(this.db);
    if (taken.rows.length) return 0;
    const row = await this.db.selectFrom('agent_webhook_rates').select(['tokens', 'refilled_at']).where('agent_id', '=', agentId).executeTakeFirst();
    if (!row) return 0;
    const tokens = Math.min(limit, Number(row.tokens) + Math.max(0, now - Number(row.refilled_at)) * perMs);
    return Math.max(1, Math.ceil((1 - tokens) / perMs));
  }
}
