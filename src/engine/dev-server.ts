import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { Connection } from '@temporalio/client';
import { temporalBinary } from './temporal-binary.js';

export interface DevServerOptions {
  rootDir: string;
  dbFile: string;
  port: number;
  /** Web UI port; omitted for a headless server. */
  uiPort?: number;
  log?: (line: string) => void;
}

export interface DevServer {
  address: string;
  stop(): Promise<void>;
}

/** Starts `temporal server start-dev` as a child process and waits until it accepts connections. */
export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const port = opts.port || (await freePort());
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--db-filename', opts.dbFile, '--log-level', 'warn'];
  if (opts.uiPort) args.push('--ui-ip', '127.0.0.1', '--ui-port', String(opts.uiPort));
  else args.push('--headless');
  const child = spawn(temporalBinary(opts.rootDir), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    output.push(text);
    if (output.length > 50) output.shift();
    opts.log?.(text.trimEnd());
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const address = `127.0.0.1:${port}`;
  const stopOnExit = () => child.kill('SIGTERM');
  process.once('exit', stopOnExit);

  const deadline = Date.now() + 60_000;
  for (;;) {
    const early = await Promise.race([exited, sleep(250).then(() => 'running' as const)]);
    if (early !== 'running') throw new Error(`Temporal dev server exited (code ${early}): ${output.join('').slice(-2000)}`);
    if (await canConnect(address)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`Temporal dev server did not start within 60 s: ${output.join('').slice(-2000)}`);
    }
  }
  return {
    address,
    async stop() {
      process.removeListener('exit', stopOnExit);
      await terminate(child, exited);
    },
  };
}

async function canConnect(address: string): Promise<boolean> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: 1000 });
    try {
      await connection.healthService.check({});
      return true;
    } finally {
      await connection.close();
    }
  } catch {
    return false;
  }
}

async function terminate(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const done = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
  if (!done) {
    child.kill('SIGKILL');
    await exited;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
