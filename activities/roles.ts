import type { WorkerRole } from '../src/engine/task-queues.js';
import type { ActivityDeps } from './deps.js';
import { datasetActivities } from './datasets.js';
import { parseActivities } from './parse/index.js';
import { agentActivities } from './agents.js';
import { agentTriggerActivities } from './agent-triggers.js';
import { agentFileActivities } from './agent-files.js';
import { memoryActivities } from './memories.js';
import { graphActivities } from './graph.js';
import { raptorActivities } from './raptor.js';

/**
 * The activities a worker of `role` registers on the role's task queue: those of the role's workflows
 * (ROLE_WORKFLOWS) and nothing else, so a worker polling only `agents` can never run a parse step.
 */
export function roleActivities(role: WorkerRole, deps: ActivityDeps): object {
  switch (role) {
    case 'parse':
      return {
        ...parseActivities(deps),
        ...datasetActivities(deps),
        ...graphActivities(deps),
        ...raptorActivities(deps),
        // Memory extractions started before memory had its own queue run on this one: they still finish.
        ...memoryActivities(deps),
      };
    case 'agents':
      return { ...agentActivities(deps), ...agentTriggerActivities(deps), ...agentFileActivities(deps) };
    case 'memory':
      return memoryActivities(deps);
  }
}
