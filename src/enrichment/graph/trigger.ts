import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { MetaStore } from '../../store/index.js';
import { WORKFLOWS, workflowIds } from '../../engine/task-queues.js';
import { startWorkflow } from '../../engine/workflow-starts.js';
import type { DatasetIndexInput } from '../../services/dataset-indexes.js';
import { graphSettings } from './settings.js';
import { GRAPH_RERUN_SIGNAL } from './signals.js';

export interface GraphRequest {
  datasetId: string;
  /** Whatever graphrag.use_graphrag says (a pipeline's Compiler step). */
  force?: boolean;
}

/**
 * What a finished parse does for the knowledge graph: with graphrag.use_graphrag on, the dataset's graph
 * job starts (the user who turned it on gets a graph, not silence), or, when one is running, it is asked
 * for one more pass at its end, so the new chunks are in the graph too. Chunks extracted before are
 * answered from the enrichment cache, so a pass after each parse costs only the new chunks' calls.
 *
 * A job started here has no task id yet: it claims the dataset's task row itself (GraphJobs.claim), so
 * parses finishing at the same moment cannot leave the row pointing at a job that is not running.
 * Returns what happened: 'off', 'started' or 'queued'.
 */
export async function requestGraphAfterParse(store: MetaStore, client: Client, taskQueue: string, request: GraphRequest): Promise<'off' | 'started' | 'queued'> {
  const ds = await store.datasets.byId(request.datasetId);
  if (!ds || (!request.force && !graphSettings(JSON.parse(ds.parser_config) as Record<string, unknown>).enabled)) return 'off';
  const workflowId = workflowIds.datasetIndex('graph', ds.id);
  const input: DatasetIndexInput = { datasetId: ds.id, tenantId: ds.tenant_id, taskId: '' };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await client.workflow.getHandle(workflowId).signal(GRAPH_RERUN_SIGNAL);
      return 'queued';
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    try {
      await startWorkflow(client, WORKFLOWS.graphIndex, { taskQueue, workflowId, args: [input] });
      return 'started';
    } catch (err) {
      // Another parse started it a moment ago: ask that one for another pass.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  throw new Error(`could not start or signal the graph job of dataset ${ds.id}`);
}
