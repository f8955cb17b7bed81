import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, type Config } from '../config.js';
import type { SettingsEnv } from '../config-schema.js';
import { openBackends, type Backends } from '../wiring.js';
import { openDatabase, parseDatabaseUrl, redactDatabaseUrl } from '../store/db.js';
import { DataDirInUseError, LOCK_FILE, lockDataDir, type DataDirLock } from '../engine/data-dir-lock.js';
import { isInside } from './blob-tree.js';
import { COPIED_TABLES, assertEveryTableKnown, copyTable, countRows } from './migration/tables.js';
import { MARKER_KEY, inspectTarget, writeMarker } from './migration/target-state.js';
import { runsInProgress } from './migration/in-progress.js';
import { copyBlobs, type CopiedFiles } from './migration/blobs.js';
import { chunkMismatches, copyChunks, type CopiedChunks } from './migration/chunks.js';
import { copyMessages, messageMismatches, type CopiedMessages } from './migration/messages.js';

export const MIGRATE_TO_USAGE =
  'usage: cairn migrate-to --database-url postgres://… --blobs s3://BUCKET[/PREFIX]|file:DIR --index embedded|milvus://… --data-dir DIR\n' +
  '  copies the stopped embedded installation in CAIRN_DATA_DIR to the target (CAIRN_S3_*, CAIRN_MILVUS_* and AWS_* variables apply to the target);\n' +
  '  DIR is the target\'s CAIRN_DATA_DIR (new or empty; it holds the embedded index with --index embedded)\n';

/** Where the installation goes: the four settings the migrated Cairn will run with. */
export interface MigrationTarget {
  databaseUrl: string;
  blobs: string;
  index: string;
  dataDir: string;
}

const FLAGS: Record<string, keyof MigrationTarget> = {
  '--database-url': 'databaseUrl',
  '--blobs': 'blobs',
  '--index': 'index',
  '--data-dir': 'dataDir',
};

/**
 * Settings of the target's engines (S3, Milvus): the source is a folder and the embedded index, whose
 * configuration would refuse them as set without their engine.
 */
const TARGET_ONLY = /^CAIRN_(S3|MILVUS)_/;

/** `cairn migrate-to …`: exit 0 when everything was copied and verified, 1 on any error or mismatch, 2 on bad usage. */
export async function runMigrateToCommand(env: SettingsEnv, args: string[]): Promise<number> {
  let target: MigrationTarget;
  try {
    target = parseFlags(args);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${MIGRATE_TO_USAGE}`);
    return 2;
  }
  await migrateTo(env, target, (line) => console.log(line));
  return 0;
}

export function parseFlags(args: string[]): MigrationTarget {
  const given: Partial<MigrationTarget> = {};
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const field = FLAGS[flag];
    if (!field) throw new Error(`unknown argument: ${args[i]}`);
    const value = inline ?? args[++i];
    if (value === undefined || value === '' || (inline === undefined && value.startsWith('--'))) throw new Error(`${flag} needs a value`);
    if (given[field] !== undefined) throw new Error(`${flag} is given twice`);
    given[field] = value;
  }
  const missing = Object.entries(FLAGS).filter(([, field]) => given[field] === undefined).map(([flag]) => flag);
  if (missing.length) throw new Error(`missing ${missing.join(', ')}`);
  return given as MigrationTarget;
}

/** The embedded installation named by the environment (CAIRN_DATA_DIR), or an error saying why it is not one. */
function sourceConfig(env: SettingsEnv): Config {
  const index = env.CAIRN_INDEX?.trim();
  if (index && index !== 'embedded') throw new Error(`CAIRN_INDEX is ${index}: migrate-to moves an embedded installation (unset CAIRN_INDEX); the target index is --index`);
  const config = loadConfig(Object.fromEntries(Object.entries(env).filter(([name]) => !TARGET_ONLY.test(name))));
  const db = parseDatabaseUrl(config.databaseUrl);
  if (db.dialect !== 'sqlite') throw new Error(`CAIRN_DATABASE_URL is ${redactDatabaseUrl(config.databaseUrl)}: migrate-to moves an embedded installation, whose metadata is SQLite`);
  if (config.blobs.kind !== 'file') throw new Error('CAIRN_BLOBS names an S3 bucket: migrate-to moves an embedded installation, whose files are in a folder; the target is --blobs');
  for (const file of [db.file, path.join(config.dataDir, 'cairn.db')]) {
    if (!fs.existsSync(file)) throw new Error(`no Cairn installation in ${config.dataDir} (${file} is missing); set CAIRN_DATA_DIR to the installation to migrate`);
  }
  return config;
}

/** The configuration the migrated Cairn will run with, parsed exactly as `cairn start` will parse it. */
function targetConfig(env: SettingsEnv, target: MigrationTarget): Config {
  if (parseDatabaseUrl(target.databaseUrl).dialect !== 'postgres') {
    throw new Error(`--database-url must be a postgres://… URL; to copy an embedded installation as it is, use cairn backup and cairn restore`);
  }
  const targetEnv = { ...env, CAIRN_DATA_DIR: path.resolve(target.dataDir), CAIRN_DATABASE_URL: target.databaseUrl, CAIRN_BLOBS: target.blobs, CAIRN_INDEX: target.index };
  const config = loadConfig(targetEnv);
  if (target.index !== 'embedded' && !configReadsIndex(targetEnv, config)) {
    throw new Error(`--index ${target.index}: this Cairn has no such chunk index (its configuration does not read CAIRN_INDEX=${target.index}); use --index embedded`);
  }
  return config;
}

