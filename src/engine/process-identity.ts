import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** True when a process with this pid exists (it may belong to another user). */
export function processExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When the process started, as an opaque token: with the pid it names one process for good, so a pid
 * file whose process died and whose pid was reused by another program is recognised as stale.
 * Linux: start time in clock ticks since boot (/proc/N/stat field 22); elsewhere `ps -o lstart`.
 */
export function processStartToken(pid: number): string | undefined {
  if (!processExists(pid)) return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return `ticks:${fields[19]}`;
  } catch {
    return psField(pid, 'lstart=', 'lstart:');
  }
}

/** The process's command line as arguments, or undefined when it is gone or cannot be read. */
export function processCommandLine(pid: number): string[] | undefined {
  if (!processExists(pid)) return undefined;
  try {
    const raw = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw.split('\0').filter((arg) => arg !== '');
  } catch {
    // Without /proc, `ps` gives one string: splitting on spaces is enough to find flags and paths without spaces.
    return psField(pid, 'args=', '')?.split(' ');
  }
}

function psField(pid: number, field: string, prefix: string): string | undefined {
  try {
    const out = execFileSync('ps', ['-o', field, '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return out ? prefix + out : undefined;
  } catch {
    return undefined;
  }
}

/** Sends SIGTERM, waits up to `graceMs` for the process to go, then SIGKILL; resolves once it is gone. */
export async function terminateProcess(pid: number, graceMs = 10_000): Promise<void> {
  if (!signal(pid, 'SIGTERM')) return;
  const deadline = Date.now() + graceMs;
  while (processExists(pid) && !isZombie(pid)) {
    if (Date.now() > deadline) {
      signal(pid, 'SIGKILL');
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const killDeadline = Date.now() + 5_000;
  while (processExists(pid) && !isZombie(pid) && Date.now() < killDeadline) await new Promise((r) => setTimeout(r, 50));
}

function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** A dead child whose parent has not reaped it yet still "exists" for kill(pid, 0). */
/** True when the process has exited and waits to be reaped by its parent (Linux): it runs nothing any more. */
export function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}
