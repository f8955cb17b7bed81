import assert from 'node:assert/strict';
import { openIndexDatabase } from '../../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../../src/index/chunks/sqlite-index.js';
import { chunk } from '../index/helpers.js';

describe("the embedded index's RAPTOR level column", () => {
  it('is added to an index made before it: old chunks read as ordinary chunks, summaries keep their level', async () => {
    const db = openIndexDatabase(':memory:');
    const index = new SqliteChunkIndex(db);
    await index.upsert([chunk({ id: 'old', content: 'written before summaries existed', vector: [1, 0] })]);
    // The file as an earlier version left it: no raptor_layer column.
    db.exec('ALTER TABLE chunk_rows DROP COLUMN raptor_layer');
    const reopened = new SqliteChunkIndex(db);
    assert.equal('raptor_layer' in (await reopened.get('old'))!, false);
    await reopened.upsert([chunk({ id: 'summary', content: 'a summary', raptor_layer: 1, vector: [0, 1] })]);
    assert.equal((await reopened.get('summary'))?.raptor_layer, 1);
    // Opening it again (another process) finds the column there and changes nothing.
    new SqliteChunkIndex(db);
    assert.equal((await reopened.get('summary'))?.raptor_layer, 1);
    db.close();
  });
});
