import { PostgresAdapter, sql, type ColumnDataType, type Expression, type Kysely } from 'kysely';

type DataTypeExpression = ColumnDataType | Expression<unknown>;

/** Whether queries on `db` (or on a transaction of it) go to PostgreSQL rather than SQLite. */
export function onPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** A unique or primary-key constraint refused the write (SQLite: SQLITE_CONSTRAINT_UNIQUE/PRIMARYKEY; PostgreSQL: 23505). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

export interface ColumnTypes {
  string(length: number): DataTypeExpression;
  text: DataTypeExpression;
  integer: DataTypeExpression;
  bigint: DataTypeExpression;
  real: DataTypeExpression;
  /** Bytes (e.g. a float32 vector). */
  blob: DataTypeExpression;
}

const SQLITE_TYPES: ColumnTypes = {
  string: (length) => `varchar(${length})`,
  text: 'text',
  integer: 'integer',
  bigint: 'bigint',
  real: 'real',
  blob: 'blob',
};

/**
 * PostgreSQL spellings that keep SQLite's behaviour, so rows, limits and orderings match in both
 * profiles: SQLite integers are 64-bit (int8 here), its REAL is an 8-byte float (double precision, not
 * PostgreSQL's 4-byte real), it never enforces varchar lengths (unbounded text), and it compares text
 * by bytes with a lower() that folds ASCII only — exactly what the "C" collation does, whatever
 * locale the database was created with.
 */
const POSTGRES_TYPES: ColumnTypes = {
  string: () => sql`text collate "C"`,
  text: sql`text collate "C"`,
  integer: 'int8',
  bigint: 'int8',
  real: 'double precision',
  blob: 'bytea',
};

export function columnTypes(db: Kysely<any>): ColumnTypes {
  return onPostgres(db) ? POSTGRES_TYPES : SQLITE_TYPES;
}
