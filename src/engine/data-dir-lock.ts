import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isZombie, processExists, processStartToken } from './process-identity.js';

/** The pid file that marks a data directory as owned by one running Cairn (`cairn start`, `cairn restore`). */
export const LOCK_FILE = 'cairn.pid';

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`Cairn is already running with data dir ${dataDir} (pid ${pid})`);
    this.name = 'DataDirInUseError';
  }
}

export interface DataDirLock {
  readonly file: string;
  /** Removes the pid file if it is still ours; safe to call twice. */
  release(): void;
}

interface Owner {
  pid: number;
  /** processStartToken of the owner: tells a live owner from a later process that reuses its pid. */
  start?: string;
}

/** Lock files held by this process: a second start inside one process (tests) is refused too. */
const heldHere = new Set<string>();

/**
 * Takes the data directory for this process or throws DataDirInUseError naming the live owner.
 * A pid file whose process is gone (kill -9, power loss), exited but not yet reaped (a zombie), or whose pid now belongs to another program is
 * stale and taken over, so the lock never outlives its owner. The file appears with its content at once
 * (written aside, then hard-linked into place, which fails if it exists), so readers never see half a file.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  const mine = JSON.stringify({ pid: process.pid, start: processStartToken(process.pid) } satisfies Owner) + '\n';
  for (let attempt = 0; attempt < 50; attempt++) {
    if (createExclusive(file, mine)) {
      heldHere.add(file);
      return { file, release: () => release(file, mine) };
    }
    const seen = readText(file);
    if (seen === undefined) continue; // its owner just removed it
    const owner = parseOwner(seen);
    if (owner && isAlive(owner, file)) throw new DataDirInUseError(dataDir, owner.pid);
    if (!owner && Date.now() - mtimeMs(file) < 2_000) {
      // Unreadable and fresh: a writer without hard links between its create and its write.
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    removeIfUnchanged(file, seen);
  }
  throw new Error(`could not lock data dir ${dataDir}: ${file} keeps changing; is another Cairn starting?`);
}

/** Throws DataDirInUseError when a live process holds the data directory; cheap, for failing before a slow start. */
export function assertDataDirFree(dataDir: string): void {
  const file = path.join(dataDir, LOCK_FILE);
  const seen = readText(file);
  const owner = seen === undefined ? undefined : parseOwner(seen);
  if (owner && isAlive(owner, file)) throw new DataDirInUseError(dataDir, owner.pid);
}

function createExclusive(file: string, content: string): boolean {
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  fs.writeFileSync(aside, content, { mode: 0o644 });
  try {
    fs.linkSync(aside, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
    // File systems without hard links: O_EXCL create, then write (readers may briefly see it empty).
    try {
      fs.writeFileSync(file, content, { flag: 'wx' });
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e;
    }
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

function isAlive(owner: Owner, file: string): boolean {
  if (owner.pid === process.pid) return heldHere.has(file);
  // A killed Cairn whose parent has not reaped it yet is a zombie: it holds nothing, a restart may go on.
  if (!processExists(owner.pid) || isZombie(owner.pid)) return false;
  const start = processStartToken(owner.pid);
  // Without a start time to compare, a live pid is taken at its word.
  return owner.start === undefined || start === undefined || start === owner.start;
}

/**
 * Removes a stale pid file, unless another process replaced it after we read it: two starters that both
 * found the same stale file must not delete each other's fresh one. The rename is atomic; what was moved
 * aside is checked, and put back if it was not the stale file.
 */
function removeIfUnchanged(file: string, seen: string): void {
  const aside = `${file}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    fs.renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (readText(aside) !== seen) {
    try {
      fs.linkSync(aside, file);
    } catch {
      // Someone created yet another file meanwhile: it stands, the next attempt reads it.
    }
  }
  fs.rmSync(aside, { force: true });
}

function release(file: string, mine: string): void {
  heldHere.delete(file);
  if (readText(file) === mine) fs.rmSync(file, { force: true });
}

function parseOwner(text: string): Owner | undefined {
  try {
    const value = JSON.parse(text) as Owner;
    return Number.isInteger(value.pid) && value.pid > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function mtimeMs(file: string): number {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}
