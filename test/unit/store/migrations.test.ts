import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, parseDatabaseUrl, redactDatabaseUrl, type MetaDb } from '../../../src/store/db.js';
import { migrationNames } from '../../../src/store/migrations.js';
import { freePort } from '../../../src/engine/dev-server.js';
import { freshDatabaseUrl, testProfiles, type TestProfile } from '../../support/meta-store.js';

async function appliedMigrations(db: MetaDb): Promise<string[]> {
  const rows = await db.kysely.selectFrom('kysely_migration' as never).select('name' as never).orderBy('name' as never).execute();
  return rows.map((r) => (r as { name: string }).name);
}

/** A database that can be opened more than once: PostgreSQL, or a SQLite file (not :memory:). */
async function reopenableUrl(profile: TestProfile, dir: string): Promise<string> {
  return profile === 'scale-out' ? freshDatabaseUrl(profile) : `sqlite:${path.join(dir, 'cairn.db')}`;
}

for (const profile of testProfiles()) {
  describe(`metadata migrations [${profile}]`, () => {
    let dir: string;
    beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-migrate-'))));
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('apply every migration to an empty database, and applying them again changes nothing', async () => {
      const url = await reopenableUrl(profile, dir);
      const first = await openDatabase(url);
      assert.deepEqual(await appliedMigrations(first), migrationNames());
      await first.kysely.insertInto('settings').values({ key: 'kept', value: 'v', create_time: 1 }).execute();
      await first.close();
      const second = await openDatabase(url);
      try {
        assert.deepEqual(await appliedMigrations(second), migrationNames());
        assert.equal((await second.kysely.selectFrom('settings').select('value').where('key', '=', 'kept').executeTakeFirst())?.value, 'v');
      } finally {
        await second.close();
      }
    });
  });
}

if (testProfiles().includes('scale-out')) {
  describe('metadata migrations on PostgreSQL', () => {
    it('replicas starting together on an empty database migrate it exactly once', async () => {
      const url = await freshDatabaseUrl('scale-out');
      const dbs = await Promise.all(Array.from({ length: 4 }, () => openDatabase(url)));
      try {
        assert.deepEqual(await appliedMigrations(dbs[0]!), migrationNames());
      } finally {
        await Promise.all(dbs.map((db) => db.close()));
      }
    });

    it('an unreachable server fails the start with a message that names it, without the password', async () => {
      const port = await freePort();
      await assert.rejects(openDatabase(`postgres://cairn:hunter2@127.0.0.1:${port}/cairn`), (err: Error) => {
        assert.match(err.message, new RegExp(`cannot reach the metadata database postgres://cairn:\\*\\*\\*@127\\.0\\.0\\.1:${port}/cairn: .*ECONNREFUSED`));
        assert.doesNotMatch(err.message, /hunter2/);
        return true;
      });
    });
  });
}

describe('CAIRN_DATABASE_URL', () => {
  it('names SQLite (sqlite:<file> or a bare path) or PostgreSQL, and nothing else', () => {
    assert.deepEqual(parseDatabaseUrl('sqlite:/data/cairn.db'), { dialect: 'sqlite', file: '/data/cairn.db' });
    assert.deepEqual(parseDatabaseUrl('sqlite::memory:'), { dialect: 'sqlite', file: ':memory:' });
    assert.deepEqual(parseDatabaseUrl('/data/cairn.db'), { dialect: 'sqlite', file: '/data/cairn.db' });
    assert.deepEqual(parseDatabaseUrl('postgres://u:p@h:5432/db'), { dialect: 'postgres', url: 'postgres://u:p@h:5432/db' });
    assert.deepEqual(parseDatabaseUrl('postgresql://h/db'), { dialect: 'postgres', url: 'postgresql://h/db' });
    assert.throws(() => parseDatabaseUrl('mysql://u:secret@h/db'), /'mysql:\/\/u:\*\*\*@h\/db' is not supported; use sqlite:<file> or postgres:\/\//);
    assert.throws(() => parseDatabaseUrl('sqlite:'), /names no file/);
  });

  it('is shown with its password masked', () => {
    assert.equal(redactDatabaseUrl('postgres://cairn:s3cr:et@db:5432/cairn'), 'postgres://cairn:***@db:5432/cairn');
    assert.equal(redactDatabaseUrl('postgres://db:5432/cairn'), 'postgres://db:5432/cairn');
  });
});
