import path from 'node:path';
import { loadConfig, type Config } from '../config.js';
import { configEnv, unknownCairnVariables } from '../config-schema.js';
import { UsageError, parseStartArgs, parseWorkerArgs } from './options.js';

const USAGE = `usage: cairn <command>
  start [--no-worker]        start the service (default): HTTP API, workers and, unless TEMPORAL_ADDRESS is set, a Temporal
                             dev server; --no-worker: the HTTP API alone (an API replica; same as CAIRN_EMBEDDED_WORKER=false)
  worker [--queues ROLES]    run Temporal workers alone (needs TEMPORAL_ADDRESS); ROLES: comma-separated parse, agents,
                             memory (default: CAIRN_WORKER_QUEUES, else all)
  keys create --email EMAIL  print a new API key for the user (created if missing)
  users set-password EMAIL   set a user's console password: read from standard input, or generated and printed
  users set-password --reset-admin
                             a new generated password for admin@cairn.local, printed and written to data/admin-password
  migrate                    apply database migrations and exit
  backup DIR                 consistent copy of the data dir (databases, files, secrets) into a new DIR, while Cairn runs
  restore DIR [--force]      put a backup into CAIRN_DATA_DIR (Cairn stopped; --force replaces a non-empty one)
  migrate-to --database-url postgres://… --blobs s3://…|file:DIR --index embedded|milvus://… --data-dir DIR
                             copy the stopped embedded installation in CAIRN_DATA_DIR to PostgreSQL, S3 and a chunk index (docs/scale-out.md)
  mcp [--api-key KEY] [--url URL]
                             MCP server on stdio for a running Cairn (CAIRN_API_KEY, CAIRN_URL; default http://127.0.0.1:9380)
`;

async function main(argv: string[]): Promise<number> {
  const [command = 'start', ...rest] = argv;
  try {
    return await run(command, rest);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n${USAGE}`);
    return 2;
  }
}

/** Variables named like Cairn's that nothing reads are most likely typos: say so instead of ignoring them. */
function warnUnknownVariables(): void {
  for (const name of unknownCairnVariables(configEnv())) console.warn(`cairn: ${name} is not a Cairn setting and is ignored (see the README's configuration table)`);
}

async function run(command: string, rest: string[]): Promise<number> {
  // Read when a command needs it: `cairn help` and `cairn mcp` do not depend on the server's settings.
  let loaded: Config | undefined;
  const configuration = () => (loaded ??= loadConfig());
  switch (command) {
    // Each command loads only its own modules, so `cairn mcp` starts fast.
    case 'start': {
      const { noWorker } = parseStartArgs(rest);
      warnUnknownVariables();
      const config = configuration();
      if (noWorker) config.embeddedWorker = false;
      if (!config.embeddedWorker && configEnv().CAIRN_WORKER_QUEUES) {
        throw new UsageError('cairn start: CAIRN_WORKER_QUEUES chooses the queues of in-process workers, but this API runs none (--no-worker or CAIRN_EMBEDDED_WORKER=false); unset it');
      }
      // Before loading the server's modules: a second start on the same data dir is refused at once.
      (await import('../engine/data-dir-lock.js')).assertDataDirFree(config.dataDir);
      const { startCairn } = await import('../server.js');
      const cairn = await startCairn(config);
      if (cairn.adminApiKey) {
        console.log(`\nAdmin API key (also in ${path.join(config.dataDir, 'admin-api-key')}):\n  ${cairn.adminApiKey}\n`);
      }
      if (cairn.admin) {
        console.log(`Console log-in (password also in ${path.join(config.dataDir, 'admin-password')}; change it with \`cairn users set-password ${cairn.admin.email}\`):\n  ${cairn.admin.email}\n  ${cairn.admin.password}\n`);
      }
      console.log(`Cairn is listening on ${cairn.url}  (Ctrl-C to stop)`);
      await untilSignal();
      console.log('stopping...');
      await cairn.stop();
      return 0;
    }
    case 'worker': {
      const { roles } = parseWorkerArgs(rest);
      warnUnknownVariables();
      const config = configuration();
      if (roles) config.workerRoles = roles;
      const { runWorkerOnly } = await import('./worker.js');
      const worker = await runWorkerOnly(config);
      const code = await Promise.race([
        untilSignal().then(() => 0),
        worker.failed.then((err) => {
          console.error(`cairn worker: a Temporal worker stopped: ${err instanceof Error ? err.message : String(err)}`);
          return 1;
        }),
      ]);
      await worker.stop();
      return code;
    }
    case 'keys': {
      const emailAt = rest.indexOf('--email');
      if (rest[0] !== 'create' || emailAt < 0 || !rest[emailAt + 1]) {
        process.stderr.write(USAGE);
        return 2;
      }
      const { createKey } = await import('./keys.js');
      console.log(await createKey(configuration(), rest[emailAt + 1]));
      return 0;
    }
    case 'users': {
      const { parseSetPasswordArgs, readPiped, setPassword } = await import('./users.js');
      const request = parseSetPasswordArgs(rest, rest[0] === 'set-password' ? await readPiped() : undefined);
      console.log(await setPassword(configuration(), request));
      return 0;
    }
    case 'migrate': {
      const { openDatabase } = await import('../store/db.js');
      const db = await openDatabase(configuration().databaseUrl);
      await db.close();
      console.log('database is up to date');
      return 0;
    }
    case 'backup': {
      const { runBackupCommand } = await import('./backup.js');
      return runBackupCommand(configuration(), rest);
    }
    case 'restore': {
      const { runRestoreCommand } = await import('./restore.js');
      return runRestoreCommand(configuration(), rest);
    }
    case 'migrate-to': {
      // Reads the environment itself: its CAIRN_S3_* variables describe the target, which the source's configuration would refuse.
      const { runMigrateToCommand } = await import('./migrate-to.js');
      return runMigrateToCommand(configEnv(), rest);
    }
    case 'mcp': {
      const { runMcp } = await import('./mcp.js');
      return runMcp(rest);
    }
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`unknown command: ${command}\n${USAGE}`);
      return 2;
  }
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    // "Cairn is already running with data dir D (pid N)" reads best alone.
    if (err instanceof Error && err.name === 'DataDirInUseError') console.error(err.message);
    else console.error(`cairn: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
