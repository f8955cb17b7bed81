import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Config } from '../config.js';
import { DataDirInUseError, LOCK_FILE, lockDataDir } from '../engine/data-dir-lock.js';
import { devServerPidFile, stopLeftoverDevServer } from '../engine/dev-server-pid-file.js';
import { copyTree, isInside } from './blob-tree.js';
import { BLOBS_DIR, CAIRN_DB, SECRET_FILES, TEMPORAL_DB, countRows, embeddedLayout, integrityOf, readManifest, type BackupManifest, type EmbeddedLayout } from './backup-format.js';

/** `cairn restore DIR [--force]`: puts a backup made by `cairn backup` into CAIRN_DATA_DIR. */
export async function runRestoreCommand(config: Config, args: string[]): Promise<number> {
  const force = args.includes('--force');
  const dirs = args.filter((a) => a !== '--force');
  if (dirs.length !== 1 || dirs[0]!.startsWith('-')) {
    process.stderr.write('usage: cairn restore DIR [--force]   (into CAIRN_DATA_DIR; --force replaces what it holds)\n');
    return 2;
  }
  const manifest = await restoreDataDir(path.resolve(dirs[0]!), embeddedLayout(config), { force }, (line) => console.log(line));
  const counts = Object.entries(manifest.counts).map(([table, n]) => `${table} ${n}`).join(', ');
  console.log(`restored the backup of ${manifest.snapshot_at} into ${config.dataDir}: ${counts}`);
  console.log('start Cairn on it with `cairn start`');
  return 0;
}

/** Everything of an installation a restore replaces; other files in the data dir are left as they are. */
function replacedPaths(layout: EmbeddedLayout): string[] {
  return [
    ...[layout.cairnDb, layout.temporalDb].flatMap((db) => [db, `${db}-wal`, `${db}-shm`, `${db}-journal`]),
    devServerPidFile(layout.temporalDb),
    layout.blobsDir,
    ...SECRET_FILES.map((name) => path.join(layout.dataDir, name)),
  ];
}

export async function restoreDataDir(source: string, layout: EmbeddedLayout, options: { force: boolean }, say: (line: string) => void = () => undefined): Promise<BackupManifest> {
  const manifest = readManifest(source);
  const target = layout.dataDir;
  if (path.resolve(source) === target) throw new Error('the backup directory and the data dir are the same directory');
  for (const name of Object.keys(manifest.databases)) {
    if (!fs.existsSync(path.join(source, name))) throw new Error(`the backup in ${source} is incomplete: ${name} is missing`);
  }
  let lock;
  try {
    // Held for the whole restore: no Cairn may start on a half-restored directory.
    lock = await lockDataDir(target);
  } catch (err) {
    if (err instanceof DataDirInUseError) throw new Error(`${err.message}; stop it before restoring into ${target}`);
    throw err;
  }
  try {
    await stopLeftoverDevServer(devServerPidFile(layout.temporalDb), layout.temporalDb, say);
    const present = fs.readdirSync(target).filter((entry) => entry !== LOCK_FILE);
    if (!isInside(layout.blobsDir, target) && fs.existsSync(layout.blobsDir) && fs.readdirSync(layout.blobsDir).length) present.push(layout.blobsDir);
    if (present.length && !options.force) {
      throw new Error(
        `the data dir ${target} is not empty (${present.slice(0, 6).join(', ')}${present.length > 6 ? ', ...' : ''}); ` +
          'restore into a new or empty directory (set CAIRN_DATA_DIR), or pass --force to replace its databases, files and secrets',
      );
    }
    if (present.length) {
      // The old -wal and -shm go too: SQLite would apply a stale write-ahead log to the restored file.
      for (const entry of replacedPaths(layout)) fs.rmSync(entry, { recursive: true, force: true });
      say(`--force: removed the databases, files and secrets in ${target}`);
    }
    const destinations: Record<string, string> = { [CAIRN_DB]: layout.cairnDb, [TEMPORAL_DB]: layout.temporalDb };
    for (const name of Object.keys(manifest.databases)) {
      const partial = `${destinations[name]}.restoring`;
      fs.copyFileSync(path.join(source, name), partial);
      fs.renameSync(partial, destinations[name]!);
    }
    checkRestoredDatabase(layout.cairnDb, manifest);
    say(`restored ${Object.keys(manifest.databases).join(' and ')}`);
    await copyTree(path.join(source, BLOBS_DIR), layout.blobsDir);
    for (const name of manifest.secrets) {
      fs.copyFileSync(path.join(source, name), path.join(target, name));
      fs.chmodSync(path.join(target, name), 0o600);
    }
    return manifest;
  } finally {
    lock.release();
  }
}

/** The copy must be sound and hold what the manifest counted. */
function checkRestoredDatabase(file: string, manifest: BackupManifest): void {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const integrity = integrityOf(db, 'quick_check');
    if (integrity !== 'ok') throw new Error(`the restored ${CAIRN_DB} failed its integrity check: ${integrity}`);
    const counts = countRows(db);
    for (const [table, n] of Object.entries(manifest.counts)) {
      if (counts[table] !== n) throw new Error(`the restored ${CAIRN_DB} has ${counts[table]} rows in ${table}, the manifest says ${n}; the backup was changed after it was made`);
    }
  } finally {
    db.close();
  }
}