/**
 * Whether the configuration changes with CAIRN_INDEX: a value it does not read would otherwise be
 * accepted and ignored, and the chunks would land in the embedded index instead.
 */
function configReadsIndex(env: SettingsEnv, config: Config): boolean {
  try {
    return JSON.stringify(loadConfig({ ...env, CAIRN_INDEX: 'embedded' })) !== JSON.stringify(config);
  } catch {
    return true;
  }
}

function assertApart(source: Config, target: Config): void {
  if (isInside(target.dataDir, source.dataDir) || isInside(source.dataDir, target.dataDir)) {
    throw new Error(`--data-dir ${target.dataDir} must be apart from the source data dir ${source.dataDir}`);
  }
  if (source.blobs.kind === 'file' && target.blobs.kind === 'file' && (isInside(target.blobs.dir, source.blobs.dir) || isInside(source.blobs.dir, target.blobs.dir))) {
    throw new Error(`--blobs ${target.blobs.dir} must be apart from the source's files in ${source.blobs.dir}`);
  }
}

function describeTarget(target: MigrationTarget): string {
  return `CAIRN_DATA_DIR=${path.resolve(target.dataDir)} CAIRN_DATABASE_URL=${redactDatabaseUrl(target.databaseUrl)} CAIRN_BLOBS=${target.blobs} CAIRN_INDEX=${target.index}`;
}

async function lockOrExplain(dataDir: string, role: 'source' | 'target'): Promise<DataDirLock> {
  try {
    return await lockDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirInUseError) {
      throw new Error(role === 'source' ? `${err.message}; stop it before migrating` : `${err.message}: that is the target data dir; stop it before migrating into it`);
    }
    throw err;
  }
}

export interface MigrationSummary {
  rows: Record<string, number>;
  files: CopiedFiles;
  chunks: CopiedChunks;
  messages: CopiedMessages;
}

/**
 * Copies the stopped embedded installation of `env` to `target`: metadata rows, files, chunks and
 * memory messages, each through the port the target's Cairn uses, then checks every count against
 * the source. Holds both data dirs for its whole run, so no Cairn starts on either meanwhile.
 */
