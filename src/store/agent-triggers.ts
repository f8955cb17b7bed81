import type { Kysely, Selectable, Updateable } from 'kysely';
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

  /** Everything of a deleted agent: its schedules' rows and its calls. */
  async deleteOfAgent(agentId: string): Promise<void> {
    await this.db.deleteFrom('agent_schedules').where('agent_id', '=', agentId).execute();
    await this.db.deleteFrom('agent_trigger_calls').where('agent_id', '=', agentId).execute();
  }
}
