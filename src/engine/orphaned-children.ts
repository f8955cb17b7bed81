import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isZombie, processStartToken, terminateProcess } from './process-identity.js';
import { configEnv } from '../config-schema.js';

/**
 * Every child process Cairn starts (parsers, the embedding process, the Temporal dev server) carries this
 * variable: `<data dir tag>:<parent pid>:<parent start token>`. The kernel's parent-death signal
 * (parent-death.ts) normally ends a child with its parent; where it could not (no Python, other systems,
 * the parent dying before the child armed it), the next start on the data directory finds the child by this
 * mark and stops it. The mark names the parent by pid and start time, so a child of a live `cairn worker`
 * sharing the directory is left alone, and a reused pid is never mistaken for a dead parent or a stale child.
 */
const MARK = 'CAIRN_CHILD_OF';

let mark: string | undefined;

/** From now on, children started by this process carry the mark of `dataDir` and of this process. */
export function markChildrenOf(dataDir: string): void {
  mark = `${dataDirTag(dataDir)}:${process.pid}:${processStartToken(process.pid) ?? ''}`;
}

/** The environment for a child: `base` plus the mark, once markChildrenOf ran. */
export function childEnv(base: NodeJS.ProcessEnv = configEnv()): NodeJS.ProcessEnv {
  return mark ? { ...base, [MARK]: mark } : base;
}

/**
 * Stops the processes a dead Cairn (or `cairn worker`) of `dataDir` left running: marked with this data
 * directory, and whose parent is gone, a zombie, or a different process under the same pid. SIGTERM, then
 * SIGKILL after `graceMs`. Returns their pids. Linux only (reads /proc); elsewhere returns [].
 */
export async function stopOrphanedChildren(dataDir: string, graceMs = 2_000): Promise<number[]> {
  const tag = dataDirTag(dataDir);
  const orphans: { pid: number; start: string | undefined }[] = [];
  for (const pid of processIds()) {
    if (pid === process.pid) continue;
    const found = markOf(pid);
    if (!found || found.tag !== tag) continue;
    if (found.parentPid === process.pid || parentAlive(found.parentPid, found.parentStart)) continue;
    orphans.push({ pid, start: processStartToken(pid) });
  }
  // Checked again right before the signal: the pid must still be the very process that carried the mark.
  const stale = orphans.filter((o) => o.start !== undefined && processStartToken(o.pid) === o.start && markOf(o.pid)?.tag === tag);
  await Promise.all(stale.map((o) => terminateProcess(o.pid, graceMs)));
  return stale.map((o) => o.pid);
}

/** Short, stable and free of the path itself: sandboxed or foreign code reading a child's environment learns no path. */
function dataDirTag(dataDir: string): string {
  let resolved = path.resolve(dataDir);
  try {
    resolved = fs.realpathSync(resolved);
  } catch {
    // Not created yet: the resolved path is what later starts will see too.
  }
  return createHash('sha256').update(resolved).digest('hex').slice(0, 16);
}

function parentAlive(pid: number, start: string): boolean {
  const now = processStartToken(pid);
  return now !== undefined && now === start && !isZombie(pid);
}

function processIds(): number[] {
  try {
    return fs
      .readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

function markOf(pid: number): { tag: string; parentPid: number; parentStart: string } | undefined {
  let environ: string;
  try {
    environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return undefined; // gone, or another user's process
  }
  const entry = environ.split('\0').find((e) => e.startsWith(`${MARK}=`));
  if (!entry) return undefined;
  const [tag, parentPid, ...start] = entry.slice(MARK.length + 1).split(':');
  const parent = Number(parentPid);
  if (!tag || !Number.isInteger(parent) || parent <= 0) return undefined;
  return { tag, parentPid: parent, parentStart: start.join(':') };
}
