import type { Database } from 'better-sqlite3';
import { openIndexDatabase } from '../../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../../src/index/sqlite-index.js';
import type { IndexedChunk } from '../../../src/index/types.js';

/** A chunk with defaults for every field not given. */
export function chunk(fields: Partial<IndexedChunk> & Pick<IndexedChunk, 'id'>): IndexedChunk {
  return {
    tenant_id: 'tenant',
    dataset_id: 'ds1',
    document_id: 'doc1',
    document_name: 'doc1.txt',
    content: '',
    important_keywords: [],
    questions: [],
    tag_kwd: [],
    image_id: '',
    positions: [],
    available: true,
    create_time: '2025-01-01 00:00:00',
    create_timestamp: 1735689600,
    vector: [],
    ...fields,
  };
}

export function memoryIndex(): { db: Database; index: SqliteChunkIndex } {
  const db = openIndexDatabase(':memory:');
  return { db, index: new SqliteChunkIndex(db) };
}
