import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { escapeLike } from './paging.js';

/**
 * Tables of a tenant's resources named case-insensitively, and the column holding each row's lower-cased
 * name (an agent's lower-cased title).
 */
const KEY_COLUMN = { datasets: 'name_key', memories: 'name_key', search_apps: 'name_key', agents: 'title_key' } as const;

export type NameKeyedTable = keyof typeof KEY_COLUMN;

/** Extra equality conditions on the table's rows (e.g. only active datasets). */
type Only = Record<string, string>;

/** The tenant's rows of `table` that meet `only`. */
function tenantRows(db: Kysely<Database>, table: NameKeyedTable, tenantId: string, only: Only) {
  // The tables share these columns; Kysely cannot type a query over a union of tables.
  let q = (db as unknown as Kysely<any>).selectFrom(table).where('tenant_id', '=', tenantId);
  for (const [column, value] of Object.entries(only)) q = q.where(column, '=', value);
  return q;
}

/** Name keys of a tenant's rows that start with `nameKey`, for `name(1)` de-duplication. */
export async function nameKeysLike(db: Kysely<Database>, table: NameKeyedTable, tenantId: string, nameKey: string, only: Only = {}): Promise<string[]> {
  const column = KEY_COLUMN[table];
  const rows = await tenantRows(db, table, tenantId, only)
    .select(column)
    .where(sql<boolean>`${sql.ref(column)} like ${escapeLike(nameKey) + '%'} escape '\\'`)
    .execute();
  return rows.map((r: Record<string, string>) => r[column]!);
}

/** Whether another row of the tenant (not `exceptId`) has this name key. */
export async function nameKeyTaken(db: Kysely<Database>, table: NameKeyedTable, tenantId: string, nameKey: string, exceptId?: string, only: Only = {}): Promise<boolean> {
  let q = tenantRows(db, table, tenantId, only).select('id').where(KEY_COLUMN[table], '=', nameKey);
  if (exceptId) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}
