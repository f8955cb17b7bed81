import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { openIndexDatabase } from '../../../src/index/sqlite-database.js';
import { WalCheckpointer } from '../../../src/index/wal-checkpointer.js';

const PAGE = 4096;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes `pages` pages of blobs in transactions of `perCommit`, the event loop turning `pauseMs` between them. */
async function writePages(db: Database, pages: number, perCommit: number, pauseMs: number): Promise<void> {
  const insert = db.prepare('INSERT INTO blobs (data) VALUES (?)');
  for (let written = 0; written < pages; written += perCommit) {
    db.transaction(() => {
      for (let i = 0; i < perCommit; i++) insert.run(Buffer.alloc(PAGE - 200, written + i));
    })();
    await sleep(pauseMs);
  }
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await sleep(25);
  assert.ok(condition(), what);
}

describe('WalCheckpointer (the write-ahead log copied off the event loop)', function () {
  this.timeout(30_000);
  let dir: string;
  let db: Database;
  let checkpointer: WalCheckpointer | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-wal-'));
    db = openIndexDatabase(join(dir, 'cairn.db'));
    db.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL)');
  });

  afterEach(async () => {
    await checkpointer?.close();
    checkpointer = undefined;
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("copies the log on its thread, never in the writer's commits", async () => {
    checkpointer = new WalCheckpointer(db, { intervalMs: 20, restartFrames: 1e9 });
    await writePages(db, 1500, 100, 0);
    // SQLite's own checkpoint would have run in a commit past 1,000 pages and let the log start over.
    await until(() => checkpointer!.wal().log >= 1500 && checkpointer!.wal().checkpointed === checkpointer!.wal().log, `the thread copied the whole log (${JSON.stringify(checkpointer.wal())})`);
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 0);
  });

  it('lets the log start over once it is long, so the file stays small under a steady writer', async () => {
    checkpointer = new WalCheckpointer(db, { intervalMs: 10, restartFrames: 200 });
    let longest = 0;
    const watch = setInterval(() => (longest = Math.max(longest, checkpointer!.wal().log)), 5);
    await writePages(db, 3000, 50, 15);
    clearInterval(watch);
    assert.ok(longest < 1000, `the log reached ${longest} frames`);
    assert.ok(statSync(join(dir, 'cairn.db-wal')).size < 1000 * PAGE, `the log file is ${statSync(join(dir, 'cairn.db-wal')).size} bytes`);
  });

  it('gives the checkpoints back to SQLite when it stops', async () => {
    checkpointer = new WalCheckpointer(db, { intervalMs: 20 });
    await checkpointer.close();
    checkpointer = undefined;
    await until(() => db.pragma('wal_autocheckpoint', { simple: true }) === 1000, 'SQLite checkpoints in commits again');
  });
});
