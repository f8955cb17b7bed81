import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { configureIndexConnection } from '../index/sqlite-database.js';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from './schema.js';
import { migrateToLatest } from './migrations.js';

export type Sqlite = BetterSqlite3.Database;

export interface MetaDb {
  /** The raw connection, shared with the embedded chunk index (same file). */
  sqlite: Sqlite;
  kysely: Kysely<Database>;
  close(): Promise<void>;
}

/** Opens (creating if needed) the SQLite database file in WAL mode and applies migrations. */
export async function openDatabase(file: string): Promise<MetaDb> {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new BetterSqlite3(file);
  // One file holds the metadata and the embedded chunk index: the index's connection settings apply.
  configureIndexConnection(sqlite);
  sqlite.pragma('foreign_keys = ON');
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrateToLatest(kysely);
  return {
    sqlite,
    kysely,
    async close() {
      await kysely.destroy();
    },
  };
}
