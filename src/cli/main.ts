import path from 'node:path';
import { loadConfig } from '../config.js';

const USAGE = `usage: cairn <command>
  start                      start the service (default): HTTP API, worker and, unless TEMPORAL_ADDRESS is set, a Temporal dev server
  worker                     run a Temporal worker alone (needs TEMPORAL_ADDRESS)
  keys create --email EMAIL  print a new API key for the user (created if missing)
  migrate                    apply database migrations and exit
  backup DIR                 consistent copy of the data dir (databases, files, secrets) into a new DIR, while Cairn runs
  restore DIR [--force]      put a backup into CAIRN_DATA_DIR (Cairn stopped; --force replaces a non-empty one)
  mcp [--api-key KEY] [--url URL]
                             MCP server on stdio for a running Cairn (CAIRN_API_KEY, CAIRN_URL; default http://127.0.0.1:9380)
`;

async function main(argv: string[]): Promise<number> {
  const [command = 'start', ...rest] = argv;
  const config = loadConfig();
  switch (command) {
    // Each command loads only its own modules, so `cairn mcp` starts fast.
    case 'start': {
      // Before loading the server's modules: a second start on the same data dir is refused at once.
      (await import('../engine/data-dir-lock.js')).assertDataDirFree(config.dataDir);
      const { startCairn } = await import('../server.js');
      const cairn = await startCairn(config);
      if (cairn.adminApiKey) {
        console.log(`\nAdmin API key (also in ${path.join(config.dataDir, 'admin-api-key')}):\n  ${cairn.adminApiKey}\n`);
      }
      console.log(`Cairn is listening on ${cairn.url}  (Ctrl-C to stop)`);
      await untilSignal();
      console.log('stopping...');
      await cairn.stop();
      return 0;
    }
    case 'worker': {
      const { runWorkerOnly } = await import('./worker.js');
      const stop = await runWorkerOnly(config);
      await untilSignal();
      await stop();
      return 0;
    }
    case 'keys': {
      const emailAt = rest.indexOf('--email');
      if (rest[0] !== 'create' || emailAt < 0 || !rest[emailAt + 1]) {
        process.stderr.write(USAGE);
        return 2;
      }
      const { createKey } = await import('./keys.js');
      console.log(await createKey(config, rest[emailAt + 1]));
      return 0;
    }
    case 'migrate': {
      const { openDatabase } = await import('../store/db.js');
      const db = await openDatabase(config.databaseUrl);
      await db.close();
      console.log('database is up to date');
      return 0;
    }
    case 'backup': {
      const { runBackupCommand } = await import('./backup.js');
      return runBackupCommand(config, rest);
    }
    case 'restore': {
      const { runRestoreCommand } = await import('./restore.js');
      return runRestoreCommand(config, rest);
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
