import type { Database } from 'better-sqlite3';
import { memoryScopeToken } from './memory-scope.js';

/**
 * Tables of the embedded memory index (all prefixed `memory_`, next to the chunk index's `chunk_`
 * tables in the same database file), created idempotently.
 *
 * - memory_rows         one row per message: every MemoryMessage field, `terms` (unused, left empty: it held
 *                       stems before term similarity came from BM25), `dim` and the float32 `vector` (last, so scans
 *                       that skip it never read its overflow pages). message_id is AUTOINCREMENT: one
 *                       global integer sequence whose ids are never reused, even after FIFO removals;
 * - memory_fts          FTS5 over the content and `memory`, the memory's scope token (memory-scope.ts), which
 *                       every search ANDs with its words; contentless (the text lives in memory_rows) with
 *                       contentless_delete; rowid = message_id. An index file written before the scope
 *                       column existed has its memory_fts rebuilt from memory_rows once, at open;
 * - memory_usage        per memory, the byte total and message count, changed in the same transaction as
 *                       every insert and removal (so FIFO needs no scan to know the total);
 * - memory_extractions  per (memory, raw message), a marker written in the same transaction as the items
 *                       extracted from it: a retried extraction finds it and stores nothing twice.
 */
export function ensureMemorySchema(db: Database): void {
  rebuildUnscopedFullText(db);
  db.exec(`
    CREATE TABLE IF NOT EXISTS memory_rows (
      message_id INTEGER PRIMARY KEY AUTOINCREMENT,
      memory_id TEXT NOT NULL,
      tenant_id TEXT NOT NULL,
      message_type TEXT NOT NULL,
      source_id INTEGER NOT NULL,
      user_id TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      dedup_key TEXT,
      content TEXT NOT NULL,
      valid_at INTEGER NOT NULL,
      invalid_at INTEGER,
      replaced_by INTEGER,
      forget_at INTEGER,
      status INTEGER NOT NULL,
      size INTEGER NOT NULL,
      create_time INTEGER NOT NULL,
      terms BLOB NOT NULL,
      dim INTEGER NOT NULL,
      vector BLOB
    );
    CREATE INDEX IF NOT EXISTS memory_rows_valid ON memory_rows (memory_id, valid_at, message_id);
    CREATE INDEX IF NOT EXISTS memory_rows_forgotten ON memory_rows (memory_id, forget_at, valid_at, message_id) WHERE forget_at IS NOT NULL;
    CREATE INDEX IF NOT EXISTS memory_rows_source ON memory_rows (source_id) WHERE source_id > 0;
    CREATE UNIQUE INDEX IF NOT EXISTS memory_rows_dedup ON memory_rows (memory_id, dedup_key) WHERE dedup_key IS NOT NULL;
    CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(
      content, memory,
      tokenize = 'porter unicode61', content = '', contentless_delete = 1
    );
    CREATE TABLE IF NOT EXISTS memory_usage (
      memory_id TEXT PRIMARY KEY,
      bytes INTEGER NOT NULL,
      messages INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS memory_extractions (
      memory_id TEXT NOT NULL,
      source_id INTEGER NOT NULL,
      create_time INTEGER NOT NULL,
      PRIMARY KEY (memory_id, source_id)
    ) WITHOUT ROWID;
  `);
  // Databases created before replaced_by existed (facts stay current) gain the column.
  const columns = db.prepare(`SELECT name FROM pragma_table_info('memory_rows')`).pluck().all() as string[];
  if (!columns.includes('replaced_by')) db.exec('ALTER TABLE memory_rows ADD COLUMN replaced_by INTEGER');
}

/** Messages re-indexed per statement when an older memory_fts is rebuilt. */
const REBUILD_PAGE = 5000;

/**
 * Replaces a memory_fts without the `memory` column (index files written before searches were scoped per
 * memory) by one with it, filled from memory_rows in id order, in one transaction: a crash leaves the
 * old table, and the next open rebuilds again.
 */
function rebuildUnscopedFullText(db: Database): void {
  const unscoped = () => {
    const exists = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memory_fts'`).get();
    return exists !== undefined && !(db.prepare(`PRAGMA table_info(memory_fts)`).all() as { name: string }[]).some((c) => c.name === 'memory');
  };
  if (!unscoped()) return;
  db.transaction(() => {
    // Checked again under the write lock: another process opening the same file may have rebuilt it meanwhile.
    if (!unscoped()) return;
    db.exec(`DROP TABLE memory_fts;
      CREATE VIRTUAL TABLE memory_fts USING fts5(content, memory, tokenize = 'porter unicode61', content = '', contentless_delete = 1);`);
    const page = db.prepare(`SELECT message_id, memory_id, content FROM memory_rows WHERE message_id > ? ORDER BY message_id LIMIT ${REBUILD_PAGE}`);
    const insert = db.prepare(`INSERT INTO memory_fts (rowid, content, memory) VALUES (?, ?, ?)`);
    for (let after = 0; ;) {
      const rows = page.all(after) as { message_id: number; memory_id: string; content: string }[];
      for (const r of rows) insert.run(r.message_id, r.content, memoryScopeToken(r.memory_id));
      if (rows.length < REBUILD_PAGE) break;
      after = rows[rows.length - 1]!.message_id;
    }
  }).immediate();
}
