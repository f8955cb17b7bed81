import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Config } from '../config.js';
import { copyTree, isInside, listFiles, treeSize } from './blob-tree.js';
import { BLOBS_DIR, CAIRN_DB, MANIFEST_FILE, MANIFEST_FORMAT, SECRET_FILES, TEMPORAL_DB, countRows, embeddedLayout, integrityOf, type BackupManifest, type EmbeddedLayout } from './backup-format.js';

/** `cairn backup DIR`: a consistent copy of the embedded installation in CAIRN_DATA_DIR, taken while it serves. */
export async function runBackupCommand(config: Config, args: string[]): Promise<number> {
  if (args.length !== 1 || args[0]!.startsWith('-')) {
    process.stderr.write('usage: cairn backup DIR   (DIR: a new or empty directory outside the data dir)\n');
    return 2;
  }
  const target = path.resolve(args[0]!);
  const layout = embeddedLayout(config);
  const manifest = await backupDataDir(layout, target, (line) => console.log(line));
  if (!manifest.databases[TEMPORAL_DB] && config.temporalAddress) {
    console.log(`note: workflow state lives in the Temporal server at ${config.temporalAddress}; back it up with that server's own tools`);
  }
  const counts = Object.entries(manifest.counts).map(([table, n]) => `${table} ${n}`).join(', ');
  console.log(`backup complete in ${target}: ${counts}; ${manifest.blobs.files} files (${manifest.blobs.bytes} bytes)`);
  if (manifest.blobs.missing.length) {
    console.log(`warning: ${manifest.blobs.missing.length} file(s) the database references were deleted before they could be copied (listed in ${MANIFEST_FILE})`);
  }
  return 0;
}

/**
 * The order is what makes the copy consistent:
 * 1. copy the blobs (most bytes move here, before any database is pinned), then copy what was written
 *    meanwhile until a pass finds nothing new, so that the last pass before step 2 is short;
 * 2. pin a read snapshot of temporal.db and, right after, of cairn.db (WAL: Cairn and Temporal keep
 *    writing meanwhile);
 * 3. at once, copy the blobs written since the last pass; only then copy both databases' pages through
 *    SQLite's online backup API, inside the pinned snapshots (however long that takes, it is the
 *    state of step 2). A blob is written before the row that names it, so every blob the captured
 *    database references existed at step 2 and is caught by step 1 or 3. One created during the last
 *    pass of step 1 and deleted before step 3 reached it is missing; the manifest lists it;
 * 4. drop blobs of datasets and documents the captured database does not know (created after step 2).
 */
