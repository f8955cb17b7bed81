import type { MetaStore } from '../store/index.js';
import type { AgentRow } from '../store/agents.js';
import type { AgentScheduleRow } from '../store/agent-triggers.js';
import type { Principal } from './auth.js';
import type { AgentService } from './agents.js';
import type { RunInputs } from '../agents/dsl.js';
import { scheduleTiming, type ScheduleTiming } from '../triggers/schedule-spec.js';
import { callView } from './agent-trigger-calls.js';
import { DATAFLOW_CANVAS } from '../pipelines/names.js';
import { badRequest, forbidden, notFound } from '../errors.js';
import { isId, newId } from '../ids.js';
import { nowMs, toSeconds } from '../time.js';

export interface ScheduleIds {
  agentId: string;
  scheduleId: string;
}

/** What Temporal knows of a schedule. */
export interface ScheduleState {
  paused: boolean;
  /** Unix ms of the next runs. */
  nextRunTimes: number[];
  runsTaken: number;
}

/** Where schedules run (Temporal Schedules: src/engine/agent-schedules.ts). */
export interface AgentScheduleControl {
  create(ids: ScheduleIds, timing: ScheduleTiming, paused: boolean): Promise<void>;
  /** undefined when the schedule is gone. */
  describe(ids: ScheduleIds): Promise<ScheduleState | undefined>;
  setPaused(ids: ScheduleIds, paused: boolean): Promise<void>;
  /** Idempotent: a missing schedule is fine. */
  delete(ids: ScheduleIds): Promise<void>;
}

export interface CreateScheduleInput {
  cron?: string;
  interval?: number | string;
  timezone?: string;
  /** Begin's inputs: `{field: value}` or `{field: {value}}`. */
  inputs?: Record<string, unknown>;
  paused?: boolean;
}

/** What a schedule row's spec holds: its timing, the Begin inputs of each run, and whether it was paused last. */
export interface StoredScheduleSpec extends ScheduleTiming {
  inputs: RunInputs;
  paused?: boolean;
}

/** Recent runs shown with a schedule. */
const RECENT_RUNS = 10;

/**
 * An agent's schedules: each run starts a turn as a new session (source "schedule"), listed with the
 * agent's other sessions. The row keeps what was asked; Temporal runs it and knows paused and next runs.
 */
export class AgentScheduleService {
  constructor(
    private readonly store: MetaStore,
    private readonly agents: AgentService,
    private readonly schedules: AgentScheduleControl,
  ) {}

  async create(p: Principal, agentId: string, input: CreateScheduleInput) {
    const agent = await this.ownAgent(p, agentId);
    if (agent.canvas_category === DATAFLOW_CANVAS) throw badRequest('A pipeline cannot be scheduled as an agent: it runs on documents.');
    const timing = scheduleTiming(input);
    const spec: StoredScheduleSpec = { ...timing, inputs: runInputs(input.inputs), paused: input.paused === true };
    const row: AgentScheduleRow = { id: newId(), agent_id: agent.id, tenant_id: agent.tenant_id, created_by: p.userId, spec: JSON.stringify(spec), create_time: nowMs() };
    // The row first: the first run (it may come at once) finds it.
    await this.store.agentTriggers.insertSchedule(row);
    try {
      await this.schedules.create(idsOf(row), timing, input.paused === true);
    } catch (err) {
      await this.store.agentTriggers.deleteSchedule(row.id);
      throw err;
    }
    return this.view(row);
  }

  async list(p: Principal, agentId: string) {
    const agent = await this.agents.get(p, agentId);
    const rows = await this.store.agentTriggers.schedulesOfAgent(agent.id);
    const schedules = await Promise.all(rows.map((r) => this.view(r)));
    return { schedules, total: schedules.length };
  }

  async detail(p: Principal, agentId: string, scheduleId: string) {
    return this.view(await this.scheduleOf(p, agentId, scheduleId, false));
  }

  async setPaused(p: Principal, agentId: string, scheduleId: string, paused: boolean) {
    const row = await this.scheduleOf(p, agentId, scheduleId, true);
    await this.schedules.setPaused(idsOf(row), paused);
    // Kept in the row too: a schedule restored into another Temporal (restoreMissing) keeps its state.
    row.spec = JSON.stringify({ ...(JSON.parse(row.spec) as StoredScheduleSpec), paused });
    await this.store.agentTriggers.updateScheduleSpec(row.id, row.spec);
    return this.view(row);
  }

