import { sql, type Expression, type SelectQueryBuilder, type Selectable, type SqlBool } from 'kysely';
import type { Database } from './schema.js';

/**
 * The list queries of the repositories: a filtered select, counted, then one page of it. Every page is
 * ordered by the caller's column with the id breaking ties, so pages of the same list never overlap.
 */
export interface PageQuery<Column extends string> {
  orderBy: Column;
  desc: boolean;
  offset: number;
  limit: number;
}

/** A filtered select of one table, before its columns are chosen. */
type Filtered<T extends keyof Database> = SelectQueryBuilder<Database, T, object>;

/** How many rows the filtered select matches. */
export async function countRows<T extends keyof Database>(filtered: Filtered<T>): Promise<number> {
  const row = await filtered.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** One page of the filtered select's rows (see PageQuery). */
export async function pageRows<T extends keyof Database & string>(filtered: Filtered<T>, page: PageQuery<string>): Promise<Selectable<Database[T]>[]> {
  const rows = await filtered
    .selectAll()
    .orderBy(sql.ref(page.orderBy), page.desc ? 'desc' : 'asc')
    .orderBy(sql.ref('id'))
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  // selectAll() of one table is its Selectable row; Kysely cannot see that through the generic table.
  return rows as unknown as Selectable<Database[T]>[];
}

/** The count of all matching rows, and one page of them. */
export async function countAndPage<T extends keyof Database & string>(filtered: Filtered<T>, page: PageQuery<string>): Promise<{ total: number; rows: Selectable<Database[T]>[] }> {
  return { total: await countRows(filtered), rows: await pageRows(filtered, page) };
}

/** Escapes LIKE wildcards so user text matches literally (used with `escape '\\'`). */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (m) => `\\${m}`);
}

/** The column's text contains `keywords`, case-insensitively and literally (no wildcards). */
export function containsText(column: string, keywords: string): Expression<SqlBool> {
  return sql<SqlBool>`lower(${sql.ref(column)}) like ${'%' + escapeLike(keywords.toLowerCase()) + '%'} escape '\\'`;
}