export async function migrateTo(env: SettingsEnv, target: MigrationTarget, say: (line: string) => void): Promise<MigrationSummary> {
  const started = Date.now();
  const to = targetConfig(env, target);
  const source = sourceConfig(env);
  assertApart(source, to);
  say(`migrating the embedded installation in ${source.dataDir} to ${describeTarget(target)}`);
  const locks: DataDirLock[] = [];
  const open: Backends[] = [];
  try {
    locks.push(await lockOrExplain(source.dataDir, 'source'));
    locks.push(await lockOrExplain(to.dataDir, 'target'));
    const targetDirEmpty = fs.readdirSync(to.dataDir).every((entry) => entry === LOCK_FILE);
    const from = await openBackends(source);
    open.push(from);
    const mode = await inspectTargetDatabase(to, source.dataDir);
    if (mode === 'fresh' && !targetDirEmpty) throw new Error(`the target data dir ${to.dataDir} is not empty; choose a new or empty directory`);
    const checked = Date.now();
    await assertNothingRuns(source, from, say);
    say(`no runs in progress (checked in ${seconds(checked)}); ${mode === 'resume' ? 'the target holds an unfinished migration of this source: copying everything again over it' : 'the target is empty'}`);

    const dest = await openBackends(to);
    open.push(dest);
    await writeMarker(dest.db, source.dataDir, false);
    const summary = await copyEverything(from, dest, source, to, say);
    await verify(from, dest, source.dataDir, summary, say);
    await writeMarker(dest.db, source.dataDir, true);
    say(`migration complete in ${seconds(started)}, every count matches the source: ${sum(summary.rows)} rows, ${summary.files.copied} files, ${summary.chunks.chunks} chunks, ${summary.messages.messages} memory messages`);
    say(`start Cairn on the target with ${describeTarget(target)}${to.blobs.kind === 's3' || target.index !== 'embedded' ? ' and the engines\' variables used here (CAIRN_S3_*, CAIRN_MILVUS_*, AWS_*)' : ''}`);
    say(`the source in ${source.dataDir} is unchanged; keep it until the target has served for a while`);
    return summary;
  } finally {
    for (const backends of open.reverse()) await backends.close().catch(() => undefined);
    for (const lock of locks.reverse()) lock.release();
  }
}

async function assertNothingRuns(source: Config, from: Backends, say: (line: string) => void): Promise<void> {
  const busy = await runsInProgress(source, from.store, say);
  if (busy.length === 0) return;
  throw new Error(
    `runs are in progress in the source, and workflow history is not migrated:\n  ${busy.slice(0, 10).join('\n  ')}${busy.length > 10 ? '\n  …' : ''}\n` +
      'start Cairn on the source and let them finish (or stop them), then stop it and run migrate-to again',
  );
}

/** The four stages, in an order where nothing refers to what is not there yet: rows, files, chunks, messages. */
async function copyEverything(from: Backends, dest: Backends, source: Config, to: Config, say: (line: string) => void): Promise<MigrationSummary> {
  const every = throttle(2000);
  let stage = Date.now();
  const { rows, signingKey } = await copyMetadata(from, dest, source.dataDir, say);
  copyAdminKeyFile(source.dataDir, to.dataDir);
  say(`metadata: ${sum(rows)} rows in ${COPIED_TABLES.length} tables${signingKey ? ', and the login signing key' : ''} in ${seconds(stage)}`);

  const sourceFiles = (source.blobs as { dir: string }).dir;
  say(`files: copying from ${sourceFiles}`);
  stage = Date.now();
  const files = await copyBlobs(sourceFiles, dest.blobs, (s) => every(() => say(`files: ${s.copied}/${s.found} (${formatBytes(s.bytes)})`)));
  say(`files: ${files.copied}/${files.found} copied (${formatBytes(files.bytes)}) in ${seconds(stage)}`);

  const documentIds = (await from.db.kysely.selectFrom('documents').select('id').orderBy('id').execute()).map((r) => r.id);
  say(`chunks: copying the chunks of ${documentIds.length} documents`);
  stage = Date.now();
  const chunks = await copyChunks(from.index, dest.index, documentIds, (s) => every(() => say(`chunks: ${s.chunks} (${s.documents}/${documentIds.length} documents)`)));
  say(`chunks: ${chunks.chunks} copied (${chunks.documents} documents) in ${seconds(stage)}`);

  const memories = await memoriesToCopy(from);
  say(`messages: copying the messages of ${memories.length} memories`);
  stage = Date.now();
  const messages = await copyMessages(from.memories, dest.memories, memories, (s) => every(() => say(`messages: ${s.messages} (${s.memories}/${memories.length} memories)`)));
  say(`messages: ${messages.messages} copied (${messages.memories} memories, ${formatBytes(messages.bytes)}) in ${seconds(stage)}`);
  return { rows, files, chunks, messages };
}

