/**
 * The memory index of a deployment profile, for bench/memory's search part (`--profile embedded|scale-out`):
 *
 * - `embedded`: SqliteMemoryIndex in a temporary database file configured like the service's;
 * - `scale-out`: MilvusMemoryIndex, its ledger in a PostgreSQL database (a private cluster,
 *   test/support/postgres.ts) and its search copies on a milvus-lite server (test/support/milvus-server.ts),
 *   both started for the run on free loopback ports and stopped at the end.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MilvusClient } from '@zilliz/milvus2-sdk-node';
import { openIndexDatabase } from '../../src/index/sqlite-database.js';
import { SqliteMemoryIndex } from '../../src/index/memories/sqlite-memory-index.js';
import { MilvusMemoryIndex } from '../../src/index/memories/milvus-memory-index.js';
import { memoryTextSpec, memoryVectorsSpec } from '../../src/index/memories/milvus-memory-collections.js';
import type { MemoryIndex } from '../../src/index/memories/memory-index.js';
import { connectMilvus } from '../../src/index/chunks/milvus/client.js';
import { openDatabase } from '../../src/store/db.js';
import { startMilvusServer } from '../../test/support/milvus-server.js';
import { startPostgres } from '../../test/support/postgres.js';
import { milvusComponent, milvusDiskBytes, postgresComponent, type BenchProfile } from '../profile.js';
import type { Component } from '../processes.js';

export interface BenchMemoryIndex {
  index: MemoryIndex;
  description: string;
  /** Call once the messages are written, before searching (see readyForSearch for Milvus). */
  loaded(memoryIds: string[]): Promise<void>;
  /** Bytes on disk: the database file, or the Milvus data directory (the ledger's PostgreSQL not counted). */
  diskBytes(): number;
  /** The server processes a search also runs in (none embedded), for CPU accounting. */
  servers(): Component[];
  close(): Promise<void>;
}

/** Runs `call` again while it fails on the SDK's deadline (the server goes on with the work meanwhile). */
async function pastDeadline(call: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await call();
      return;
    } catch (err) {
      if (attempt >= 6 || !String(err).includes('DEADLINE_EXCEEDED')) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5000));
    }
  }
}

/**
 * Makes milvus-lite ready to search what was written, as a real Milvus is by itself some time after the writes
 * (bench/profile.ts, readyForSearch, does the same for chunks): a flush seals the rows into segments (milvus-lite
 * otherwise rebuilds the BM25 index of unsealed rows at every search), then one full-text search builds the sealed
 * segments' BM25 scorers. Both may outlast the SDK's 15 s deadline on 100k rows: they are asked again meanwhile.
 */
async function readyForSearch(client: MilvusClient, index: MemoryIndex, dim: number, memoryIds: string[]): Promise<void> {
  await pastDeadline(() => client.flushSync({ collection_names: [memoryTextSpec('cairn_').name, memoryVectorsSpec('cairn_', dim).name] }));
  await pastDeadline(() => index.fullText('warm up', { memoryIds }, 1));
}

export async function openBenchMemoryIndex(profile: BenchProfile, dim: number): Promise<BenchMemoryIndex> {
  if (profile === 'embedded') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-memory-index-'));
    const file = path.join(dir, 'cairn.db');
    const db = openIndexDatabase(file);
    return {
      index: new SqliteMemoryIndex(db),
      description: 'embedded: SqliteMemoryIndex (FTS5 + sqlite-vec) in one SQLite file',
      async loaded() {
        db.pragma('wal_checkpoint(TRUNCATE)');
      },
      diskBytes: () => fs.statSync(file).size,
      servers: () => [],
      async close() {
        db.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const postgres = await startPostgres();
  const milvus = await startMilvusServer().catch(async (err) => {
    await postgres.stop();
    throw err;
  });
  const stopServers = async () => {
    await milvus.stop();
    await postgres.stop();
  };
  try {
    const databaseUrl = await postgres.createDatabase('cairn_bench');
    const db = await openDatabase(databaseUrl);
    const location = milvus.freshLocation();
    const index = await MilvusMemoryIndex.connect(location, db);
    const client = await connectMilvus(location);
    const pgPort = new URL(databaseUrl).port;
    return {
      index,
      description: `scale-out: MilvusMemoryIndex, ledger in PostgreSQL (127.0.0.1:${pgPort}), search copies on milvus-lite (${milvus.address})`,
      loaded: (memoryIds) => readyForSearch(client, index, dim, memoryIds),
      diskBytes: () => milvusDiskBytes(milvus.address),
      servers: () => [...postgresComponent(pgPort), ...milvusComponent(milvus.address)],
      async close() {
        await client.closeConnection();
        await index.close();
        await db.close();
        await stopServers();
      },
    };
  } catch (err) {
    await stopServers();
    throw err;
  }
}
