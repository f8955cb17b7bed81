import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../src/engine/dev-server.js';

/**
 * A throwaway PostgreSQL cluster for tests: initdb in a temporary directory, a server on a free
 * loopback port, stopped and removed at the end. PostgreSQL refuses to run as root, so as root the
 * cluster belongs to the `postgres` user (runuser); otherwise to the current user.
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
  try {
    run(tool('initdb'), ['-D', dataDir, '-U', USER, '--pwfile', pwFile, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--locale-provider=icu', '--icu-locale=en-US']);
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    run(tool('pg_ctl'), ['-D', dataDir, '-o', options, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  let stopped = false;
  const stopNow = (mode: 'fast' | 'immediate') => {
    if (stopped) return;
    stopped = true;
    const [file, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', tool('pg_ctl'), '-D', dataDir, '-m', mode, '-w', 'stop']]
      : [tool('pg_ctl'), ['-D', dataDir, '-m', mode, '-w', 'stop']];
    spawnSync(file, argv, { stdio: 'ignore' });
    fs.rmSync(dir, { recursive: true, force: true });
  };
  // A test run that dies must not leave a server behind.
  const onExit = () => stopNow('immediate');
  process.once('exit', onExit);

  const url = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
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
    },
  };
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
