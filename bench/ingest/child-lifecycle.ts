import type { ChildProcess } from 'node:child_process';

export type ExitState = { code: number | null; signal: NodeJS.Signals | null };

/**
 * Watches a bench's child process: `exited()` once it has ended, `stop(graceMs)` sends SIGTERM and then
 * SIGKILL after the grace period; the child is killed when the bench itself exits.
 */
export function childLifecycle(child: ChildProcess, defaultGraceMs: number) {
  let exit: ExitState | undefined;
  const exitedPromise = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve();
    }),
  );
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  return {
    exited: (): ExitState | undefined => exit,
    async stop(graceMs = defaultGraceMs): Promise<void> {
      process.removeListener('exit', killOnExit);
      if (exit) return;
      child.kill('SIGTERM');
      const done = await Promise.race([exitedPromise.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), graceMs))]);
      if (!done) {
        child.kill('SIGKILL');
        await exitedPromise;
      }
    },
  };
}
