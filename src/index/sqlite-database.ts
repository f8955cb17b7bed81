import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';

/** A connection to the embedded SQLite file (chunk index, memory index, run events). */
export type Sqlite = Database.Database;

/**
 * Prepares a connection for SqliteChunkIndex: loads sqlite-vec and sets the pragmas the index is
 * benchmarked with (bench/retrieval/run.ts). WAL lets readers run while a worker writes; mmap lets vector and
 * full-text scans read pages without a copy through the page cache.
 */
export function configureIndexConnection(db: Database.Database): void {
  sqliteVec.load(db);
  if (!db.memory) db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('mmap_size = 1073741824');
}

/** Opens (creating if needed) a database file ready for the chunk index; ':memory:' for tests. */
export function openIndexDatabase(file: string): Database.Database {
  const db = new Database(file);
  configureIndexConnection(db);
  return db;
}

/**
 * A read-only connection to an index database another connection created and writes (WAL: it reads the
 * last committed state while that connection writes), for the reader threads of sqlite-read-pool.ts.
 */
export function openIndexReader(file: string): Database.Database {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  sqliteVec.load(db);
  db.pragma('busy_timeout = 5000');
  db.pragma('mmap_size = 1073741824');
  return db;
}
