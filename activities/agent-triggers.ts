import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps.js';
import type { ScheduledRunInput, ScheduledRunResult } from '../src/triggers/scheduled-run.js';
import type { StoredScheduleSpec } from '../src/services/agent-schedules.js';
import { AgentService } from '../src/services/agents.js';
import { AgentSessionService } from '../src/services/agent-sessions.js';
import { ownerPrincipal } from '../src/services/agent-trigger-calls.js';
import { ApiError } from '../src/errors.js';
import { nowMs } from '../src/time.js';

/** Activities of the agents' triggers (the agents role). */
export function agentTriggerActivities(deps: ActivityDeps) {
  return {
    /**
     * Starts a schedule's turn through the same AgentSessionService.startTurn as an HTTP call, as the
     * agent's owner, and logs it with the schedule. A retried attempt finds its log row and starts nothing twice.
     */
    async agentScheduledTurn(input: ScheduledRunInput): Promise<ScheduledRunResult> {
      const { store } = deps;
      const info = Context.current().info;
      // One log row per scheduled run (its workflow id carries the run's time).
      const callId = createHash('sha1').update(info.workflowExecution?.workflowId ?? info.activityId).digest('hex').slice(0, 32);
      const logged = (await store.agentTriggers.callsOfSchedule(input.scheduleId, 20)).find((c) => c.id === callId);
      if (logged) return { sessionId: logged.session_id ?? undefined, messageId: logged.message_id ?? undefined, error: logged.error ?? undefined };
      const schedule = await store.agentTriggers.schedule(input.scheduleId);
      const agent = schedule ? await store.agents.byId(schedule.agent_id) : undefined;
      if (!schedule || !agent) {
        // Its agent was deleted (or the schedule was, a moment ago): nothing more is to run.
        await deps.agentSchedules.delete(input);
        return { removed: true };
      }
      const spec = JSON.parse(schedule.spec) as StoredScheduleSpec;
      const row = { id: callId, agent_id: agent.id, tenant_id: agent.tenant_id, trigger: 'schedule', schedule_id: schedule.id, method: null, status: null, create_time: nowMs() };
      const sessions = new AgentSessionService(store, new AgentService(store), deps.agentRuns, deps.events);
      try {
        const turn = await sessions.startTurn(ownerPrincipal(agent), { agent_id: agent.id, query: '', inputs: spec.inputs, source: 'schedule' });
        await store.agentTriggers.insertCall({ ...row, session_id: turn.sessionId, message_id: turn.messageId, error: null });
        return { sessionId: turn.sessionId, messageId: turn.messageId };
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        await store.agentTriggers.insertCall({ ...row, session_id: null, message_id: null, error: err.message });
        return { error: err.message };
      }
    },
  };
}
