/**
 * The deployment profile a bench measures (`--profile embedded|scale-out`), shared by bench/quality,
 * bench/retrieval and bench/ingest:
 *
 * - `embedded`: metadata and the chunk index in the data dir's SQLite file, files on the local disk (what
 *   `make run` starts);
 * - `scale-out`: PostgreSQL metadata (a private cluster, test/support/postgres.ts), the Milvus chunk index
 *   (milvus-lite, test/support/milvus-server.ts) and files on S3 (moto, test/support/s3-server.ts), each
 *   started for the run on a free loopback port with its data in a temporary directory, stopped at the end.
 *
 * Two entry points: `openBenchIndex` gives a chunk index alone (benches that call `retrieve()` in their
 * own process), `startProfileServices` gives the environment of a whole Cairn on the profile (benches
 * that start `cairn start` / `cairn worker`).
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MilvusLocation } from '../src/index/location.js';
import { MilvusChunkIndex } from '../src/index/chunks/milvus/milvus-index.js';
import { openIndexDatabase, type Sqlite } from '../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../src/index/chunks/sqlite-index.js';
import { SqliteReadPool } from '../src/index/chunks/sqlite-read-pool.js';
import { ThreadedSqliteChunkIndex } from '../src/index/chunks/sqlite-threaded-index.js';
import type { ChunkIndex } from '../src/index/chunks/chunk-index.js';
import { startMilvusServer, type MilvusTestServer } from '../test/support/milvus-server.js';
import { startPostgres, type PostgresCluster } from '../test/support/postgres.js';
import { startS3Server, type S3TestServer } from '../test/support/s3-server.js';
import { commandLine, findProcesses, type Component } from './processes.js';

export type BenchProfile = 'embedded' | 'scale-out';
export const PROFILES: readonly BenchProfile[] = ['embedded', 'scale-out'];

export function parseProfile(value: string): BenchProfile {
  if (!PROFILES.includes(value as BenchProfile)) throw new Error(`--profile must be ${PROFILES.join(' or ')}, not '${value}'`);
  return value as BenchProfile;
}

/** `--profile` from the command line; `embedded` when absent. */
export function profileArgument(): BenchProfile {
  const i = process.argv.indexOf('--profile');
  if (i < 0) return 'embedded';
  return parseProfile(process.argv[i + 1] ?? '');
}

/** A chunk index a bench loads and then reads. */
export interface BenchIndex {
  index: ChunkIndex;
  /**
   * Call once the chunks of `datasetIds` are written. Embedded: checkpoints the WAL into the database
   * file. Milvus: seals the written rows into segments and has their BM25 scorers built (`readyForSearch`).
   */
  loaded(datasetIds: string[]): Promise<void>;
  /** Bytes the index takes on disk (its database file, or the Milvus server's data directory); NaN when unknown. */
  diskBytes(): number;
  /** The processes of the index's server, for CPU accounting (none for the embedded index). */
  servers(): Component[];
  close(): Promise<void>;
}

function sqliteBenchIndex(db: Sqlite, index: ChunkIndex, close: () => Promise<void>): BenchIndex {
  return {
    index,
    async loaded() {
      db.pragma('wal_checkpoint(TRUNCATE)');
    },
    diskBytes: () => statSync(db.name).size,
    servers: () => [],
    close,
  };
}

/** The milvus-lite server process listening on `address`, started by this process. */
export function milvusComponent(address: string): Component[] {
  const port = address.split(':').pop();
  return findProcesses(new RegExp(`milvus-lite server .*--port ${port}\\b`), process.pid).map((root) => ({ name: 'milvus-lite', root }));
}

function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? directoryBytes(path) : entry.isFile() ? statSync(path).size : 0;
  }
  return total;
}

/** The data directory of the milvus-lite server on `address` (from its command line); NaN when not found. */
export function milvusDiskBytes(address: string): number {
  const [root] = milvusComponent(address);
  const dir = root ? /--data-dir (\S+)/.exec(commandLine(root.root))?.[1] : undefined;
  try {
    return dir ? directoryBytes(dir) : NaN;
  } catch {
    return NaN;
  }
}

/**
 * Makes milvus-lite ready to search what was written, as a real Milvus is by itself some time after the
 * writes: a flush seals the rows into segments (milvus-lite otherwise rebuilds the BM25 index of unsealed
 * rows at every search: 1.5 s per SciFact query instead of ~25 ms), then one full-text search builds
 * each sealed segment's BM25 scorer, which milvus-lite does at the first search that reaches the segment
 * (a real Milvus builds segment indexes when it seals). That first search took 10 s for 6,000 chunks on a
 * busy machine, and the SDK gives a call 15 s: past its deadline the server still finishes the build, so
 * the search is asked again. Scores do not change, only the time of the first queries.
 */
