import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type Selectable, type SqlBool } from 'kysely';
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

/** Tenants whose shared resources a caller may see. */
export interface Visibility {
  /** The caller's own tenant: all of its rows. */
  userTenant: string;
  /** The caller's teams: only their rows shared with the team (`permission = 'team'`). */
  teamTenants: string[];
}

/** The rows of datasets or memories (both have tenant_id and permission) that `v` may see. */
export function visibleTo<T extends 'datasets' | 'memories'>(v: Visibility) {
  return (builder: ExpressionBuilder<Database, T>) => {
    // Kysely cannot type a column reference through the generic table.
    const eb = builder as unknown as ExpressionBuilder<Database, 'datasets'>;
    return eb.or([
      eb('tenant_id', '=', v.userTenant),
      ...(v.teamTenants.length ? [eb.and([eb('tenant_id', 'in', v.teamTenants), eb('permission', '=', 'team')])] : []),
    ]);
  };
}
