import fs from 'node:fs';
import path from 'node:path';

/**
 * Linux only: runs the command through the project's Python, which asks the kernel to send the process
 * SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG, kept across exec) and then becomes the command
 * (same pid). So a child outlives a `kill -9` of Cairn by seconds at most. The signal follows the thread
 * that spawned the child: spawn from the main thread (Node's child_process does).
 *
 * Returns the command unchanged where this is unavailable (other systems, no Python); the pid file
 * of the dev server covers that case at the next start.
 */
export function dieWithParent(rootDir: string, command: string, args: string[]): { command: string; args: string[] } {
  const python = pythonFor(rootDir);
  if (process.platform !== 'linux' || !python) return { command, args };
  return { command: python, args: ['-c', LAUNCHER, String(process.pid), command, ...args] };
}

// prctl failing (seccomp, an odd libc) must not stop the server from starting: it only loses the signal.
// The parent may die before prctl runs; then the child is already orphaned and exits instead of starting.
const LAUNCHER = `
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)
except Exception:
    pass
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)
os.execvp(sys.argv[2], sys.argv[2:])
`;

function pythonFor(rootDir: string): string | undefined {
  for (const candidate of [path.join(rootDir, '.venv', 'bin', 'python3'), '/usr/bin/python3']) {
    if (fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}