async function readyForSearch(index: MilvusChunkIndex, datasetIds: string[]): Promise<void> {
  await index.flush();
  for (let attempt = 1; ; attempt++) {
    try {
      await index.fullText('warm up', { datasetIds, availableOnly: true }, 1);
      return;
    } catch (err) {
      if (attempt >= 4 || !String(err).includes('DEADLINE_EXCEEDED')) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5000));
    }
  }
}

function milvusBenchIndex(index: MilvusChunkIndex, location: MilvusLocation, close: () => Promise<void>): BenchIndex {
  return {
    index,
    loaded: (datasetIds) => readyForSearch(index, datasetIds),
    diskBytes: () => milvusDiskBytes(location.address),
    servers: () => milvusComponent(location.address),
    close,
  };
}

/**
 * A fresh, empty chunk index of the profile for a bench that queries it in its own process: the SQLite
 * index in a temporary file (reads on `threads` reader threads, as the service does, when above 0), or
 * the Milvus index in a database of its own on a milvus-lite server started for it.
 */
export async function openBenchIndex(profile: BenchProfile, options: { threads?: number } = {}): Promise<BenchIndex> {
  if (profile === 'embedded') {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-index-'));
    const file = join(dir, 'cairn.db');
    const db = openIndexDatabase(file);
    const writer = new SqliteChunkIndex(db);
    const threads = options.threads ?? 0;
    const index = threads > 0 ? new ThreadedSqliteChunkIndex(writer, new SqliteReadPool(file, threads)) : writer;
    return sqliteBenchIndex(db, index, async () => {
      await index.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    });
  }
  if (options.threads) throw new Error('--threads applies to the embedded index only (reader threads over its SQLite file)');
  const server = await startMilvusServer();
  try {
    const location = server.freshLocation();
    const index = await MilvusChunkIndex.connect(location);
    return milvusBenchIndex(index, location, async () => {
      await index.close();
      await server.stop();
    });
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/** The services a whole Cairn on one profile runs on. */
export interface ProfileServices {
  profile: BenchProfile;
  /** Environment for every Cairn process (API and workers) on the profile; empty for embedded. */
  env: Record<string, string>;
  /** One line naming the services, for the report. */
  description: string;
  /**
   * The chunk index a Cairn on this profile with data directory `dataDir` writes to, opened by the bench
   * (to write synthetic chunks as the ingestion workflow's index step does).
   */
  openIndex(dataDir: string): Promise<BenchIndex>;
  /** The services' processes (PostgreSQL, milvus-lite, moto), for CPU and memory accounting. */
  components(): Component[];
  stop(): Promise<void>;
}

export const embeddedServices: ProfileServices = {
  profile: 'embedded',
  env: {},
  description: 'embedded: SQLite metadata and index in the data dir, files on the local disk',
  async openIndex(dataDir) {
    const db = openIndexDatabase(join(dataDir, 'cairn.db'));
    return sqliteBenchIndex(db, new SqliteChunkIndex(db), async () => {
      db.close();
    });
  },
  components: () => [],
  async stop() {},
};

const BUCKET = 'cairn-bench';

/** The PostgreSQL server of the cluster listening on `port` with its backends (not the runuser that started it). */
export function postgresComponent(port: string): Component[] {
  return findProcesses(new RegExp(`^\\S*/postgres -D \\S+ -p ${port}\\b`)).map((root) => ({ name: 'PostgreSQL', root }));
}

function motoComponent(endpoint: string): Component[] {
  const port = new URL(endpoint).port;
  return findProcesses(new RegExp(`moto_server .*-p ${port}\\b`), process.pid).map((root) => ({ name: 'moto (S3)', root }));
}

/** Starts what the profile needs besides Cairn: nothing for embedded; PostgreSQL, milvus-lite and moto for scale-out. */
export async function startProfileServices(profile: BenchProfile): Promise<ProfileServices> {
  if (profile === 'embedded') return embeddedServices;
  const started = await Promise.allSettled([startPostgres(), startMilvusServer(), startS3Server()] as const);
  const stopAll = () => Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  const [postgres, milvus, s3] = started.map((s) => (s as PromiseFulfilledResult<unknown>).value) as [PostgresCluster, MilvusTestServer, S3TestServer];
  try {
    const databaseUrl = await postgres.createDatabase('cairn_bench');
    const location = milvus.freshLocation();
    await s3.createBucket(BUCKET);
    const pgPort = new URL(databaseUrl).port;
    return {
      profile,
      env: { CAIRN_DATABASE_URL: databaseUrl, ...milvus.env(location), ...s3.env(BUCKET, 'blobs') },
      description: `scale-out: PostgreSQL metadata (127.0.0.1:${pgPort}), Milvus index (milvus-lite ${milvus.address}), S3 files (moto ${s3.endpoint}, s3://${BUCKET}/blobs)`,
      async openIndex() {
        const index = await MilvusChunkIndex.connect(location);
        return milvusBenchIndex(index, location, () => index.close());
      },
      components: () => [...postgresComponent(pgPort), ...milvusComponent(milvus.address), ...motoComponent(s3.endpoint)],
      stop: async () => {
        await stopAll();
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
