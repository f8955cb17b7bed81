import { type Expression, type ExpressionBuilder, type Insertable, type Kysely, type Selectable, type SqlBool, type Updateable } from 'kysely';
import type { Database, DocumentsTable } from './schema.js';
import { containsText, countAndPage, type PageQuery } from './paging.js';

export type DocumentRow = Selectable<DocumentsTable>;
export type DocumentPatch = Updateable<DocumentsTable>;
export type RunState = DocumentRow['run'];
export const RUN_STATES: RunState[] = ['UNSTART', 'RUNNING', 'CANCEL', 'DONE', 'FAIL'];

export interface DocumentQuery extends PageQuery<'create_time' | 'update_time' | 'name'> {
  datasetId: string;
  id?: string;
  name?: string;
  keywords?: string;
  run?: RunState[];
  createdFrom?: number;
  createdTo?: number;
}

export class DocumentRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: Insertable<DocumentsTable>): Promise<void> {
    await this.db.insertInto('documents').values(row).execute();
  }

  byId(id: string): Promise<DocumentRow | undefined> {
    return this.db.selectFrom('documents').selectAll().where('id', '=', id).executeTakeFirst();
  }

  byIds(datasetId: string, ids: string[]): Promise<DocumentRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('documents').selectAll().where('dataset_id', '=', datasetId).where('id', 'in', ids).execute();
  }

  listByDataset(datasetId: string): Promise<DocumentRow[]> {
    return this.db.selectFrom('documents').selectAll().where('dataset_id', '=', datasetId).execute();
  }

  async names(datasetId: string): Promise<Set<string>> {
    const rows = await this.db.selectFrom('documents').select('name').where('dataset_id', '=', datasetId).execute();
    return new Set(rows.map((r) => r.name.toLowerCase()));
  }

  async list(q: DocumentQuery): Promise<{ total: number; rows: DocumentRow[] }> {
    let query = this.db.selectFrom('documents').where('dataset_id', '=', q.datasetId);
    if (q.id) query = query.where('id', '=', q.id);
    if (q.name) query = query.where('name', '=', q.name);
    if (q.keywords) query = query.where(containsText('name', q.keywords));
    if (q.run?.length) query = query.where('run', 'in', q.run);
    if (q.createdFrom) query = query.where('create_time', '>=', q.createdFrom);
    if (q.createdTo) query = query.where('create_time', '<=', q.createdTo);
    return countAndPage(query, q);
  }

  async update(id: string, patch: DocumentPatch): Promise<void> {
    await this.db.updateTable('documents').set(patch).where('id', '=', id).execute();
  }

  /** Writes a parse run's state only while that run is the document's current one (stale runs write nothing). */
  async updateRun(id: string, runSeq: number, patch: DocumentPatch, requireRun?: RunState): Promise<boolean> {
    let q = this.db.updateTable('documents').set(patch).where('id', '=', id).where('run_seq', '=', runSeq);
    if (requireRun) q = q.where('run', '=', requireRun);
    const res = await q.executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /**
   * Atomically moves a document that is not RUNNING into RUNNING with a new run number; with `orphanedRun`,
   * also one still RUNNING as that run (whose workflow is known to be gone: it is taken over).
   * Returns the run number, or undefined when the document is already running.
   */
  beginRun(id: string, now: number, pipelineId: string | null = null, orphanedRun?: number): Promise<number | undefined> {
    return this.startRun(id, now, pipelineId, (eb) =>
      orphanedRun === undefined ? eb('run', '!=', 'RUNNING') : eb.or([eb('run', '!=', 'RUNNING'), eb('run_seq', '=', orphanedRun)]),
    );
  }

  /**
   * Takes over a run found orphaned: a new run number only while the document is still RUNNING as that run
   * (not when it ended meanwhile, nor when someone else took it over). Undefined otherwise.
   */
  takeOverRun(id: string, now: number, pipelineId: string | null, orphanedRun: number): Promise<number | undefined> {
    return this.startRun(id, now, pipelineId, (eb) => eb.and([eb('run', '=', 'RUNNING'), eb('run_seq', '=', orphanedRun)]));
  }

  /**
   * RUNNING documents whose row has not changed since `updatedBefore`, oldest first, after `after` (a cursor
   * of update_time and id), at most `limit`: candidates for orphaned runs (index documents_run_updated).
   */
  runningUnchangedSince(updatedBefore: number, limit: number, after?: { update_time: number; id: string }): Promise<DocumentRow[]> {
    let q = this.db.selectFrom('documents').selectAll().where('run', '=', 'RUNNING').where('update_time', '<', updatedBefore);
    if (after) q = q.where((eb) => eb.or([eb('update_time', '>', after.update_time), eb.and([eb('update_time', '=', after.update_time), eb('id', '>', after.id)])]));
    return q.orderBy('update_time').orderBy('id').limit(limit).execute();
  }

  private async startRun(id: string, now: number, pipelineId: string | null, allowed: (eb: ExpressionBuilder<Database, 'documents'>) => Expression<SqlBool>): Promise<number | undefined> {
    const res = await this.db
      .updateTable('documents')
      .set((eb) => ({
        run: 'RUNNING',
        run_seq: eb('run_seq', '+', 1),
        pipeline_id: pipelineId,
        progress: 0,
        progress_msg: 'Queued for parsing',
        process_begin_at: now,
        process_duration: 0,
        update_time: now,
      }))
      .where('id', '=', id)
      .where(allowed)
      .returning('run_seq')
      .executeTakeFirst();
    return res?.run_seq;
  }

  /** Each document's meta_fields, for metadata filters and reference metadata. */
  async metaFields(datasetIds: string[]): Promise<{ document_id: string; meta_fields: Record<string, unknown> }[]> {
    if (datasetIds.length === 0) return [];
    const rows = await this.db.selectFrom('documents').select(['id', 'meta_fields']).where('dataset_id', 'in', datasetIds).execute();
    return rows.map((r) => ({ document_id: r.id, meta_fields: JSON.parse(r.meta_fields) as Record<string, unknown> }));
  }

  async delete(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.deleteFrom('documents').where('id', 'in', ids).execute();
  }

  async deleteByDataset(datasetId: string): Promise<void> {
    await this.db.deleteFrom('documents').where('dataset_id', '=', datasetId).execute();
  }

  /** Document counts per run state for each dataset. */
  async runCounts(datasetIds: string[]): Promise<Map<string, Record<RunState, number>>> {
    const out = new Map<string, Record<RunState, number>>();
    for (const id of datasetIds) out.set(id, { UNSTART: 0, RUNNING: 0, CANCEL: 0, DONE: 0, FAIL: 0 });
    if (datasetIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('documents')
      .select(['dataset_id', 'run', (eb) => eb.fn.countAll<number>().as('n')])
      .where('dataset_id', 'in', datasetIds)
      .groupBy(['dataset_id', 'run'])
      .execute();
    for (const r of rows) out.get(r.dataset_id)![r.run] = Number(r.n);
    return out;
  }

  /** Documents in each run state, over every dataset (one pass over the documents_run index). */
  async countByRun(): Promise<Record<RunState, number>> {
    const out: Record<RunState, number> = { UNSTART: 0, RUNNING: 0, CANCEL: 0, DONE: 0, FAIL: 0 };
    const rows = await this.db
      .selectFrom('documents')
      .select(['run', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('run')
      .execute();
    for (const r of rows) out[r.run] = Number(r.n);
    return out;
  }

  /** Document and chunk totals per dataset. */
  /** Bytes of a dataset's files (RAGFlow's dataset `size`). */
  async totalSize(datasetId: string): Promise<number> {
    const row = await this.db.selectFrom('documents').select((eb) => eb.fn.sum<number>('size').as('size')).where('dataset_id', '=', datasetId).executeTakeFirst();
    return Number(row?.size ?? 0);
  }

  async totals(datasetIds: string[]): Promise<Map<string, { documents: number; chunks: number; tokens: number }>> {
    const out = new Map<string, { documents: number; chunks: number; tokens: number }>();
    for (const id of datasetIds) out.set(id, { documents: 0, chunks: 0, tokens: 0 });
    if (datasetIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('documents')
      .select((eb) => [
        'dataset_id',
        eb.fn.countAll<number>().as('documents'),
        eb.fn.sum<number>('chunk_count').as('chunks'),
        eb.fn.sum<number>('token_count').as('tokens'),
      ])
      .where('dataset_id', 'in', datasetIds)
      .groupBy('dataset_id')
      .execute();
    for (const r of rows) out.set(r.dataset_id, { documents: Number(r.documents), chunks: Number(r.chunks ?? 0), tokens: Number(r.tokens ?? 0) });
    return out;
  }
}
