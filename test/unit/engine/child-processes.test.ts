import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv, markChildrenOf, stopOrphanedChildren } from '../../../src/engine/orphaned-children.js';
import { isZombie, processExists } from '../../../src/engine/process-identity.js';

const spawner = fileURLToPath(new URL('../../fixtures/child-spawner.ts', import.meta.url));

const running = (pid: number) => processExists(pid) && !isZombie(pid);

/** Resolves once the process has exited; a process killed by a signal has a signalCode and no exitCode. */
const exited = (p: ChildProcess) => new Promise((resolve) => (p.exitCode !== null || p.signalCode !== null ? resolve(undefined) : p.once('exit', resolve)));

async function gone(pid: number, withinMs: number): Promise<number> {
  const started = Date.now();
  while (running(pid)) {
    if (Date.now() - started > withinMs) throw new Error(`process ${pid} still runs ${withinMs} ms after its parent's SIGKILL`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - started;
}

describe('child processes and the death of their parent', function () {
  this.timeout(120_000);
  const parents: ChildProcess[] = [];
  const pids: number[] = [];
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-children-'));
  });
  afterEach(() => {
    for (const p of parents.splice(0)) p.kill('SIGKILL');
    for (const pid of pids.splice(0)) if (running(pid)) process.kill(pid, 'SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Starts child-spawner.ts and returns it and its child's pid. */
  async function parentWith(kind: 'sleep' | 'busy' | 'parser', dataDir = dir): Promise<{ parent: ChildProcess; child: number }> {
    const parent = spawn(process.execPath, ['--import', 'tsx', spawner, kind, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    parents.push(parent);
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      parent.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      parent.once('exit', (code) => reject(new Error(`child-spawner ${kind} exited (${code}) before starting its child`)));
    });
    const child = (JSON.parse(line) as { pid: number }).pid;
    pids.push(child);
    return { parent, child };
  }

  it('a Node child spinning in a synchronous loop (its disconnect handler cannot run) exits within 2 s of its parent\'s SIGKILL', async () => {
    const { parent, child } = await parentWith('busy');
    assert.ok(running(child));
    parent.kill('SIGKILL');
    await gone(child, 2_000);
  });

  it('a parser process busy with a 400-page PDF exits within 2 s of its parent\'s SIGKILL', async () => {
    const { parent, child } = await parentWith('parser');
    const cpuBefore = cpuTicks(child);
    await new Promise((r) => setTimeout(r, 500));
    assert.ok(cpuTicks(child) > cpuBefore, 'the parser process is at work');
    parent.kill('SIGKILL');
    await gone(child, 2_000);
  });

  it('a start stops the children a killed process of its data dir left behind, and leaves alone those of live parents and other data dirs', async () => {
    const orphan = await parentWith('sleep');
    const otherDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-children-other-'));
    try {
      const otherOrphan = await parentWith('sleep', otherDir);
      const alive = await parentWith('sleep');
      orphan.parent.kill('SIGKILL');
      otherOrphan.parent.kill('SIGKILL');
      await Promise.all([exited(orphan.parent), exited(otherOrphan.parent)]);
      assert.ok(running(orphan.child), 'a plain child (no parent-death signal) outlives its parent');

      markChildrenOf(dir);
      const ours = spawn('sleep', ['60'], { stdio: 'ignore', env: childEnv() });
      pids.push(ours.pid!);

      assert.deepEqual(await stopOrphanedChildren(dir), [orphan.child]);
      await gone(orphan.child, 2_000);
      assert.ok(running(otherOrphan.child), 'the orphan of another data dir is not ours to stop');
      assert.ok(running(alive.child), 'the child of a live process sharing the data dir (cairn worker) stays');
      assert.ok(running(ours.pid!), 'our own child stays');
    } finally {
      fs.rmSync(otherDir, { recursive: true, force: true });
    }
  });
});

/** utime + stime of a process, in clock ticks. */
function cpuTicks(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}
