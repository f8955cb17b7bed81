import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { loadOrCreateSecret, resolveJwtSecret } from '../../../src/secrets.js';
import { freshDatabaseUrl, openTestMetaDb, testProfiles } from '../../support/meta-store.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('the JWT signing secret', () => {
  let dirs: string[] = [];
  const dataDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-secret-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    dirs = [];
  });

  for (const profile of testProfiles()) {
    it(`CAIRN_JWT_SECRET wins, and one shorter than 32 bytes is refused [${profile}]`, async () => {
      const db = await openTestMetaDb(profile);
      try {
        const store = new MetaStore(db);
        const configured = 'x'.repeat(40);
        assert.equal(Buffer.from(await resolveJwtSecret({ jwtSecret: configured, dataDir: dataDir() }, store)).toString(), configured);
        await assert.rejects(resolveJwtSecret({ jwtSecret: 'short', dataDir: dataDir() }, store), /CAIRN_JWT_SECRET must be at least 32 bytes/);
      } finally {
        await db.close();
      }
    });
  }

  if (testProfiles().includes('embedded')) {
    it('an embedded install keeps using the secret file in its data dir', async () => {
      const dir = dataDir();
      const existing = loadOrCreateSecret(dir, 'jwt-secret');
      const db = await openDatabase(`sqlite:${path.join(dir, 'cairn.db')}`);
      try {
        const store = new MetaStore(db);
        assert.equal(hex(await resolveJwtSecret({ dataDir: dir }, store)), hex(existing));
        assert.equal(await db.kysely.selectFrom('settings').selectAll().executeTakeFirst(), undefined, 'nothing written to the database');
      } finally {
        await db.close();
      }
    });
  }

  if (testProfiles().includes('scale-out')) {
    it('replicas on one PostgreSQL database that start together all get the same secret, and keep it', async () => {
      const url = await freshDatabaseUrl('scale-out');
      // Each replica has its own pool and data dir, as on separate machines.
      const replicas = await Promise.all(Array.from({ length: 6 }, () => openDatabase(url)));
      try {
        const secrets = await Promise.all(replicas.map((db) => resolveJwtSecret({ dataDir: dataDir() }, new MetaStore(db))));
        assert.equal(new Set(secrets.map(hex)).size, 1);
        assert.equal(secrets[0]!.byteLength, 32);
        for (const dir of dirs) assert.equal(fs.existsSync(path.join(dir, 'jwt-secret')), false, 'no per-process file');
        const later = await resolveJwtSecret({ dataDir: dataDir() }, new MetaStore(replicas[0]!));
        assert.equal(hex(later), hex(secrets[0]!));
      } finally {
        await Promise.all(replicas.map((db) => db.close()));
      }
    });
  }
});
