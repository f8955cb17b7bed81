import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

/** Where the pre-bundled workflow code lives (built by `npm run build:workflows`). */
export function workflowBundlePath(rootDir: string): string {
  return path.join(rootDir, 'dist', 'workflow-bundle.js');
}

export async function writeWorkflowBundle(rootDir: string): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(rootDir, 'workflows', 'index.ts'),
    logger: { info() {}, warn: console.warn, error: console.error, debug() {}, trace() {}, log() {} },
  });
  const out = workflowBundlePath(rootDir);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  // Renamed into place: a worker starting meanwhile (another process on the same checkout) never reads half a bundle.
  const partial = `${out}.${process.pid}.partial`;
  fs.writeFileSync(partial, code);
  fs.renameSync(partial, out);
  return out;
}

/**
 * Folders and files whose code goes into the bundle: the workflows and the pure modules they import, and Cairn's
 * patches of the SDK packages bundled with them (patches/: a changed patch, applied at npm install, changes the bundle).
 */
export const WORKFLOW_SOURCE_DIRS = ['workflows', 'src/agents', 'src/events', 'src/enrichment', 'src/pipelines', 'src/engine/task-queues.ts', 'src/records.ts', 'patches'];

function sourceFiles(at: string): string[] {
  if (!fs.existsSync(at)) return [];
  if (fs.statSync(at).isFile()) return [at];
  return fs.readdirSync(at, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(at, e.name)) : [path.join(at, e.name)]));
}

/** True when the bundle is missing or older than any file it may contain. */
export function bundleIsStale(rootDir: string): boolean {
  const out = workflowBundlePath(rootDir);
  if (!fs.existsSync(out)) return true;
  const built = fs.statSync(out).mtimeMs;
  return WORKFLOW_SOURCE_DIRS.flatMap((d) => sourceFiles(path.join(rootDir, d))).some((f) => fs.statSync(f).mtimeMs > built);
}

/** `tsx src/engine/bundle-workflows.ts [ROOT]`: `make install`, and the child process of workflow-bundle-process.ts. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const root = process.argv[2] ? path.resolve(process.argv[2]) : path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
  try {
    const out = await writeWorkflowBundle(root);
    console.log(`workflow bundle written to ${path.relative(root, out)}`);
  } catch (err) {
    // webpack has already printed what it could not compile; the message says which step failed.
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  }
}