  async delete(p: Principal, agentId: string, scheduleId: string): Promise<void> {
    const row = await this.scheduleOf(p, agentId, scheduleId, true);
    await this.schedules.delete(idsOf(row));
    await this.store.agentTriggers.deleteSchedule(row.id);
  }

  /**
   * Creates in Temporal every schedule it lacks (a Temporal server started afresh, or `cairn migrate-to`, which
   * copies the rows but not Temporal's state), paused as it was last; a schedule whose agent is gone goes.
   * Returns how many were restored.
   */
  async restoreMissing(): Promise<number> {
    let restored = 0;
    for (const row of await this.store.agentTriggers.allSchedules()) {
      if (await this.schedules.describe(idsOf(row))) continue;
      if (!(await this.store.agents.byId(row.agent_id))) {
        await this.store.agentTriggers.deleteSchedule(row.id);
        continue;
      }
      const spec = JSON.parse(row.spec) as StoredScheduleSpec;
      const timing: ScheduleTiming = spec.cron ? { cron: spec.cron, timezone: spec.timezone } : { intervalSeconds: spec.intervalSeconds, timezone: spec.timezone };
      await this.schedules.create(idsOf(row), timing, spec.paused === true);
      restored += 1;
    }
    return restored;
  }

  /** A deleted agent's schedules stop and go, with its trigger logs (called after the agent's own delete). */
  async forgetAgent(agentId: string): Promise<void> {
    for (const row of await this.store.agentTriggers.schedulesOfAgent(agentId)) await this.schedules.delete(idsOf(row));
    await this.store.agentTriggers.deleteOfAgent(agentId);
  }

  private async view(row: AgentScheduleRow) {
    const spec = JSON.parse(row.spec) as StoredScheduleSpec;
    const state = await this.schedules.describe(idsOf(row));
    const recent = await this.store.agentTriggers.callsOfSchedule(row.id, RECENT_RUNS);
    return {
      id: row.id,
      agent_id: row.agent_id,
      ...(spec.cron ? { cron: spec.cron } : { interval: spec.intervalSeconds }),
      timezone: spec.timezone,
      inputs: spec.inputs,
      paused: state?.paused ?? null,
      next_run_times: (state?.nextRunTimes ?? []).map(toSeconds),
      runs_taken: state?.runsTaken ?? 0,
      recent_runs: await Promise.all(recent.map((r) => callView(this.store, r))),
      create_time: toSeconds(row.create_time),
    };
  }

  /** Anyone who may use the agent sees its schedules; only its owner changes them. */
  private async scheduleOf(p: Principal, agentId: string, scheduleId: string, toChange: boolean): Promise<AgentScheduleRow> {
    const agent = toChange ? await this.ownAgent(p, agentId) : await this.agents.get(p, agentId);
    const row = isId(scheduleId) ? await this.store.agentTriggers.schedule(scheduleId) : undefined;
    if (!row || row.agent_id !== agent.id) throw notFound(`Schedule '${scheduleId}' not found for agent '${agentId}'`);
    return row;
  }

  private async ownAgent(p: Principal, agentId: string): Promise<AgentRow> {
    const agent = await this.agents.get(p, agentId);
    if (agent.tenant_id !== p.tenantId) throw forbidden('Only the owner of the agent is authorized for this operation.');
    return agent;
  }
}

const idsOf = (row: AgentScheduleRow): ScheduleIds => ({ agentId: row.agent_id, scheduleId: row.id });

/** Begin's inputs as a run takes them: `{field: {value}}` (a bare value is wrapped). */
function runInputs(inputs: unknown): RunInputs {
  if (inputs === undefined || inputs === null) return {};
  if (typeof inputs !== 'object' || Array.isArray(inputs)) throw badRequest('`inputs` must be an object: {field: value} or {field: {value}}');
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(inputs)) out[k] = typeof v === 'object' && v !== null && !Array.isArray(v) && 'value' in v ? v : { value: v };
  return out as RunInputs;
}
