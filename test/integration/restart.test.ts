import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { startDevServer } from '../../src/engine/dev-server.js';
import { temporalBinary } from '../../src/engine/temporal-binary.js';
import { Api, eventually } from './client.js';
import { startWorkerProcess } from './worker-process.js';
import { adminKeyOf, cairnEnv, devServerOf, freeCairnPorts, isRunning, runCairn, startCairnProcess, type CairnProcess } from './cairn-process.js';

const rootDir = loadConfig().rootDir;

describe('hard kills and restarts', function () {
  this.timeout(600_000);
  const dirs: string[] = [];
  const started: CairnProcess[] = [];
  const strays: ChildProcess[] = [];

  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-restart-'));
    dirs.push(dir);
    return dir;
  };
  const start = async (dataDir: string, ports?: Awaited<ReturnType<typeof freeCairnPorts>>) => {
    const cairn = await startCairnProcess(dataDir, ports);
    started.push(cairn);
    return cairn;
  };

  afterEach(async () => {
    for (const cairn of started.splice(0)) await cairn.stop();
    for (const child of strays.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('after kill -9 of `cairn start` its Temporal dev server exits within seconds, and a new start on the same data dir and ports serves the old data', async () => {
    const dataDir = tempDir();
    const first = await start(dataDir);
    const created = await new Api(first.url, adminKeyOf(dataDir)).post('/datasets', { name: 'survives-a-kill' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const temporal = devServerOf(dataDir);
    assert.ok(isRunning(temporal.pid));

    await first.kill();
    await eventually(async () => !isRunning(temporal.pid), 15_000, 100).catch(() => {
      throw new Error(`the Temporal dev server (pid ${temporal.pid}) outlived its killed Cairn by 15 s`);
    });

    const second = await start(dataDir, first.ports);
    const found = await new Api(second.url, adminKeyOf(dataDir)).get('/datasets', { id: created.body.data.id });
    assert.equal(found.status, 200, JSON.stringify(found.body));
    assert.equal(found.body.data[0].name, 'survives-a-kill');
  });

  it('a second `cairn start` on a running data dir says Cairn is already running and exits 1, while the first keeps serving and `cairn worker` shares the dir', async () => {
    const dataDir = tempDir();
    const first = await start(dataDir);
    const startedAt = Date.now();
    const second = await runCairn(['start'], cairnEnv(dataDir, await freeCairnPorts()));
    assert.equal(second.code, 1, second.stdout + second.stderr);
    assert.equal(second.stderr.trim(), `Cairn is already running with data dir ${dataDir} (pid ${first.child.pid})`);
    assert.ok(Date.now() - startedAt < 30_000, 'refused without starting anything');

    const api = new Api(first.url, adminKeyOf(dataDir));
    assert.equal((await api.post('/datasets', { name: 'still-serving' })).status, 200);
    assert.equal(first.child.exitCode, null);

    const config = { ...loadConfig(cairnEnv(dataDir)), taskQueue: 'cairn' };
    const worker = await startWorkerProcess(config, `127.0.0.1:${devServerOf(dataDir).port}`);
    await worker.stop();
  });

  it('stopping Cairn normally releases the data dir: its pid files are gone and the next start succeeds', async () => {
    const dataDir = tempDir();
    const first = await start(dataDir);
    await first.stop();
    assert.ok(!fs.existsSync(path.join(dataDir, 'cairn.pid')), 'cairn.pid removed');
    assert.ok(!fs.existsSync(path.join(dataDir, 'temporal.pid')), 'temporal.pid removed');
    const second = await start(dataDir, first.ports);
    assert.equal((await new Api(second.url, adminKeyOf(dataDir)).get('/datasets')).status, 200);
  });

  it('a Temporal dev server left running by a dead Cairn is stopped at the next start, which then takes the same port', async () => {
    const dataDir = tempDir();
    const dbFile = path.join(dataDir, 'temporal.db');
    const ports = await freeCairnPorts();
    // Started without the parent-death launcher, as on a platform without it: this one outlives its owner.
    const leftover = spawn(temporalBinary(rootDir), ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(ports.temporalPort), '--db-filename', dbFile, '--headless', '--log-level', 'warn'], { stdio: 'ignore' });
    strays.push(leftover);
    await eventually(() => canConnect(ports.temporalPort), 60_000, 200);
    fs.writeFileSync(path.join(dataDir, 'temporal.pid'), JSON.stringify({ pid: leftover.pid, port: ports.temporalPort, dbFile, owner: { pid: await deadPid(), start: 'ticks:0' } }));

    const cairn = await start(dataDir, ports);
    assert.ok(!isRunning(leftover.pid!), 'the leftover server was stopped');
    assert.match(cairn.output(), /stopping the Temporal dev server left running by a previous Cairn/);
    assert.equal(devServerOf(dataDir).port, ports.temporalPort);
    assert.equal((await new Api(cairn.url, adminKeyOf(dataDir)).get('/datasets')).status, 200);
  });

  it('a temporal.pid naming a process that is not our dev server (a reused pid) is discarded and that process left alone', async () => {
    const dataDir = tempDir();
    const dbFile = path.join(dataDir, 'temporal.db');
    const bystander = spawn('sleep', ['120'], { stdio: 'ignore' });
    strays.push(bystander);
    fs.writeFileSync(path.join(dataDir, 'temporal.pid'), JSON.stringify({ pid: bystander.pid, port: 1, dbFile, owner: { pid: await deadPid(), start: 'ticks:0' } }));
    const server = await startDevServer({ rootDir, dbFile, port: 0 });
    try {
      assert.ok(isRunning(bystander.pid!), 'the unrelated process still runs');
      assert.notEqual(devServerOf(dataDir).pid, bystander.pid);
    } finally {
      await server.stop();
    }
  });

  it('a second dev server on a database that a live process serves is refused', async () => {
    const dataDir = tempDir();
    const dbFile = path.join(dataDir, 'temporal.db');
    const server = await startDevServer({ rootDir, dbFile, port: 0 });
    try {
      await assert.rejects(startDevServer({ rootDir, dbFile, port: 0 }), /already serves .*temporal\.db for the running process/);
      assert.equal(await canConnect(Number(server.address.split(':')[1])), true, 'the first server still serves');
    } finally {
      await server.stop();
    }
  });
});

/** The pid of a process that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
