import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { Database } from './schema.js';
import { migrateToLatest } from './migrations.js';
import { cachedStatements } from './statement-cache.js';

export type MetaDialect = 'sqlite' | 'postgres';

/** The metadata store's database: SQLite (embedded profile) or PostgreSQL (scale-out profile). */
export interface MetaDb {
  dialect: MetaDialect;
  kysely: Kysely<Database>;
  close(): Promise<void>;
}

export type DatabaseLocation = { dialect: 'sqlite'; file: string } | { dialect: 'postgres'; url: string };

const USAGE = 'use sqlite:<file> or postgres://user:pass@host:port/db';

/**
 * Reads a CAIRN_DATABASE_URL: `sqlite:<file>`, `postgres://…` (or `postgresql://…`), or a bare file
 * path, taken as SQLite (`:memory:` for tests).
 */
export function parseDatabaseUrl(url: string): DatabaseLocation {
  if (/^postgres(ql)?:\/\//i.test(url)) return { dialect: 'postgres', url };
  if (/^sqlite:/i.test(url)) {
    const file = url.slice('sqlite:'.length);
    if (!file) throw new Error(`CAIRN_DATABASE_URL 'sqlite:' names no file; ${USAGE}`);
    return { dialect: 'sqlite', file };
  }
  if (!url || /^[a-z][a-z0-9+.-]*:\/\//i.test(url)) throw new Error(`CAIRN_DATABASE_URL '${redactDatabaseUrl(url)}' is not supported; ${USAGE}`);
  return { dialect: 'sqlite', file: url };
}

/** The URL with its password masked, for messages and logs. */
export function redactDatabaseUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@/]*@/i, '$1***@');
}

/**
 * Opens the metadata database named by `url` (see parseDatabaseUrl) and applies migrations. `shared` is an
 * open connection to the same SQLite file (the embedded index's): the store then uses it instead of a
 * second connection, so a write from the index never waits on a metadata transaction of its own process.
 */
export async function openDatabase(url: string, shared?: BetterSqlite3.Database): Promise<MetaDb> {
  const location = parseDatabaseUrl(url);
  const db = location.dialect === 'postgres' ? await openPostgres(location.url) : openSqlite(location.file, shared);
  try {
    await migrateToLatest(db.kysely);
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return db;
}

/** A SQLite file in WAL mode, so the embedded index's own connection and other processes read while one writes. */
function openSqlite(file: string, shared?: BetterSqlite3.Database): MetaDb {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const reuse = shared && file !== ':memory:' && shared.name === path.resolve(file);
  const sqlite = reuse ? shared : new BetterSqlite3(file);
  if (!sqlite.memory) sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  // A shared connection belongs to its opener, who closes it after the store.
  const database = cachedStatements(sqlite, { owned: !reuse });
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return { dialect: 'sqlite', kysely, close: () => kysely.destroy() };
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * pg returns int8 (bigint columns, count(*)) and numeric (sum over bigint) as strings so as not to
 * lose precision; better-sqlite3 returns numbers, and the row types say number. Timestamps in
 * milliseconds and counts stay far below 2^53, so both become numbers here, for this pool only.
 */
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

async function openPostgres(url: string): Promise<MetaDb> {
  const pool = new pg.Pool({ connectionString: url, types: pgTypes });
  // An idle connection that the server closes (restart, failover) must not crash the process: the pool
  // drops it and the next query opens a new one.
  pool.on('error', (err) => process.emitWarning(`metadata database connection lost: ${err.message}`));
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    await sql`select 1`.execute(kysely);
  } catch (err) {
    await kysely.destroy().catch(() => undefined);
    throw new Error(`cannot reach the metadata database ${redactDatabaseUrl(url)}: ${(err as Error).message}`);
  }
  return { dialect: 'postgres', kysely, close: () => kysely.destroy() };
}
