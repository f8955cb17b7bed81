import type { ActivityDeps } from './deps.js';
import { datasetActivities } from './datasets.js';
import { parseActivities } from './parse/index.js';
import { agentActivities } from './agents.js';
import { agentTriggerActivities } from './agent-triggers.js';
import { agentFileActivities } from './agent-files.js';
import { memoryActivities } from './memories.js';
import { raptorActivities } from './raptor.js';
import { graphActivities } from './graph.js';

export type { ActivityDeps } from './deps.js';

/** All activity implementations, bound to the service's dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...datasetActivities(deps),
    ...parseActivities(deps),
    ...agentActivities(deps),
    ...agentTriggerActivities(deps),
    ...agentFileActivities(deps),
    ...memoryActivities(deps),
    ...graphActivities(deps),
    ...raptorActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
