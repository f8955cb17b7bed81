import type { Database } from 'better-sqlite3';
import { openIndexDatabase } from '../../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../../src/index/chunks/sqlite-index.js';
import type { IndexedChunk } from '../../../src/index/chunks/chunk-index.js';

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

/**
 * How many segments an FTS5 table has ever written: FTS5 writes one each time it flushes the full text it holds
 * in memory (at a commit, before a statement that opens a statement journal, and every few hundred rows). Read
 * from its structure record (`<table>_data` id 10): a 4-byte cookie, FF 00 00 01 in its second version, then
 * varints: levels, segments, segments ever written.
 */
export function fts5SegmentsWritten(db: Database, table: string): number {
  const structure = db.prepare(`SELECT block FROM ${table}_data WHERE id = 10`).pluck().get() as Buffer;
  let at = structure.readUInt32BE(4) === 0xff000001 ? 8 : 4;
  const varint = () => {
    let value = 0;
    for (let byte = 0x80; byte & 0x80; ) value = value * 128 + ((byte = structure[at++]!) & 0x7f);
    return value;
  };
  varint();
  varint();
  return varint();
}
