import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DataDirInUseError, LOCK_FILE, assertDataDirFree, lockDataDir } from '../../../src/engine/data-dir-lock.js';
import { processStartToken } from '../../../src/engine/process-identity.js';

const run = promisify(execFile);
const lockModule = new URL('../../../src/engine/data-dir-lock.ts', import.meta.url).pathname;

describe('the data dir lock', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-lock-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const writeOwner = (owner: unknown) => fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify(owner));

  it('refuses a second holder with "Cairn is already running with data dir D (pid N)"', async () => {
    const lock = await lockDataDir(dir);
    await assert.rejects(lockDataDir(dir), (err: Error) => {
      assert.ok(err instanceof DataDirInUseError);
      assert.equal(err.message, `Cairn is already running with data dir ${dir} (pid ${process.pid})`);
      return true;
    });
    assert.throws(() => assertDataDirFree(dir), DataDirInUseError);
    lock.release();
  });

  it('release removes the pid file, and the dir can be locked again', async () => {
    const lock = await lockDataDir(dir);
    lock.release();
    assert.ok(!fs.existsSync(path.join(dir, LOCK_FILE)));
    assertDataDirFree(dir);
    (await lockDataDir(dir)).release();
  });

  it('takes over the pid file of a process that no longer runs (kill -9)', async () => {
    writeOwner({ pid: await deadPid(), start: 'ticks:1' });
    const lock = await lockDataDir(dir);
    assert.equal(JSON.parse(fs.readFileSync(lock.file, 'utf8')).pid, process.pid);
    lock.release();
  });

  it('takes over the pid file of a killed process not yet reaped by its parent (a zombie): a restart right after a crash goes on', async () => {
    // bash starts a short child, then becomes `sleep`, which never reaps it: the child stays a zombie.
    const parent = spawn('bash', ['-c', 'sleep 0 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const zombie = Number((await new Promise<string>((resolve) => parent.stdout.once('data', (d) => resolve(String(d))))).trim());
      await waitFor(() => fs.readFileSync(`/proc/${zombie}/stat`, 'utf8').includes(') Z '));
      writeOwner({ pid: zombie });
      assertDataDirFree(dir);
      const lock = await lockDataDir(dir);
      assert.equal(JSON.parse(fs.readFileSync(lock.file, 'utf8')).pid, process.pid);
      lock.release();
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('takes over a pid file whose pid now belongs to another program (its start time differs)', async () => {
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      writeOwner({ pid: other.pid, start: 'ticks:1' });
      (await lockDataDir(dir)).release();
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('is held by a live process whose start time matches, and names it', async () => {
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      writeOwner({ pid: other.pid, start: processStartToken(other.pid!) });
      await assert.rejects(lockDataDir(dir), new RegExp(`\\(pid ${other.pid}\\)$`));
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('treats an unreadable pid file older than two seconds as stale', async () => {
    fs.writeFileSync(path.join(dir, LOCK_FILE), 'not json');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(dir, LOCK_FILE), old, old);
    (await lockDataDir(dir)).release();
  });

  it('of several processes racing for a dir with a stale pid file, exactly one gets it', async function () {
    this.timeout(60_000);
    writeOwner({ pid: await deadPid(), start: 'ticks:1' });
    const script = `
      const { lockDataDir } = await import(${JSON.stringify(lockModule)});
      try { await lockDataDir(${JSON.stringify(dir)}); console.log('locked'); await new Promise((r) => setTimeout(r, 3000)); }
      catch (err) { console.log(err.name); }`;
    const results = await Promise.all(
      Array.from({ length: 4 }, () => run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]).then((r) => r.stdout.trim())),
    );
    assert.equal(results.filter((r) => r === 'locked').length, 1, results.join(', '));
    assert.equal(results.filter((r) => r === 'DataDirInUseError').length, 3, results.join(', '));
  });
});

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

async function waitFor(ok: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
