import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEV_SERVER_GOGC, devServerEnv, startDevServer } from '../../../src/engine/dev-server.js';
import { loadConfig } from '../../../src/config.js';

/** Children of this process whose command line contains `text`. */
function childrenMatching(text: string): number[] {
  const pids: number[] = [];
  for (const tid of fs.readdirSync('/proc/self/task')) {
    for (const pid of fs.readFileSync(`/proc/self/task/${tid}/children`, 'utf8').split(/\s+/).filter(Boolean)) {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text)) pids.push(Number(pid));
    }
  }
  return pids;
}

/** The Temporal dev server's Go collector keeps a smaller heap (docs/operations.md, "Memory"). */
describe('Temporal dev server: garbage collector setting', function () {
  this.timeout(90_000);

  it('sets GOGC unless the operator chose GOGC or GOMEMLIMIT', () => {
    assert.equal(devServerEnv({ PATH: '/bin' }).GOGC, DEV_SERVER_GOGC);
    assert.equal(devServerEnv({ PATH: '/bin' }).PATH, '/bin');
    assert.equal(devServerEnv({ GOGC: '200' }).GOGC, '200');
    assert.equal(devServerEnv({ GOMEMLIMIT: '512MiB' }).GOGC, undefined, 'GOMEMLIMIT alone is the operator\'s choice too');
  });

  it('starts the server with it', async function () {
    if (process.platform !== 'linux') this.skip();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-devserver-env-'));
    const dbFile = path.join(dir, 'temporal.db');
    const server = await startDevServer({ rootDir: loadConfig().rootDir, dbFile, port: 0 });
    try {
      const [pid] = childrenMatching(dbFile);
      assert.ok(pid, 'the dev server is a child of this process');
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const expected = process.env.GOMEMLIMIT || process.env.GOGC ? undefined : `GOGC=${DEV_SERVER_GOGC}`;
      if (expected) assert.ok(environ.includes(expected), environ.filter((e) => e.startsWith('GO')).join(' '));
    } finally {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
