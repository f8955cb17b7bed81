import type { Kysely, Selectable } from 'kysely';
import type { AgentRunStepsTable, AgentRunsTable, Database } from './schema.js';

export type AgentRunRow = Selectable<AgentRunsTable>;
export type AgentRunStepRow = Selectable<AgentRunStepsTable>;

/**
 * The durable records of agent turns. Every write is keyed by the run id, so a retried write (a worker
 * killed mid-way, a local activity run again) leaves exactly one run with one set of steps.
 */
export class AgentRunRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** The run started: written once; a run already recorded (even already ended) is left as it is. */
  async started(row: AgentRunRow): Promise<void> {
    await this.db.insertInto('agent_runs').values(row).onConflict((oc) => oc.column('id').doNothing()).execute();
  }

  /**
   * The run ended: its row and all of its steps, replacing whatever an earlier attempt wrote, in one
   * transaction. The start time of a row written when the run started is kept (it has milliseconds).
   */
  async ended(row: AgentRunRow, steps: AgentRunStepRow[]): Promise<void> {
    const { id, start_time: _start, ...rest } = row;
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('agent_runs').values(row).onConflict((oc) => oc.column('id').doUpdateSet(rest)).execute();
      await trx.deleteFrom('agent_run_steps').where('run_id', '=', id).execute();
      // Batches keep each statement under SQLite's bound-parameter limit.
      for (let i = 0; i < steps.length; i += 50) await trx.insertInto('agent_run_steps').values(steps.slice(i, i + 50)).execute();
    });
  }

  byId(id: string): Promise<AgentRunRow | undefined> {
    return this.db.selectFrom('agent_runs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** A session's runs, newest first. */
  ofSession(sessionId: string, offset: number, limit: number): Promise<AgentRunRow[]> {
    return this.db
      .selectFrom('agent_runs')
      .selectAll()
      .where('session_id', '=', sessionId)
      .orderBy('start_time', 'desc')
      .orderBy('id', 'desc')
      .offset(offset)
      .limit(limit)
      .execute();
  }

  async countOfSession(sessionId: string): Promise<number> {
    const row = await this.db.selectFrom('agent_runs').where('session_id', '=', sessionId).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Steps of these runs, each run's in order. */
  steps(runIds: string[]): Promise<AgentRunStepRow[]> {
    if (!runIds.length) return Promise.resolve([]);
    return this.db.selectFrom('agent_run_steps').selectAll().where('run_id', 'in', runIds).orderBy('run_id').orderBy('step_index').execute();
  }

  step(runId: string, index: number): Promise<AgentRunStepRow | undefined> {
    return this.db.selectFrom('agent_run_steps').selectAll().where('run_id', '=', runId).where('step_index', '=', index).executeTakeFirst();
  }

  /** Drops the runs of deleted sessions. */
  async deleteSessions(sessionIds: string[]): Promise<void> {
    if (!sessionIds.length) return;
    const runIds = this.db.selectFrom('agent_runs').select('id').where('session_id', 'in', sessionIds);
    await this.db.deleteFrom('agent_run_steps').where('run_id', 'in', runIds).execute();
    await this.db.deleteFrom('agent_runs').where('session_id', 'in', sessionIds).execute();
  }
}
