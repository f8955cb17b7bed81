import { Context } from '@temporalio/activity';
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import { WORKFLOWS, workflowIds, workflowTaskQueue } from './task-queues.js';
import type { WorkflowInput } from './workflow-starts.js';
import { WorkflowClient } from './workflow-client.js';
import type { AgentRunControl } from '../services/agent-sessions.js';
import type { AgentScheduleControl, ScheduleIds, ScheduleState } from '../services/agent-schedules.js';
import type { ScheduleTiming } from '../triggers/schedule-spec.js';
import { badRequest } from '../errors.js';

/**
 * An agent's schedules as Temporal Schedules: each action starts workflow `agentScheduledRun` on the
 * agents queue, which starts the turn; Temporal keeps the timing, the paused state and the next run times.
 */
export class TemporalAgentSchedules implements AgentScheduleControl {
  /** `client` is called at each use: inside an activity it is the worker's own client (activityAgentSchedules). */
  constructor(
    private readonly client: () => Client,
    private readonly taskQueue: string,
  ) {}

  async create(ids: ScheduleIds, timing: ScheduleTiming, paused: boolean): Promise<void> {
    const input: WorkflowInput<typeof WORKFLOWS.agentScheduledRun> = { agentId: ids.agentId, scheduleId: ids.scheduleId };
    try {
      await this.client().schedule.create({
        scheduleId: workflowIds.agentSchedule(ids.agentId, ids.scheduleId),
        spec: {
          ...(timing.cron ? { cronExpressions: [timing.cron] } : { intervals: [{ every: timing.intervalSeconds! * 1000 }] }),
          timezone: timing.timezone,
        },
        action: {
          type: 'startWorkflow',
          workflowType: WORKFLOWS.agentScheduledRun,
          args: [input],
          taskQueue: workflowTaskQueue(WORKFLOWS.agentScheduledRun, this.taskQueue),
          // Temporal appends each run's time to this id.
          workflowId: workflowIds.agentScheduledRun(ids.agentId, ids.scheduleId),
        },
        // A run still starting its turn when the next is due makes the next wait for nothing: it is skipped.
        policies: { overlap: 'SKIP', catchupWindow: '1 minute' },
        state: { paused, note: paused ? 'paused when created' : undefined },
      });
    } catch (err) {
      // Temporal refuses what it cannot schedule (e.g. a time zone its database lacks): the caller's mistake.
      if ((err as { code?: number }).code === 3) throw badRequest(`Temporal refused the schedule: ${(err as Error).message}`);
      throw err;
    }
  }

  async describe(ids: ScheduleIds): Promise<ScheduleState | undefined> {
    try {
      const d = await this.client().schedule.getHandle(workflowIds.agentSchedule(ids.agentId, ids.scheduleId)).describe();
      return { paused: d.state.paused, nextRunTimes: d.info.nextActionTimes.map((t) => t.getTime()), runsTaken: d.info.numActionsTaken };
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) return undefined;
      throw err;
    }
  }

  async setPaused(ids: ScheduleIds, paused: boolean): Promise<void> {
    const handle = this.client().schedule.getHandle(workflowIds.agentSchedule(ids.agentId, ids.scheduleId));
    if (paused) await handle.pause('paused through the API');
    else await handle.unpause('resumed through the API');
  }

  async delete(ids: ScheduleIds): Promise<void> {
    try {
      await this.client().schedule.getHandle(workflowIds.agentSchedule(ids.agentId, ids.scheduleId)).delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
  }
}

/** For activities (a scheduled run whose agent is gone deletes its schedule): the worker's own client. */
export function activityAgentSchedules(taskQueue: string): AgentScheduleControl {
  return new TemporalAgentSchedules(() => Context.current().client, taskQueue);
}

/** For activities (a scheduled run starts its turn): agent runs through the worker's own client. */
export function activityAgentRuns(taskQueue: string): AgentRunControl {
  const current = () => WorkflowClient.overClient(Context.current().client, taskQueue);
  return {
    startAgentRun: (input) => current().startAgentRun(input),
    submitAgentTurn: (input, strategy) => current().submitAgentTurn(input, strategy),
    cancelAgentRun: (agentId, sessionId) => current().cancelAgentRun(agentId, sessionId),
    agentRunOpen: (agentId, sessionId) => current().agentRunOpen(agentId, sessionId),
    openAgentRun: (agentId, sessionId) => current().openAgentRun(agentId, sessionId),
    waitAgentRunMovedOn: (agentId, sessionId, runId, ms) => current().waitAgentRunMovedOn(agentId, sessionId, runId, ms),
  };
}
