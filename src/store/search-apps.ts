import { type Kysely, type Selectable, type Updateable } from 'kysely';
import type { Database, SearchAppsTable } from './schema.js';
import { nameKeyTaken, nameKeysLike } from './name-keys.js';
import { containsText, countAndPage, type PageQuery } from './paging.js';

export type SearchAppRow = Selectable<SearchAppsTable>;
export type SearchAppPatch = Updateable<SearchAppsTable>;

export interface SearchAppQuery extends PageQuery<'create_time' | 'update_time' | 'name'> {
  tenantIds: string[];
  keywords?: string;
}

export class SearchAppRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: SearchAppRow): Promise<void> {
    await this.db.insertInto('search_apps').values(row).execute();
  }

  byId(id: string): Promise<SearchAppRow | undefined> {
    return this.db.selectFrom('search_apps').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Name keys of a tenant's search apps starting with `nameKey`, for `name(1)` de-duplication. */
  namesLike(tenantId: string, nameKey: string): Promise<string[]> {
    return nameKeysLike(this.db, 'search_apps', tenantId, nameKey);
  }

  nameTaken(tenantId: string, nameKey: string, exceptId: string): Promise<boolean> {
    return nameKeyTaken(this.db, 'search_apps', tenantId, nameKey, exceptId);
  }

  async list(query: SearchAppQuery): Promise<{ total: number; rows: SearchAppRow[] }> {
    let q = this.db.selectFrom('search_apps').where('tenant_id', 'in', query.tenantIds.length ? query.tenantIds : ['']);
    if (query.keywords) q = q.where(containsText('name_key', query.keywords));
    return countAndPage(q, query);
  }

  async update(id: string, patch: SearchAppPatch): Promise<void> {
    await this.db.updateTable('search_apps').set(patch).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('search_apps').where('id', '=', id).execute();
  }
}
