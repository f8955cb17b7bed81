import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { openIndexDatabase } from '../../../src/index/sqlite-database.js';
import { SqliteMemoryIndex } from '../../../src/index/memory-sqlite-index.js';
import { memoryIndexConformance, msg, opts } from './memory-index-conformance.js';

function open() {
  const db = openIndexDatabase(':memory:');
  return { db, index: new SqliteMemoryIndex(db) };
}

describe('SqliteMemoryIndex', () => {
  memoryIndexConformance('SqliteMemoryIndex', async () => open().index);

  it('refuses a connection without sqlite-vec; the schema is idempotent and every table is prefixed memory_', async () => {
    assert.throws(() => new SqliteMemoryIndex(new Database(':memory:')), /sqlite-vec/);
    const { db, index } = open();
    const [id] = (await index.add('m1', [msg()], opts())).messageIds;
    const again = new SqliteMemoryIndex(db);
    assert.equal((await again.get('m1', id!))?.content, 'hello');
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'memory_%' AND name != 'sqlite_sequence'`).all();
    assert.deepEqual(tables, []);
    await index.ping();
  });
});
