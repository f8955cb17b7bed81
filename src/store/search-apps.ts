import { sql, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { Database, SearchAppsTable } from './schema.js';
import { nameKeyTaken, nameKeysLike } from './name-keys.js';
import { escapeLike } from './datasets.js';

export type SearchAppRow = Selectable<SearchAppsTable>;
export type SearchAppPatch = Updateable<SearchAppsTable>;

export interface SearchAppQuery {
  tenantIds: string[];
  keywords?: string;
  orderBy: 'create_time' | 'update_time' | 'name';
  desc: boolean;
  offset: number;
  limit: number;
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
    if (query.keywords) q = q.where(sql<boolean>`name_key like ${'%' + escapeLike(query.keywords.toLowerCase()) + '%'} escape '\\'`);
    const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const rows = await q
      .selectAll()
      .orderBy(query.orderBy, query.desc ? 'desc' : 'asc')
      .orderBy('id')
      .offset(query.offset)
      .limit(query.limit)
      .execute();
    return { total: Number(total.n), rows };
  }

  async update(id: string, patch: SearchAppPatch): Promise<void> {
    await this.db.updateTable('search_apps').set(patch).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('search_apps').where('id', '=', id).execute();
  }
}
