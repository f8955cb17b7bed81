import assert from 'node:assert/strict';
import BetterSqlite3 from 'better-sqlite3';
import { cachedStatements } from '../../../src/store/statement-cache.js';

describe('prepared statements of the SQLite metadata store', () => {
  let sqlite: BetterSqlite3.Database;

  beforeEach(() => {
    sqlite = new BetterSqlite3(':memory:');
    sqlite.exec('create table t (n integer)');
    sqlite.exec('insert into t values (1), (2), (3)');
  });
  afterEach(() => {
    if (sqlite.open) sqlite.close();
  });

  it('prepares each SQL text once and answers later queries with the same statement', () => {
    const db = cachedStatements(sqlite, { owned: true });
    const first = db.prepare('select n from t where n > ?');
    assert.equal(db.prepare('select n from t where n > ?'), first);
    assert.deepEqual(first.all(1), [{ n: 2 }, { n: 3 }]);
    assert.notEqual(db.prepare('select n from t where n < ?'), first);
  });

  it('gives a statement still being iterated a fresh twin, so a streamed select and a query of the same text can overlap', () => {
    const db = cachedStatements(sqlite, { owned: true });
    const text = 'select n from t order by n';
    const streamed = db.prepare(text).iterate() as IterableIterator<{ n: number }>;
    assert.equal(streamed.next().value!.n, 1);
    assert.deepEqual(db.prepare(text).all(), [{ n: 1 }, { n: 2 }, { n: 3 }]);
    assert.deepEqual([...streamed].map((r) => r.n), [2, 3]);
  });

  it('keeps at most `max` texts, dropping the least recently used', () => {
    const db = cachedStatements(sqlite, { owned: true, max: 2 });
    const a = db.prepare('select 1');
    const b = db.prepare('select 2');
    assert.equal(db.prepare('select 1'), a); // 'select 2' is now the least recently used
    db.prepare('select 3');
    assert.equal(db.prepare('select 1'), a);
    assert.notEqual(db.prepare('select 2'), b);
  });

  it('closes the connection only when it owns it', () => {
    cachedStatements(sqlite, { owned: false }).close();
    assert.equal(sqlite.open, true);
    cachedStatements(sqlite, { owned: true }).close();
    assert.equal(sqlite.open, false);
  });
});
