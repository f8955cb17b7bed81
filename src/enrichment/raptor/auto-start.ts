import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WORKFLOWS, workflowIds, workflowTaskQueue } from '../../engine/task-queues.js';
import { startWorkflow } from '../../engine/workflow-starts.js';
import type { DatasetIndexInput } from '../../services/dataset-indexes.js';
import type { MetaStore } from '../../store/index.js';
import { newId } from '../../ids.js';
import { raptorEnabled } from './settings.js';
import { RAPTOR_SOURCES_CHANGED } from './signals.js';

/** Starting a dataset's RAPTOR job, or asking the running one to run again. */
export interface RaptorJobs {
  /** Starts the dataset's raptorIndex workflow; false when one is already running. */
  start(input: DatasetIndexInput): Promise<boolean>;
  /** Asks the dataset's running raptorIndex workflow for one more pass when it is done; false when none runs. */
  rerun(datasetId: string): Promise<boolean>;
}

export type AfterParse = 'off' | 'started' | 'rerun';

/**
 * What a document that finished parsing does for RAPTOR: when its parser_config or its dataset's turns
 * RAPTOR on, the dataset's job is started (a new task) or, when one is running, asked to run once more
 * after its current pass, so the new chunks are summarised too. `force`: whatever the configs say (a
 * pipeline's Compiler step). Many documents finishing together start
 * one job, which runs at most one pass more.
 */
export async function raptorAfterParse(store: MetaStore, jobs: RaptorJobs, documentId: string, force = false): Promise<AfterParse> {
  const doc = await store.documents.byId(documentId);
  if (!doc || doc.run !== 'DONE') return 'off';
  const dataset = await store.datasets.byId(doc.dataset_id);
  if (!dataset) return 'off';
  if (!force && !raptorEnabled(JSON.parse(doc.parser_config)) && !raptorEnabled(JSON.parse(dataset.parser_config))) return 'off';
  // Between a failed signal and a failed start another job started or ended: look again (a few times).
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await jobs.rerun(dataset.id)) return 'rerun';
    const taskId = newId();
    if (await jobs.start({ datasetId: dataset.id, tenantId: dataset.tenant_id, taskId })) {
      await store.enrichment.begin(dataset.id, 'raptor', taskId);
      return 'started';
    }
  }
  throw new Error(`could neither start nor signal the RAPTOR job of dataset ${dataset.id}`);
}

/** RaptorJobs on Temporal; `taskQueue` is the deployment's CAIRN_TASK_QUEUE. */
export class TemporalRaptorJobs implements RaptorJobs {
  constructor(private readonly client: () => Client, private readonly taskQueue: string) {}

  async start(input: DatasetIndexInput): Promise<boolean> {
    try {
      await startWorkflow(this.client(), WORKFLOWS.raptorIndex, {
        taskQueue: workflowTaskQueue(WORKFLOWS.raptorIndex, this.taskQueue),
        workflowId: workflowIds.datasetIndex('raptor', input.datasetId),
        args: [input],
      });
      return true;
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw err;
    }
  }

  async rerun(datasetId: string): Promise<boolean> {
    try {
      await this.client().workflow.getHandle(workflowIds.datasetIndex('raptor', datasetId)).signal(RAPTOR_SOURCES_CHANGED);
      return true;
    } catch (err) {
      // Never started, or already closed.
      if ((err as Error).name === 'WorkflowNotFoundError') return false;
      throw err;
    }
  }
}
