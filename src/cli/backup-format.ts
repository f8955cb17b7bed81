import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Config } from '../config.js';
import { parseDatabaseUrl } from '../store/db.js';

/** What a backup directory holds, written by `cairn backup` and read by `cairn restore`. */
export const MANIFEST_FILE = 'manifest.json';
export const MANIFEST_FORMAT = 'cairn-backup/1';
export const CAIRN_DB = 'cairn.db';
export const TEMPORAL_DB = 'temporal.db';
export const BLOBS_DIR = 'blobs';
export const SECRET_FILES = ['jwt-secret', 'admin-api-key'];

/** Where an embedded installation keeps what a backup holds. */
export interface EmbeddedLayout {
  dataDir: string;
  /** Metadata and the embedded chunk, memory and event indexes: one SQLite file. */
  cairnDb: string;
  /** The child Temporal dev server's state (absent when Cairn uses an external Temporal). */
  temporalDb: string;
  blobsDir: string;
}

/**
 * The files of the embedded profile, or an error naming the setting that moves data elsewhere: those
 * deployments (PostgreSQL, S3) are backed up with their own tools.
 */
export function embeddedLayout(config: Pick<Config, 'dataDir' | 'databaseUrl' | 'blobs'>): EmbeddedLayout {
  const dataDir = path.resolve(config.dataDir);
  const cairnDb = path.join(dataDir, CAIRN_DB);
  const db = parseDatabaseUrl(config.databaseUrl);
  if (db.dialect !== 'sqlite' || path.resolve(db.file) !== cairnDb) {
    throw new Error(`cairn backup and restore cover the embedded installation, whose metadata is ${cairnDb}; CAIRN_DATABASE_URL points elsewhere (back that database up with its own tools)`);
  }
  if (config.blobs.kind !== 'file') {
    throw new Error('cairn backup and restore cover the embedded installation, whose files are in a folder; CAIRN_BLOBS names an S3 bucket (use the bucket\'s versioning or replication)');
  }
  return { dataDir, cairnDb, temporalDb: path.join(dataDir, TEMPORAL_DB), blobsDir: path.resolve(config.blobs.dir) };
}

export interface BackupManifest {
  format: typeof MANIFEST_FORMAT;
  /** ISO times: when the backup began, when both databases were captured, when it finished. */
  started_at: string;
  snapshot_at: string;
  finished_at: string;
  source_data_dir: string;
  databases: Record<string, { bytes: number; integrity: string }>;
  /** Rows per table in the captured cairn.db. */
  counts: Record<string, number>;
  blobs: {
    files: number;
    bytes: number;
    /** Blobs of datasets and documents that do not exist in the captured database (created after it), left out. */
    pruned: number;
    /** Keys the captured database references but which were deleted before the copy reached them. */
    missing: string[];
  };
  secrets: string[];
}

/** The tables whose row counts the manifest records and `cairn restore` checks. */
const COUNTED_TABLES = ['users', 'datasets', 'documents', 'chunk_rows', 'chats', 'chat_sessions', 'agents', 'agent_sessions', 'memories', 'memory_rows', 'mcp_servers', 'api_keys'];

export function countRows(db: BetterSqlite3.Database): Record<string, number> {
  const present = new Set((db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table'`).all() as { name: string }[]).map((r) => r.name));
  const counts: Record<string, number> = {};
  for (const table of COUNTED_TABLES) {
    if (present.has(table)) counts[table] = (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
  }
  return counts;
}

/** `PRAGMA integrity_check` (or the faster quick_check): 'ok' or the first problems SQLite reports. */
export function integrityOf(db: BetterSqlite3.Database, pragma: 'integrity_check' | 'quick_check' = 'integrity_check'): string {
  const rows = db.pragma(pragma) as Record<string, string>[];
  return rows.map((r) => Object.values(r)[0]).slice(0, 5).join('; ');
}

export function readManifest(dir: string): BackupManifest {
  const file = path.join(dir, MANIFEST_FILE);
  if (!fs.existsSync(file)) {
    throw new Error(`${dir} is not a complete Cairn backup: ${MANIFEST_FILE} is missing (a backup writes it last, so an interrupted one has none)`);
  }
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as BackupManifest;
  if (manifest.format !== MANIFEST_FORMAT) throw new Error(`${file}: unknown backup format ${JSON.stringify(manifest.format)}; expected ${MANIFEST_FORMAT}`);
  const databases = Object.keys(manifest.databases ?? {});
  if (!databases.includes(CAIRN_DB) || databases.some((name) => name !== CAIRN_DB && name !== TEMPORAL_DB)) {
    throw new Error(`${file}: the databases listed (${databases.join(', ')}) are not those of a Cairn backup`);
  }
  return manifest;
}