export async function backupDataDir(layout: EmbeddedLayout, target: string, say: (line: string) => void = () => undefined): Promise<BackupManifest> {
  const started = new Date();
  if (!fs.existsSync(layout.cairnDb)) throw new Error(`no Cairn installation in ${layout.dataDir} (${CAIRN_DB} is missing); set CAIRN_DATA_DIR`);
  for (const dir of [layout.dataDir, layout.blobsDir]) {
    if (isInside(target, dir) || isInside(dir, target)) throw new Error(`the backup directory ${target} must be apart from ${dir}`);
  }
  const created = prepareTarget(target);
  try {
    say(`copying files from ${layout.blobsDir}`);
    const blobsCopy = path.join(target, BLOBS_DIR);
    let pass = await copyTree(layout.blobsDir, blobsCopy);
    for (let round = 0; round < 5 && pass.copied > 0; round++) pass = await copyTree(layout.blobsDir, blobsCopy, pass.stamps);
    const snapshotAt = await captureDatabases(layout, target, async () => {
      await copyTree(layout.blobsDir, blobsCopy, pass.stamps);
    });
    say(`captured the databases as of ${snapshotAt.toISOString()}`);

    const databases: BackupManifest['databases'] = {};
    for (const name of [TEMPORAL_DB, CAIRN_DB]) {
      const file = path.join(target, name);
      if (fs.existsSync(file)) databases[name] = { bytes: 0, integrity: '' };
    }
    let counts: Record<string, number> = {};
    let references = { datasets: new Set<string>(), documents: new Set<string>(), required: [] as string[] };
    for (const name of Object.keys(databases)) {
      const db = new BetterSqlite3(path.join(target, name));
      try {
        // A single self-contained file: no -wal beside it to lose when the backup is copied around.
        db.pragma('journal_mode = DELETE');
        const integrity = integrityOf(db);
        if (integrity !== 'ok') throw new Error(`the copy of ${name} failed its integrity check: ${integrity}`);
        databases[name]!.integrity = integrity;
        if (name === CAIRN_DB) {
          counts = countRows(db);
          references = blobReferences(db);
        }
      } finally {
        db.close();
      }
      databases[name]!.bytes = fs.statSync(path.join(target, name)).size;
    }

    const blobsDir = path.join(target, BLOBS_DIR);
    const pruned = await pruneUnreferenced(blobsDir, references.datasets, references.documents);
    const missing = references.required.filter((key) => !fs.existsSync(path.join(blobsDir, key)));
    const secrets = copySecrets(layout.dataDir, target);
    const manifest: BackupManifest = {
      format: MANIFEST_FORMAT,
      started_at: started.toISOString(),
      snapshot_at: snapshotAt.toISOString(),
      finished_at: new Date().toISOString(),
      source_data_dir: layout.dataDir,
      databases,
      counts,
      blobs: { ...(await treeSize(blobsDir)), pruned, missing },
      secrets,
    };
    // Written last: a directory without a manifest is an interrupted backup, and restore refuses it.
    fs.writeFileSync(path.join(target, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
    return manifest;
  } catch (err) {
    removePartial(target, created);
    throw err;
  }
}

/** Pages per backup step: everything at once, inside the pinned snapshot. */
const ALL_PAGES = 0x7fffffff;

/**
 * Both databases are pinned (a read transaction each, Temporal first) before either is copied, so the
 * two copies are from nearly the same instant. Were Temporal's copy the later one, a workflow could
 * have finished in it whose writes to cairn.db are not in Cairn's copy, and that document would stay
 * RUNNING forever after a restore; Temporal a moment behind only replays idempotent activities.
 */
async function captureDatabases(layout: EmbeddedLayout, target: string, whilePinned: () => Promise<void>): Promise<Date> {
  const files = { [TEMPORAL_DB]: layout.temporalDb, [CAIRN_DB]: layout.cairnDb };
  const open = Object.entries(files)
    .filter(([, file]) => fs.existsSync(file))
    .map(([name, file]) => ({ name, db: new BetterSqlite3(file, { readonly: true, fileMustExist: true, timeout: 10_000 }) }));
  try {
    for (const { db } of open) {
      db.exec('BEGIN');
      db.prepare('SELECT count(*) FROM sqlite_schema').get();
    }
    const at = new Date();
    await whilePinned();
    for (const { name, db } of open) await db.backup(path.join(target, name), { progress: () => ALL_PAGES });
    return at;
  } finally {
    for (const { db } of open) {
      if (db.inTransaction) db.exec('COMMIT');
      db.close();
    }
  }
}

/** Which blobs the captured database names: its datasets' folders, its documents' files, its chunks' images. */
function blobReferences(db: BetterSqlite3.Database) {
  const datasets = new Set((db.prepare('SELECT id FROM datasets').all() as { id: string }[]).map((r) => r.id));
  const locations = (db.prepare('SELECT location FROM documents').all() as { location: string }[]).map((r) => r.location);
  const images = (db.prepare(`SELECT dataset_id, image_id FROM chunk_rows WHERE image_id != ''`).all() as { dataset_id: string; image_id: string }[]).map(
    // image_id is `{dataset_id}-{chunk_id}`; the file is datasets/{dataset_id}/images/{chunk_id} (blob-keys.ts).
    (r) => `datasets/${r.dataset_id}/images/${r.image_id.slice(r.image_id.indexOf('-') + 1)}`,
  );
  return { datasets, documents: new Set(locations), required: [...locations, ...images] };
}

/** Removes copied dataset folders and document files unknown to the captured database; returns how many files went. */
async function pruneUnreferenced(blobsDir: string, datasets: Set<string>, documents: Set<string>): Promise<number> {
  let pruned = 0;
  const datasetsDir = path.join(blobsDir, 'datasets');
  if (!fs.existsSync(datasetsDir)) return 0;
  for (const id of fs.readdirSync(datasetsDir)) {
    const dir = path.join(datasetsDir, id);
    if (!datasets.has(id)) {
      pruned += (await listFiles(dir)).length;
      fs.rmSync(dir, { recursive: true, force: true });
      continue;
    }
    const docsDir = path.join(dir, 'documents');
    if (!fs.existsSync(docsDir)) continue;
    for (const file of fs.readdirSync(docsDir)) {
      if (documents.has(`datasets/${id}/documents/${file}`)) continue;
      fs.rmSync(path.join(docsDir, file), { recursive: true, force: true });
      pruned++;
    }
  }
  return pruned;
}

function copySecrets(source: string, target: string): string[] {
  const copied: string[] = [];
  for (const name of SECRET_FILES) {
    const from = path.join(source, name);
    if (!fs.existsSync(from)) continue;
    fs.copyFileSync(from, path.join(target, name));
    fs.chmodSync(path.join(target, name), 0o600);
    copied.push(name);
  }
  return copied;
}

/** Creates the target or accepts an empty one; returns whether it was created here. */
function prepareTarget(target: string): boolean {
  if (!fs.existsSync(target)) {
    fs.mkdirSync(target, { recursive: true, mode: 0o700 });
    return true;
  }
  if (!fs.statSync(target).isDirectory()) throw new Error(`${target} is not a directory`);
  const entries = fs.readdirSync(target);
  if (entries.length) throw new Error(`the backup directory ${target} is not empty (${entries.slice(0, 5).join(', ')}); choose a new or empty directory`);
  return false;
}

function removePartial(target: string, created: boolean): void {
  if (created) {
    fs.rmSync(target, { recursive: true, force: true });
    return;
  }
  for (const entry of fs.readdirSync(target)) fs.rmSync(path.join(target, entry), { recursive: true, force: true });
}
