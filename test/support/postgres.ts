import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../src/engine/dev-server.js';
import { dieWithParent } from '../../src/engine/parent-death.js';

/**
 * A throwaway PostgreSQL cluster for tests: initdb in a temporary directory, a server on a free
 * loopback port, stopped and removed at the end. PostgreSQL refuses to run as root, so as root the
 * cluster belongs to the `postgres` user (runuser); otherwise to the current user. The server is our
 * child (not daemonized by pg_ctl) and gets SIGTERM when this process dies, so a test run killed from
 * outside leaves no server behind.
 */
export interface PostgresCluster {
  /** Connection URL of an existing database of the cluster. */
  url(database: string): string;
  /** Creates a fresh, empty database and returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  stop(): Promise<void>;
}

const USER = 'cairn';
const PASSWORD = 'cairn-test-pw';
const rootDir = path.resolve(new URL('../..', import.meta.url).pathname);

/** The directory holding initdb and pg_ctl: PG_BIN, the newest /usr/lib/postgresql/N/bin, or PATH. */
function binDir(): string | undefined {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0]!, 'bin') : undefined;
}

function tool(name: string): string {
  const dir = binDir();
  return dir ? path.join(dir, name) : name;
}

export async function startPostgres(): Promise<PostgresCluster> {
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-pg-'));
  const dataDir = path.join(dir, 'data');
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
    try {
      return execFileSync(file, argv, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
    } catch (err) {
      const e = err as { stderr?: string; stdout?: string; message: string };
      throw new Error(`${cmd} failed: ${e.stderr || e.stdout || e.message}\n(is PostgreSQL installed? \`make test\` installs postgresql-15)`);
    }
  };
  const pwFile = path.join(dir, 'pw');
  fs.writeFileSync(pwFile, PASSWORD + '\n', { mode: 0o600 });
  if (asRoot) {
    const id = (flag: string) => {
      try {
        return Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
      } catch {
        throw new Error('PostgreSQL refuses to run as root and there is no `postgres` user to run it as (`make test` installs postgresql-15, which creates it)');
      }
    };
    const [uid, gid] = [id('-u'), id('-g')];
    for (const owned of [dir, pwFile]) fs.chownSync(owned, uid, gid);
  }
  // A linguistic default collation (ICU en-US: 'a' < 'ä' < 'B', Unicode lower()), as production
  // databases have: the schema must give SQLite's byte order and ASCII-only lower() regardless.
  const port = await freePort();
  const url = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  let server: ReturnType<typeof spawn>;
  try {
    run(tool('initdb'), ['-D', dataDir, '-U', USER, '--pwfile', pwFile, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--locale-provider=icu', '--icu-locale=en-US']);
    const postgres = [tool('postgres'), '-D', dataDir, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'];
    const launch = asRoot ? dieWithParent(rootDir, 'runuser', ['-u', 'postgres', '--', ...postgres]) : dieWithParent(rootDir, postgres[0]!, postgres.slice(1));
    const log = fs.openSync(path.join(dir, 'server.log'), 'a');
    server = spawn(launch.command, launch.args, { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    await untilAccepting(url('postgres'), server, path.join(dir, 'server.log'));
  } catch (err) {
    stopServer(dataDir, 'immediate', asRoot);
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const exited = new Promise<void>((resolve) => (server.exitCode !== null || server.signalCode !== null ? resolve() : server.once('exit', () => resolve())));

  let stopped = false;
  const stopNow = (mode: 'fast' | 'immediate') => {
    if (stopped) return;
    stopped = true;
    stopServer(dataDir, mode, asRoot);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  // A test run that dies must not leave a server behind.
  const onExit = () => stopNow('immediate');
  process.once('exit', onExit);

  let created = 0;
  return {
    url,
    async createDatabase(prefix = 'cairn_test') {
      const name = `${prefix}_${process.pid}_${++created}`;
      const admin = new pg.Client({ connectionString: url('postgres') });
      await admin.connect();
      try {
        await admin.query(`create database "${name}"`);
      } finally {
        await admin.end();
      }
      return url(name);
    },
    async stop() {
      process.off('exit', onExit);
      stopNow('fast');
      await exited;
    },
  };
}

/** pg_ctl stops the server of a data directory whoever started it, and waits until it is gone. */
function stopServer(dataDir: string, mode: 'fast' | 'immediate', asRoot: boolean): void {
  const [file, argv] = asRoot
    ? ['runuser', ['-u', 'postgres', '--', tool('pg_ctl'), '-D', dataDir, '-m', mode, '-w', 'stop']]
    : [tool('pg_ctl'), ['-D', dataDir, '-m', mode, '-w', 'stop']];
  spawnSync(file, argv, { stdio: 'ignore' });
}

/** Waits until the server accepts a login (it listens before it has finished starting up). */
async function untilAccepting(url: string, server: ReturnType<typeof spawn>, logFile: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      const log = () => fs.readFileSync(logFile, 'utf8').slice(-2000);
      if (server.exitCode !== null || server.signalCode !== null) throw new Error(`postgres exited (${server.exitCode ?? server.signalCode}): ${log()}`);
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 60 s (${(err as Error).message}): ${log()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

let shared: Promise<PostgresCluster> | undefined;

/** One cluster for the whole test run, started on first use; test/hooks.ts stops it. */
export function sharedPostgres(): Promise<PostgresCluster> {
  shared ??= startPostgres();
  return shared;
}

export async function stopSharedPostgres(): Promise<void> {
  if (!shared) return;
  const cluster = await shared.catch(() => undefined);
  shared = undefined;
  await cluster?.stop();
}
