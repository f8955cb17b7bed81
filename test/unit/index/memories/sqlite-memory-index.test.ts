import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { openIndexDatabase } from '../../../../src/index/sqlite-database.js';
import { SqliteMemoryIndex } from '../../../../src/index/memories/sqlite-memory-index.js';
import { fts5SegmentsWritten } from '../helpers.js';
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

  it('an index file whose memory_fts predates the memory scope is rebuilt at open, and its messages are found by memory', async () => {
    const { db, index } = open();
    const [tea] = (await index.add('m1', [msg({ content: 'green tea' })], opts())).messageIds;
    await index.add('m2', [msg({ content: 'green tea too' })], opts());
    // The table as index files before the scope column had it: the content alone.
    db.exec(`DROP TABLE memory_fts;
      CREATE VIRTUAL TABLE memory_fts USING fts5(content, tokenize = 'porter unicode61', content = '', contentless_delete = 1);
      INSERT INTO memory_fts (rowid, content) SELECT message_id, content FROM memory_rows;`);
    const reopened = new SqliteMemoryIndex(db);
    const columns = (db.prepare('PRAGMA table_info(memory_fts)').all() as { name: string }[]).map((c) => c.name);
    assert.deepEqual(columns, ['content', 'memory']);
    assert.deepEqual((await reopened.fullText('tea', { memoryIds: ['m1'] }, 10)).map((h) => h.message_id), [tea]);
    assert.equal((await reopened.fullText('tea', { memoryIds: ['m1', 'm2'] }, 10)).length, 2);
  });

  it('close ends nothing of the connection it was given', async () => {
    const { db, index } = open();
    await index.close();
    assert.ok(db.open);
    await new SqliteMemoryIndex(db).ping();
  });

  it('writes the full text of the messages added or imported together to FTS5 once, not once per message', async () => {
    const { db, index } = open();
    await index.add('m1', Array.from({ length: 200 }, (_, i) => msg({ content: `note ${i} about valves` })), opts());
    const afterAdd = fts5SegmentsWritten(db, 'memory_fts');
    const imported = (await index.list('m1', { page: 1, pageSize: 1000 })).messages.map((m) => ({ ...m, memory_id: 'm2', message_id: m.message_id + 1000 }));
    await index.importMessages('m2', imported);
    // Written message by message, each was a segment: 200, then 400.
    assert.ok(afterAdd <= 5 && fts5SegmentsWritten(db, 'memory_fts') - afterAdd <= 5, `${afterAdd}, then ${fts5SegmentsWritten(db, 'memory_fts')} segments written`);
    assert.equal((await index.fullText('valves', { memoryIds: ['m2'] }, 1000)).length, 200);
  });
});
