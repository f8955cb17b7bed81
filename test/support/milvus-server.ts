import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/engine/dev-server.js';
import { dieWithParent } from '../../src/engine/parent-death.js';
import type { MilvusLocation } from '../../src/index/location.js';

/**
 * A Milvus-protocol server for tests: milvus-lite (PyPI `milvus-lite`, in requirements.txt) on a free
 * loopback port, its data in a temporary directory removed at the end. It speaks Milvus's gRPC API
 * (collections, BM25 functions, sparse and dense search); docs/scale-out.md lists where it differs from
 * a real Milvus.
 */
export interface MilvusTestServer {
  /** host:port */
  address: string;
  /** A location on a database of its own (created by the first index that connects). */
  freshLocation(): MilvusLocation;
  /** Environment that points a Cairn process at the location. */
  env(location: MilvusLocation): Record<string, string>;
  stop(): Promise<void>;
}

const rootDir = path.resolve(new URL('../..', import.meta.url).pathname);

export async function startMilvusServer(): Promise<MilvusTestServer> {
  const binary = path.join(rootDir, '.venv', 'bin', 'milvus-lite');
  if (!fs.existsSync(binary)) throw new Error(`${binary} is missing: install requirements.txt into .venv (make install)`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-milvus-'));
  const port = await freePort();
  const launch = dieWithParent(rootDir, binary, ['server', '--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir]);
  const child = spawn(launch.command, launch.args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const removeData = () => fs.rmSync(dataDir, { recursive: true, force: true });

  const deadline = Date.now() + 60_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null) {
      removeData();
      throw new Error(`milvus-lite exited (code ${child.exitCode}): ${output}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      removeData();
      throw new Error(`milvus-lite did not listen within 60 s: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const onExit = () => {
    child.kill('SIGKILL');
    removeData();
  };
  process.once('exit', onExit);
  const address = `127.0.0.1:${port}`;
  let databases = 0;
  return {
    address,
    freshLocation: () => ({ kind: 'milvus', address, database: `t${process.pid}_${++databases}` }),
    env: (location) => ({ CAIRN_INDEX: `milvus://${location.address}/${location.database}` }),
    async stop() {
      process.off('exit', onExit);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      removeData();
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

let shared: Promise<MilvusTestServer> | undefined;

/** One server for the whole test run, started on first use; test/hooks.ts stops it. */
export function sharedMilvus(): Promise<MilvusTestServer> {
  shared ??= startMilvusServer();
  return shared;
}

export async function stopSharedMilvus(): Promise<void> {
  if (!shared) return;
  const server = await shared.catch(() => undefined);
  shared = undefined;
  await server?.stop();
}
