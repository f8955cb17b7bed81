import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { escapeLike } from './paging.js';

/** Tables of a tenant's resources named case-insensitively: a `name_key` column holds the lower-cased name. */
export type NameKeyedTable = 'datasets' | 'memories' | 'search_apps';

/** Extra equality conditions on the table's rows (e.g. only active datasets). */
type Only = Record<string, string>;

/** Name keys of a tenant's rows that start with `nameKey`, for `name(1)` de-duplication. */
export async function nameKeysLike(db: Kysely<Database>, table: NameKeyedTable, tenantId: string, nameKey: string, only: Only = {}): Promise<string[]> {
  // The three tables share these columns; Kysely cannot type a query over a union of tables.
  let q = (db as unknown as Kysely<any>).selectFrom(table).select('name_key').where('tenant_id', '=', tenantId);
  for (const [column, value] of Object.entries(only)) q = q.where(column, '=', value);
  const rows = await q.where(sql<boolean>`name_key like ${escapeLike(nameKey) + '%'} escape '\\'`).execute();
  return rows.map((r: { name_key: string }) => r.name_key);
}

/** Whether another row of the tenant (not `exceptId`) has this name key. */
export async function nameKeyTaken(db: Kysely<Database>, table: NameKeyedTable, tenantId: string, nameKey: string, exceptId?: string, only: Only = {}): Promise<boolean> {
  let q = (db as unknown as Kysely<any>).selectFrom(table).select('id').where('tenant_id', '=', tenantId).where('name_key', '=', nameKey);
  for (const [column, value] of Object.entries(only)) q = q.where(column, '=', value);
  if (exceptId) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}
