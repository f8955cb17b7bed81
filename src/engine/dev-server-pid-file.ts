import fs from 'node:fs';
import path from 'node:path';
import { processCommandLine, processExists, processStartToken, terminateProcess } from './process-identity.js';

/**
 * The pid file of a Temporal dev server started by Cairn: lets the next start find a server that outlived
 * its Cairn (kill -9 where the parent-death signal is unavailable, or a server slow to exit) and stop it
 * before a new one opens the same database file.
 */
export interface DevServerRecord {
  pid: number;
  port: number;
  dbFile: string;
  /** The process that started it, with its start token: a live owner means the server is not left over. */
  owner: { pid: number; start?: string };
}

/** Beside the database: temporal.db -> temporal.pid. */
export function devServerPidFile(dbFile: string): string {
  const parsed = path.parse(dbFile);
  return path.join(parsed.dir, `${parsed.name}.pid`);
}

export function recordDevServer(pidFile: string, pid: number, port: number, dbFile: string): void {
  const record: DevServerRecord = { pid, port, dbFile, owner: { pid: process.pid, start: processStartToken(process.pid) } };
  fs.writeFileSync(pidFile, JSON.stringify(record) + '\n');
}

/** Removes the pid file if it still names this server. */
export function forgetDevServer(pidFile: string, pid: number): void {
  if (readRecord(pidFile)?.pid === pid) fs.rmSync(pidFile, { force: true });
}

/**
 * Stops the dev server a previous, dead owner left running on this database file. Refuses when the
 * owner is alive (its server is in use). A pid that no longer runs `temporal` with this database on its
 * command line was reused by another program and is left alone.
 */
export async function stopLeftoverDevServer(pidFile: string, dbFile: string, warn: (message: string) => void): Promise<void> {
  if (!fs.existsSync(pidFile)) return;
  const record = readRecord(pidFile);
  if (record) {
    const { owner } = record;
    const ownerAlive = owner.pid === process.pid ? true : processExists(owner.pid) && (owner.start === undefined || processStartToken(owner.pid) === owner.start);
    if (ownerAlive && isOurDevServer(record.pid, dbFile)) {
      throw new Error(`a Temporal dev server (pid ${record.pid}, port ${record.port}) already serves ${dbFile} for the running process ${owner.pid}`);
    }
    if (isOurDevServer(record.pid, dbFile)) {
      warn(`stopping the Temporal dev server left running by a previous Cairn (pid ${record.pid}, port ${record.port})`);
      await terminateProcess(record.pid);
    }
  }
  fs.rmSync(pidFile, { force: true });
}

function isOurDevServer(pid: number, dbFile: string): boolean {
  const args = processCommandLine(pid);
  if (!args?.length) return false;
  return path.basename(args[0]!).startsWith('temporal') && args.includes('start-dev') && args.includes(path.resolve(dbFile));
}

function readRecord(pidFile: string): DevServerRecord | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(pidFile, 'utf8')) as DevServerRecord;
    return Number.isInteger(value.pid) && value.owner && Number.isInteger(value.owner.pid) ? value : undefined;
  } catch {
    return undefined;
  }
}
