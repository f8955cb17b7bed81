import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { harness } from './harness.js';
import { Api } from './client.js';

const run = promisify(execFile);

describe('the cairn command', () => {
  it('`cairn keys create --email E` prints a working API key for that user', async () => {
    const h = await harness();
    const email = `cli-${Date.now()}@example.com`;
    const { stdout } = await run(process.execPath, [path.join(h.config.rootDir, 'bin', 'cairn.js'), 'keys', 'create', '--email', email], {
      env: { ...process.env, CAIRN_DATA_DIR: h.config.dataDir, CAIRN_DATABASE_URL: h.config.databaseUrl },
    });
    const key = stdout.trim();
    assert.match(key, /^cairn-[\w-]{43}$/);
    const me = await new Api(h.url, key).get('/users/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.data.email, email);
  });

  it('prints usage and exits 2 for an unknown command', async () => {
    const h = await harness();
    await assert.rejects(run(process.execPath, [path.join(h.config.rootDir, 'bin', 'cairn.js'), 'frobnicate']), (err: { code?: number; stderr?: string }) => {
      assert.equal(err.code, 2);
      assert.match(err.stderr ?? '', /usage: cairn/);
      return true;
    });
  });
});
