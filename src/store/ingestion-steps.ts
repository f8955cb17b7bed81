import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, IngestionStepsTable } from './schema.js';

export type IngestionStepRow = Selectable<IngestionStepsTable>;
export type StepStatus = IngestionStepRow['status'];

/** Which step of which run: a document's run number and the step's place in the pipeline. */
export interface StepRef {
  documentId: string;
  runSeq: number;
  stepIndex: number;
}

/** The ingestion logs: one row per step of an ingestion run, written as the step starts and ends. */
export class IngestionStepRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** The step starts (again, after a retried attempt): RUNNING, with no end or error. */
  async begin(row: Omit<Insertable<IngestionStepsTable>, 'status' | 'end_at' | 'output' | 'error'>): Promise<void> {
    await this.db
      .insertInto('ingestion_steps')
      .values({ ...row, status: 'RUNNING', end_at: null, output: '{}', error: null })
      .onConflict((oc) => oc.columns(['document_id', 'run_seq', 'step_index']).doUpdateSet({ status: 'RUNNING', begin_at: row.begin_at, end_at: null, error: null }))
      .execute();
  }

  /** The step ended: DONE with its output counts, or FAIL with the reason. */
  async end(ref: StepRef, status: Exclude<StepStatus, 'RUNNING'>, endAt: number, output: Record<string, unknown>, error: string | null = null): Promise<void> {
    await this.db
      .updateTable('ingestion_steps')
      .set({ status, end_at: endAt, output: JSON.stringify(output), error })
      .where('document_id', '=', ref.documentId)
      .where('run_seq', '=', ref.runSeq)
      .where('step_index', '=', ref.stepIndex)
      .execute();
  }

  /** The run ended without finishing (cancelled, failed): its step still RUNNING ends with it. */
  async endRunning(documentId: string, runSeq: number, status: 'FAIL' | 'CANCEL', endAt: number, error: string): Promise<void> {
    await this.db
      .updateTable('ingestion_steps')
      .set({ status, end_at: endAt, error })
      .where('document_id', '=', documentId)
      .where('run_seq', '=', runSeq)
      .where('status', '=', 'RUNNING')
      .execute();
  }

  /** The steps of a dataset's runs (of one document when given), newest run first, each run's steps in order. */
  ofDataset(datasetId: string, documentId?: string): Promise<IngestionStepRow[]> {
    let q = this.db.selectFrom('ingestion_steps').selectAll().where('dataset_id', '=', datasetId);
    if (documentId) q = q.where('document_id', '=', documentId);
    return q.orderBy('begin_at', 'desc').orderBy('document_id').orderBy('run_seq', 'desc').orderBy('step_index').execute();
  }

  async deleteDocuments(documentIds: string[]): Promise<void> {
    if (documentIds.length) await this.db.deleteFrom('ingestion_steps').where('document_id', 'in', documentIds).execute();
  }

  async deleteDataset(datasetId: string): Promise<void> {
    await this.db.deleteFrom('ingestion_steps').where('dataset_id', '=', datasetId).execute();
  }
}
