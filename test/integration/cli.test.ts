import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { harness } from './harness.js';
import { Api } from './client.js';

const run = promisify(execFile);

/** Runs `cairn ARGS` on the harness's data dir with INPUT on standard input; resolves to its exit code and output. */
function cairn(h: Awaited<ReturnType<typeof harness>>, args: string[], input = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(h.config.rootDir, 'bin', 'cairn.js'), ...args], {
      env: { ...process.env, CAIRN_DATA_DIR: h.config.dataDir, CAIRN_DATABASE_URL: h.config.databaseUrl },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** POST /auth/login: the status and, on success, the console token. */
async function login(url: string, email: string, password: string): Promise<{ status: number; token: string | null }> {
  const res = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, password }) });
  return { status: res.status, token: res.headers.get('authorization') };
}

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

  it("the admin's generated password, written beside the key file (mode 0600), logs in to the console, which sees what the key created", async () => {
    const h = await harness();
    const file = path.join(h.config.dataDir, 'admin-password');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const password = fs.readFileSync(file, 'utf8').trim();
    const name = `admin-made-${Date.now()}`;
    assert.equal((await new Api(h.url, h.adminKey).post('/datasets', { name })).status, 200);
    const { status, token } = await login(h.url, 'admin@cairn.local', password);
    assert.equal(status, 200);
    const seen = await new Api(h.url, token!.replace(/^Bearer /, '')).get('/datasets', { name });
    assert.deepEqual(seen.body.data.map((d: { name: string }) => d.name), [name]);
  });

  it('`cairn users set-password EMAIL` sets the password read from standard input; the old one stops working', async () => {
    const h = await harness();
    const email = `pw-${Date.now()}@example.com`;
    await run(process.execPath, [path.join(h.config.rootDir, 'bin', 'cairn.js'), 'keys', 'create', '--email', email], {
      env: { ...process.env, CAIRN_DATA_DIR: h.config.dataDir, CAIRN_DATABASE_URL: h.config.databaseUrl },
    });
    const first = await cairn(h, ['users', 'set-password', email], 'first secret\n');
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, new RegExp(`Password set for ${email}`));
    assert.doesNotMatch(first.stdout, /first secret/, 'a password the operator typed is not echoed');
    assert.equal((await login(h.url, email, 'first secret')).status, 200);
    assert.equal((await cairn(h, ['users', 'set-password', email], 'second secret')).code, 0);
    assert.equal((await login(h.url, email, 'first secret')).status, 401);
    assert.equal((await login(h.url, email, 'second secret')).status, 200);
  });

  it('`cairn users set-password --reset-admin` prints a new admin password and writes it to data/admin-password', async () => {
    const h = await harness();
    const file = path.join(h.config.dataDir, 'admin-password');
    const before = fs.readFileSync(file, 'utf8').trim();
    const reset = await cairn(h, ['users', 'set-password', '--reset-admin']);
    assert.equal(reset.code, 0, reset.stderr);
    const after = fs.readFileSync(file, 'utf8').trim();
    assert.notEqual(after, before);
    assert.ok(reset.stdout.includes(after), reset.stdout);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal((await login(h.url, 'admin@cairn.local', after)).status, 200);
    assert.equal((await login(h.url, 'admin@cairn.local', before)).status, 401);
  });

  it('`cairn users set-password` names an unknown e-mail, an empty password and one shorter than CAIRN_MIN_PASSWORD_LENGTH, and changes nothing', async () => {
    const h = await harness();
    const short = await cairn(h, ['users', 'set-password', 'admin@cairn.local'], 'short7!\n');
    assert.equal(short.code, 1, short.stderr);
    assert.match(short.stderr, /Password must be at least 8 characters \(CAIRN_MIN_PASSWORD_LENGTH\)/);
    const unknown = await cairn(h, ['users', 'set-password', 'nobody@example.com'], 'a long enough secret');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /nobody@example\.com is not registered/);
    const empty = await cairn(h, ['users', 'set-password', 'admin@cairn.local'], '\n');
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /password read from standard input is empty/);
    const bare = await cairn(h, ['users']);
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /usage: cairn users set-password/);
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
