import { runComponentAlone, type Executor } from '../src/agents/interpreter.js';
import type { ComponentDebugInput } from '../src/agents/component-debug.js';
import { COMPONENT_ACTIVITY, type ComponentResult } from '../src/agents/run-types.js';
import { componentActivities } from './component-activities.js';

/**
 * One component of an agent run by itself with the inputs the editor gave it (RAGFlow's component
 * debug): pure components run here, I/O components as the activity a turn runs them with. Nobody
 * streams a debug run: its events are dropped, and its outputs are the workflow's result.
 */
export async function agentComponentDebug(input: ComponentDebugInput): Promise<ComponentResult> {
  const ids = { runKey: input.runKey, agentId: input.agentId, sessionId: input.sessionId, tenantId: input.tenantId, createdAt: input.createdAt };
  const exec: Executor = {
    emit: () => undefined,
    now: () => Date.now(),
    random: () => Math.random(),
    async call(call, options) {
      const activities = componentActivities(options);
      return activities[COMPONENT_ACTIVITY[call.kind]]({ ...ids, call, before: [], ...options, stream: false });
    },
  };
  return runComponentAlone(input, input.componentId, exec);
}
