import type { Database } from 'better-sqlite3';
import { FTS_COLUMNS } from '../fulltext/fts5-match.js';

/**
 * Tables of the embedded chunk index (all prefixed `chunk_`), created idempotently.
 *
 * - chunk_rows     the chunk record (every IndexedChunk field, lists as JSON); `terms` is unused and left
 *                  empty (it held stems for term similarity before that came from BM25);
 * - chunk_fts      FTS5 over title (document name), content, keywords, questions; contentless (the text
 *                  lives in chunk_rows) with contentless_delete so rows can be replaced; rowid = chunk_rows.rowid;
 * - chunk_keys     narrow filter table clustered by dataset (WITHOUT ROWID, key (dataset_id, row)) used to
 *                  filter full-text hits; `bits` is the sign-quantised vector from which vector search
 *                  preselects candidates by Hamming distance;
 * - chunk_vectors  the float32 vectors (any dimension per chunk), read only for the preselected candidates;
 * - chunk_stats    counters kept by the write transactions: chunk_count (IDF without a count(*) scan) and
 *                  writes (tells each process when its cached term frequencies are out of date);
 * - chunk_generations  per dataset, bumped by every write transaction: tells each process when its
 *                  in-memory copy of the dataset's sign bits (sign-bit-cache.ts) is out of date.
 */
export function ensureChunkSchema(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS chunk_rows (
      rowid INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      tenant_id TEXT NOT NULL,
      dataset_id TEXT NOT NULL,
      document_id TEXT NOT NULL,
      document_name TEXT NOT NULL,
      content TEXT NOT NULL,
      important_keywords TEXT NOT NULL,
      questions TEXT NOT NULL,
      tag_kwd TEXT NOT NULL,
      image_id TEXT NOT NULL,
      positions TEXT NOT NULL,
      available INTEGER NOT NULL,
      create_time TEXT NOT NULL,
      create_timestamp REAL NOT NULL,
      parent_content TEXT,
      terms BLOB NOT NULL,
      page_number INTEGER NOT NULL,
      top REAL NOT NULL,
      raptor_layer INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS chunk_rows_document ON chunk_rows (document_id, page_number, top, create_timestamp);
    CREATE INDEX IF NOT EXISTS chunk_rows_dataset ON chunk_rows (dataset_id);
    CREATE TABLE IF NOT EXISTS chunk_keys (
      dataset_id TEXT NOT NULL,
      row INTEGER NOT NULL,
      document_id TEXT NOT NULL,
      available INTEGER NOT NULL,
      dim INTEGER NOT NULL,
      bits BLOB,
      PRIMARY KEY (dataset_id, row)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS chunk_vectors (
      row INTEGER PRIMARY KEY,
      vector BLOB NOT NULL
    );
    CREATE VIRTUAL TABLE IF NOT EXISTS chunk_fts USING fts5(
      ${FTS_COLUMNS.join(', ')},
      tokenize = 'porter unicode61', content = '', contentless_delete = 1
    );
    CREATE VIRTUAL TABLE IF NOT EXISTS chunk_fts_terms USING fts5vocab(chunk_fts, 'row');
    CREATE TABLE IF NOT EXISTS chunk_stats (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS chunk_generations (dataset_id TEXT PRIMARY KEY, generation INTEGER NOT NULL) WITHOUT ROWID;
    INSERT OR IGNORE INTO chunk_stats (name, value) VALUES ('chunk_count', (SELECT count(*) FROM chunk_rows));
    INSERT OR IGNORE INTO chunk_stats (name, value) VALUES ('writes', 0);
  `);
  setDeleteMerge(db);
  addMissingColumns(db);
}

/**
 * FTS5 rewrites a segment once this percentage of its rows is deleted (its default is 10). Large deletes and
 * renames run in slices (sqlite-index.ts), and at 10% a document that is most of a segment has that segment
 * rewritten again and again as the slices commit. Measured on a 20,000-chunk document (bench/ingest/index-writes.ts):
 * deleting it 2.5–3.0 s at 10%, 1.5–1.7 s at 50%; renaming it 6.3–6.4 and 4.1–4.6 s. A segment then never
 * holds more dead rows than live ones.
 */
const FTS_DELETE_MERGE_PERCENT = 50;

function setDeleteMerge(db: Database): void {
  const current = db.prepare(`SELECT v FROM chunk_fts_config WHERE k = 'deletemerge'`).pluck().get();
  if (current !== FTS_DELETE_MERGE_PERCENT) db.exec(`INSERT INTO chunk_fts (chunk_fts, rank) VALUES ('deletemerge', ${FTS_DELETE_MERGE_PERCENT})`);
}

/** Columns added after chunk_rows was first shipped, added to an index file made before them. */
function addMissingColumns(db: Database): void {
  const columns = new Set((db.prepare('PRAGMA table_info(chunk_rows)').all() as { name: string }[]).map((c) => c.name));
  if (columns.has('raptor_layer')) return;
  try {
    db.exec('ALTER TABLE chunk_rows ADD COLUMN raptor_layer INTEGER NOT NULL DEFAULT 0');
  } catch (err) {
    // Another process opening the same file added it between the check and here.
    if (!/duplicate column/i.test((err as Error).message)) throw err;
  }
}
