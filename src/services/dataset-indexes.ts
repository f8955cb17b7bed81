import type { MetaStore } from '../store/index.js';
import { DATASET_INDEX_TYPES, type DatasetIndexType, type DatasetTask } from '../store/enrichment.js';
import type { Principal } from './auth.js';
import type { DatasetService } from './datasets.js';
import { badRequest } from '../errors.js';
import { newId } from '../ids.js';
import { toSeconds } from '../time.js';

/** How long a start waits for the previous job's workflow to close after its task row says it ended. */
const CLOSING_WAIT_MS = 5000;

/** What a dataset index workflow (raptorIndex, graphIndex) is started with. */
export interface DatasetIndexInput {
  datasetId: string;
  tenantId: string;
  taskId: string;
}

/** Starts and cancels the index workflows (WorkflowClient). */
export interface DatasetIndexControl {
  startDatasetIndex(type: DatasetIndexType, input: DatasetIndexInput): Promise<boolean>;
  cancelDatasetIndex(type: DatasetIndexType, datasetId: string): Promise<void>;
  waitDatasetIndex(type: DatasetIndexType, datasetId: string): Promise<void>;
}

/** What an index type keeps besides its task row (RAPTOR's summary chunks, the graph), removable. */
export interface DatasetIndexData {
  remove(datasetId: string): Promise<void>;
}

export function isDatasetIndexType(value: unknown): value is DatasetIndexType {
  return (DATASET_INDEX_TYPES as readonly unknown[]).includes(value);
}

/** 400 naming the valid types, RAGFlow's message. */
export function checkIndexType(value: unknown): DatasetIndexType {
  if (isDatasetIndexType(value)) return value;
  throw badRequest(`Invalid index type '${String(value ?? '')}'. Must be one of ${JSON.stringify([...DATASET_INDEX_TYPES])}`);
}

/**
 * A dataset's RAPTOR and knowledge-graph jobs (`/datasets/{id}/index?type=`): one running job of each
 * type per dataset, each a Temporal workflow that records its progress in the dataset's task row.
 */
export class DatasetIndexService {
  constructor(
    private readonly store: MetaStore,
    private readonly datasets: DatasetService,
    private readonly control: DatasetIndexControl,
    private readonly data: Record<DatasetIndexType, DatasetIndexData>,
  ) {}

  async start(p: Principal, datasetId: string, type: DatasetIndexType): Promise<{ task_id: string }> {
    const dataset = await this.datasets.get(p, datasetId);
    const totals = (await this.store.documents.totals([dataset.id])).get(dataset.id);
    if (!totals?.documents) throw badRequest(`No documents in Dataset ${dataset.id}`);
    const running = await this.store.enrichment.task(dataset.id, type);
    if (running?.status === 'running') throw alreadyRunning(running);
    const taskId = newId();
    const input = { datasetId: dataset.id, tenantId: dataset.tenant_id, taskId };
    let started = await this.control.startDatasetIndex(type, input);
    if (!started) {
      // The last job records its end just before its workflow closes: a start right after "done" waits that moment out.
      await Promise.race([this.control.waitDatasetIndex(type, dataset.id), new Promise((resolve) => setTimeout(resolve, CLOSING_WAIT_MS))]);
      started = await this.control.startDatasetIndex(type, input);
    }
    if (!started) {
      // A job started by another request (or a finished parse) between the check and here: that one keeps running.
      throw badRequest(`A ${type} task is already running for dataset ${dataset.id}.`);
    }
    // Only the starter that won records the task, so a loser never replaces the running job's row.
    await this.store.enrichment.begin(dataset.id, type, taskId);
    return { task_id: taskId };
  }

  /** The dataset's latest task of the type, or {} when it never had one. */
  async status(p: Principal, datasetId: string, type: DatasetIndexType): Promise<Record<string, unknown>> {
    const dataset = await this.datasets.get(p, datasetId);
    const task = await this.store.enrichment.task(dataset.id, type);
    return task ? taskView(task) : {};
  }

  /**
   * Cancels a running job (waiting until it has stopped) and, unless `wipe` is false, removes what the
   * type built and its task row.
   */
  async remove(p: Principal, datasetId: string, type: DatasetIndexType, wipe = true): Promise<void> {
    const dataset = await this.datasets.get(p, datasetId);
    const task = await this.store.enrichment.task(dataset.id, type);
    if (task?.status === 'running') {
      await this.control.cancelDatasetIndex(type, dataset.id);
      await this.control.waitDatasetIndex(type, dataset.id);
    }
    if (!wipe) return;
    await this.data[type].remove(dataset.id);
    await this.store.enrichment.remove(dataset.id, type);
  }
}

function alreadyRunning(task: DatasetTask) {
  return badRequest(`Task ${task.id} in progress with status ${task.status}. A ${task.type === 'graph' ? 'Graph' : 'RAPTOR'} Task is already running.`);
}

/** RAGFlow's task row as far as Cairn has it, with the progress counters. */
export function taskView(task: DatasetTask): Record<string, unknown> {
  const { progress } = task;
  const fraction = task.status === 'done' ? 1 : task.status === 'failed' ? -1 : progress.total ? progress.done / progress.total : 0;
  return {
    id: task.id,
    dataset_id: task.dataset_id,
    type: task.type,
    status: task.status,
    progress: fraction,
    progress_msg: task.status === 'failed' ? task.message : progress.stage,
    message: task.message,
    done: progress.done,
    total: progress.total,
    model_calls: progress.model_calls,
    cached_calls: progress.cached_calls,
    tokens: progress.tokens,
    create_time: toSeconds(task.create_time),
    update_time: toSeconds(task.update_time),
    finish_time: task.finish_time === null ? null : toSeconds(task.finish_time),
  };
}
