import { type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { Database, DatasetsTable } from './schema.js';
import { containsText, countAndPage, visibleTo, type PageQuery, type Visibility } from './paging.js';
import { nameKeyTaken, nameKeysLike } from './name-keys.js';

/** Deleted datasets (being removed) free their names. */
const ACTIVE = { status: 'active' };

export type DatasetRow = Selectable<DatasetsTable>;
export type DatasetPatch = Updateable<DatasetsTable>;

export interface DatasetQuery extends PageQuery<'create_time' | 'update_time'> {
  /** Tenants whose datasets the caller may see. */
  visibleTo: Visibility;
  id?: string;
  name?: string;
  keywords?: string;
}

export class DatasetRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** The datasets that ingest through this pipeline, by name. */
  usingPipeline(pipelineId: string): Promise<DatasetRow[]> {
    return this.db.selectFrom('datasets').selectAll().where('pipeline_id', '=', pipelineId).where('status', '=', 'active').orderBy('name').execute();
  }

  async insert(row: Insertable<DatasetsTable>): Promise<void> {
    await this.db.insertInto('datasets').values(row).execute();
  }

  byId(id: string): Promise<DatasetRow | undefined> {
    return this.db.selectFrom('datasets').selectAll().where('id', '=', id).where('status', '=', 'active').executeTakeFirst();
  }

  byIdAnyStatus(id: string): Promise<DatasetRow | undefined> {
    return this.db.selectFrom('datasets').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Active dataset names of a tenant that start with `prefix` (case-insensitive), for de-duplication. */
  namesLike(tenantId: string, nameKey: string): Promise<string[]> {
    return nameKeysLike(this.db, 'datasets', tenantId, nameKey, ACTIVE);
  }

  nameTaken(tenantId: string, nameKey: string, exceptId?: string): Promise<boolean> {
    return nameKeyTaken(this.db, 'datasets', tenantId, nameKey, exceptId, ACTIVE);
  }

  async list(query: DatasetQuery): Promise<{ total: number; rows: DatasetRow[] }> {
    let q = this.db.selectFrom('datasets').where('status', '=', 'active').where(visibleTo(query.visibleTo));
    if (query.id) q = q.where('id', '=', query.id);
    if (query.name) q = q.where('name_key', '=', query.name.toLowerCase());
    if (query.keywords) q = q.where(containsText('name_key', query.keywords));
    return countAndPage(q, query);
  }

  async update(id: string, patch: DatasetPatch): Promise<void> {
    await this.db.updateTable('datasets').set(patch).where('id', '=', id).execute();
  }

  /** Marks datasets invisible; their content is removed by the deleteDatasets workflow. */
  async markDeleting(ids: string[], now: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db.updateTable('datasets').set({ status: 'deleting', update_time: now }).where('id', 'in', ids).execute();
  }

  async deletingIds(): Promise<string[]> {
    const rows = await this.db.selectFrom('datasets').select('id').where('status', '=', 'deleting').execute();
    return rows.map((r) => r.id);
  }

  async remove(id: string): Promise<void> {
    await this.db.deleteFrom('datasets').where('id', '=', id).execute();
  }
}