/** Reads the target back through the same ports and compares every count with the source; a difference is an error. */
async function verify(from: Backends, dest: Backends, sourceDataDir: string, copied: MigrationSummary, say: (line: string) => void): Promise<void> {
  say('verifying the target against the source');
  const started = Date.now();
  const wrong = [
    ...(await metadataMismatches(from, dest, sourceDataDir)),
    ...(copied.files.copied === copied.files.found ? [] : [`files: ${copied.files.copied} copied of ${copied.files.found}`]),
    ...(await chunkMismatches(dest.index, copied.chunks.perDocument)),
    ...(await messageMismatches(dest.memories, copied.messages.perMemory)),
  ];
  if (wrong.length) {
    throw new Error(`the target does not match the source:\n  ${wrong.slice(0, 20).join('\n  ')}${wrong.length > 20 ? `\n  … (${wrong.length} in all)` : ''}\nrun migrate-to again (it copies over what is there)`);
  }
  say(`verified in ${seconds(started)}`);
}

/** The target's metadata database alone (migrated by the same code), before its index is opened. */
async function inspectTargetDatabase(to: Config, sourceDataDir: string): Promise<'fresh' | 'resume'> {
  const db = await openDatabase(to.databaseUrl);
  try {
    await assertEveryTableKnown(db);
    return await inspectTarget(db, sourceDataDir);
  } finally {
    await db.close();
  }
}

async function copyMetadata(from: Backends, dest: Backends, sourceDataDir: string, say: (line: string) => void): Promise<{ rows: Record<string, number>; signingKey: boolean }> {
  const rows: Record<string, number> = {};
  for (const spec of COPIED_TABLES) {
    rows[spec.table] = await copyTable(from.db, dest.db, spec);
    if (rows[spec.table]) say(`metadata: ${spec.table} ${rows[spec.table]} rows`);
  }
  // The embedded install keeps its signing key in a file; the scale-out profile reads it from settings,
  // so login tokens issued before the migration stay valid.
  const secret = readSecretFile(sourceDataDir, 'jwt-secret');
  if (secret) {
    await dest.db.kysely
      .insertInto('settings')
      .values({ key: 'jwt-secret', value: secret, create_time: Date.now() })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: secret }))
      .execute();
  }
  return { rows, signingKey: secret !== undefined };
}

/** Every copied table holds as many rows as in the source; settings also the marker and the signing key. */
async function metadataMismatches(from: Backends, dest: Backends, sourceDataDir: string): Promise<string[]> {
  const expected = await countRows(from.db);
  const got = await countRows(dest.db);
  const sourceKeys = new Set((await from.db.kysely.selectFrom('settings').select('key').execute()).map((r) => r.key));
  sourceKeys.add(MARKER_KEY);
  if (readSecretFile(sourceDataDir, 'jwt-secret')) sourceKeys.add('jwt-secret');
  expected.settings = sourceKeys.size;
  return Object.keys(expected)
    .filter((table) => got[table] !== expected[table])
    .map((table) => `${table}: ${got[table]} rows in the target, ${expected[table]} expected from the source`);
}

/** Memories of the source with the highest message id their tasks name. */
async function memoriesToCopy(from: Backends) {
  const rows = await from.db.kysely
    .selectFrom('memories')
    .leftJoin('memory_tasks', 'memory_tasks.memory_id', 'memories.id')
    .select((eb) => ['memories.id as id', eb.fn.max('memory_tasks.message_id').as('top')])
    .groupBy('memories.id')
    .orderBy('memories.id')
    .execute();
  return rows.map((r) => ({ id: r.id, idsUsedThrough: Number(r.top ?? 0) }));
}

function readSecretFile(dataDir: string, name: string): string | undefined {
  const file = path.join(dataDir, name);
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() || undefined : undefined;
}

/** The admin API key printed at the first start: its hash is in api_keys; the file is where operators look for it. */
function copyAdminKeyFile(sourceDir: string, targetDir: string): void {
  const from = path.join(sourceDir, 'admin-api-key');
  if (!fs.existsSync(from)) return;
  fs.copyFileSync(from, path.join(targetDir, 'admin-api-key'));
  fs.chmodSync(path.join(targetDir, 'admin-api-key'), 0o600);
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** Runs the given print at most once per `ms`. */
function throttle(ms: number): (print: () => void) => void {
  let last = 0;
  return (print) => {
    if (Date.now() - last < ms) return;
    last = Date.now();
    print();
  };
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} kB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}
