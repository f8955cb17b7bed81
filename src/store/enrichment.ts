import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** The dataset-wide index jobs: RAPTOR summaries and the knowledge graph. */
export const DATASET_INDEX_TYPES = ['raptor', 'graph'] as const;
export type DatasetIndexType = (typeof DATASET_INDEX_TYPES)[number];

export type TaskStatus = 'running' | 'done' | 'failed' | 'cancelled';

/** What a job has done so far; `stage` names the step it is in (e.g. "summarising level 2"). */
export interface TaskProgress {
  stage: string;
  done: number;
  total: number;
  model_calls: number;
  /** Model calls answered from the enrichment cache (paid for by an earlier run). */
  cached_calls: number;
  tokens: number;
}

export interface DatasetTask {
  dataset_id: string;
  type: DatasetIndexType;
  id: string;
  status: TaskStatus;
  progress: TaskProgress;
  message: string;
  create_time: number;
  update_time: number;
  finish_time: number | null;
}

export const NO_PROGRESS: TaskProgress = { stage: 'queued', done: 0, total: 0, model_calls: 0, cached_calls: 0, tokens: 0 };

/** The enrichment cache (model answers by call hash) and the dataset index tasks. */
export class EnrichmentRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** The cached values of the keys that have one. */
  async cached(keys: string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (let i = 0; i < keys.length; i += 500) {
      const rows = await this.db.selectFrom('enrichment_cache').select(['key', 'value']).where('key', 'in', keys.slice(i, i + 500)).execute();
      for (const r of rows) found.set(r.key, r.value);
    }
    return found;
  }

  /** Stores values; a key stored before keeps its first value (the same call gives the same answer). */
  async remember(entries: { key: string; value: string }[]): Promise<void> {
    const now = Date.now();
    for (let i = 0; i < entries.length; i += 200) {
      const values = entries.slice(i, i + 200).map((e) => ({ ...e, create_time: now }));
      await this.db.insertInto('enrichment_cache').values(values).onConflict((oc) => oc.column('key').doNothing()).execute();
    }
  }

  async task(datasetId: string, type: DatasetIndexType): Promise<DatasetTask | undefined> {
    const row = await this.db.selectFrom('dataset_tasks').selectAll().where('dataset_id', '=', datasetId).where('type', '=', type).executeTakeFirst();
    return row && { ...row, type: row.type as DatasetIndexType, status: row.status as TaskStatus, progress: JSON.parse(row.progress) as TaskProgress };
  }

  /**
   * Records a new running task, replacing the dataset's previous task of the type. Beginning the task that
   * is already recorded changes nothing, so the starter and the workflow may both call it, in either order.
   */
  async begin(datasetId: string, type: DatasetIndexType, id: string): Promise<void> {
    const now = Date.now();
    const row = { id, status: 'running', progress: JSON.stringify(NO_PROGRESS), message: '', create_time: now, update_time: now, finish_time: null };
    await this.db
      .insertInto('dataset_tasks')
      .values({ dataset_id: datasetId, type, ...row })
      .onConflict((oc) => oc.columns(['dataset_id', 'type']).doUpdateSet(row).where('dataset_tasks.id', '<>', id))
      .execute();
  }

  /** Updates the progress of task `id`; a task replaced by a newer one is left alone (returns false). */
  async report(datasetId: string, type: DatasetIndexType, id: string, progress: TaskProgress): Promise<boolean> {
    const r = await this.db
      .updateTable('dataset_tasks')
      .set({ progress: JSON.stringify(progress), update_time: Date.now() })
      .where('dataset_id', '=', datasetId)
      .where('type', '=', type)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Ends task `id` with its status and, for failures, the reason. */
  async finish(datasetId: string, type: DatasetIndexType, id: string, status: Exclude<TaskStatus, 'running'>, message = ''): Promise<void> {
    const now = Date.now();
    await this.db
      .updateTable('dataset_tasks')
      .set({ status, message, update_time: now, finish_time: now })
      .where('dataset_id', '=', datasetId)
      .where('type', '=', type)
      .where('id', '=', id)
      .execute();
  }

  async remove(datasetId: string, type: DatasetIndexType): Promise<void> {
    await this.db.deleteFrom('dataset_tasks').where('dataset_id', '=', datasetId).where('type', '=', type).execute();
  }
}
