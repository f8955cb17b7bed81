import fs from 'node:fs';
import path from 'node:path';

/**
 * `rootDir`: the project root, whose .venv Python is preferred (else python3 from the usual places).
 * `signal`: what the kernel sends the child when Cairn dies. SIGTERM lets a server (Temporal) shut down
 * cleanly; SIGKILL suits Node children, which may be busy in synchronous code and hold nothing needing a clean stop.
 *
 * Linux only: runs the command through Python, which asks the kernel to send the process a signal when
 * its parent dies (prctl PR_SET_PDEATHSIG, kept across exec) and then becomes the command (same pid).
 * So a child outlives a `kill -9` of Cairn by milliseconds, even one busy at 100% CPU in synchronous code
 * (an IPC 'disconnect' handler would not run until its event loop is free). The signal follows the thread
 * that spawned the child: spawn from the main thread (Node's child_process does).
 *
 * Returns the command unchanged where this is unavailable (other systems, no Python); the next start
 * stops what a dead Cairn left behind (orphaned-children.ts, the dev server's pid file).
 */
export function dieWithParent(rootDir: string | undefined, command: string, args: string[], signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): { command: string; args: string[] } {
  const python = pythonFor(rootDir);
  if (process.platform !== 'linux' || !python) return { command, args };
  return { command: python, args: ['-c', LAUNCHER, String(process.pid), String(signal === 'SIGKILL' ? 9 : 15), command, ...args] };
}

// prctl failing (seccomp, an odd libc) must not stop the child from starting: it only loses the signal.
// The parent may die before prctl runs; then the child is already orphaned and exits instead of starting.
const LAUNCHER = `
import ctypes, os, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, int(sys.argv[2]), 0, 0, 0)
except Exception:
    pass
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)
os.execvp(sys.argv[3], sys.argv[3:])
`;

let systemPython: string | null | undefined;

function pythonFor(rootDir: string | undefined): string | undefined {
  if (rootDir) {
    const venv = path.join(rootDir, '.venv', 'bin', 'python3');
    if (fs.existsSync(venv)) return venv;
  }
  if (systemPython === undefined) systemPython = ['/usr/bin/python3', '/usr/local/bin/python3', '/bin/python3'].find((p) => fs.existsSync(p)) ?? null;
  return systemPython ?? undefined;
}
