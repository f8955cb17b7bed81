/**
 * The chunk index a quality run measures, per profile: `embedded` is the SQLite index (FTS5 + sqlite-vec)
 * in a temporary file; `scale-out` is the Milvus index on a milvus-lite server started for the run
 * (test/support/milvus-server.ts), in a database of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MilvusChunkIndex } from '../../src/index/milvus/milvus-index.js';
import { openIndexDatabase } from '../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../src/index/sqlite-index.js';
import type { ChunkIndex } from '../../src/index/types.js';
import { startMilvusServer } from '../../test/support/milvus-server.js';

export type QualityProfile = 'embedded' | 'scale-out';

export interface QualityIndex {
  index: ChunkIndex;
  close(): Promise<void>;
}

const WRITES = new Set<PropertyKey>(['upsert', 'update', 'deleteChunks', 'deleteByDocument', 'deleteByDataset', 'renameDocument']);

/**
 * The Milvus index, flushed before the first read after writes. milvus-lite scores rows that are not yet
 * in a sealed segment by rebuilding their BM25 index at every search (1.5 s per SciFact query instead of
 * ~25 ms); a real Milvus seals segments by itself. Scores do not change, only the time per query.
 */
function flushedBeforeReads(index: MilvusChunkIndex): ChunkIndex {
  let dirty = false;
  return new Proxy(index, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (WRITES.has(key)) {
          dirty = true;
        } else if (dirty) {
          dirty = false;
          await target.flush();
        }
        return value.apply(target, args);
      };
    },
  });
}

export async function openQualityIndex(profile: QualityProfile): Promise<QualityIndex> {
  if (profile === 'embedded') {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-quality-'));
    const db = openIndexDatabase(join(dir, 'cairn.db'));
    return {
      index: new SqliteChunkIndex(db),
      async close() {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const server = await startMilvusServer();
  try {
    const index = await MilvusChunkIndex.connect(server.freshLocation());
    return {
      index: flushedBeforeReads(index),
      async close() {
        await index.close();
        await server.stop();
      },
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}
