import { spawn } from 'node:child_process';
import { moduleProcessArgs } from '../threads.js';
import { childEnv } from './orphaned-children.js';
import { dieWithParent } from './parent-death.js';
import { bundleIsStale, workflowBundlePath } from './bundle-workflows.js';

/** Keeps the end of what the child printed: webpack's report ends with its errors and the child's message. */
const KEPT_OUTPUT_CHARS = 64_000;

/**
 * Makes sure the workflow bundle is current (bundleIsStale): when it is not, writes it from a short-lived
 * child process. webpack keeps ~150 MB in the process that runs it, for that process's life (measured by
 * bench/ingest/run.ts; docs/operations.md, "Memory"); a child gives all of it back when it ends.
 * Rejects with webpack's errors when the workflows do not compile.
 */
export async function ensureWorkflowBundle(rootDir: string): Promise<void> {
  if (!bundleIsStale(rootDir)) return;
  const args = [...moduleProcessArgs(new URL('./bundle-workflows.ts', import.meta.url)), rootDir];
  const launch = dieWithParent(rootDir, process.execPath, args, 'SIGKILL');
  const child = spawn(launch.command, launch.args, { stdio: ['ignore', 'ignore', 'pipe'], env: childEnv() });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-KEPT_OUTPUT_CHARS);
  });
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  if (exit.code === 0) return;
  const how = exit.signal ? `was killed (${exit.signal})` : `exited with ${exit.code}`;
  const why = bundlingErrors(output);
  throw new Error(`could not build the workflow bundle ${workflowBundlePath(rootDir)}: the bundling process ${how}${why ? `:\n${why}` : ''}`);
}

/**
 * The part of the child's output that says what is wrong: the first two lines of each of webpack's
 * "ERROR in <module>" blocks (where, and the error; the rest is its resolver's trace) and the child's last
 * line (why bundling failed); everything when webpack reported no error block (the child failed otherwise).
 */
function bundlingErrors(output: string): string {
  const blocks = output.split(/\n\s*\n/).filter((b) => b.startsWith('ERROR'));
  if (blocks.length === 0) return output.trim();
  const lastLine = output.trim().split('\n').pop()!;
  return [...blocks.map((b) => b.split('\n').slice(0, 2).join('\n')), lastLine].join('\n');
}
