import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { compiledEntry } from '../bin/compiled.js';

/**
 * URL of tsx's ESM `register()` API. Resolved through tsx's export map by hand because this module may be
 * compiled as CommonJS (mocha), where import.meta.resolve is missing and require.resolve picks the CJS build.
 */
function tsxEsmApiUrl(): string {
  const pkgPath = createRequire(import.meta.url).resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
  return pathToFileURL(join(dirname(pkgPath), pkg.exports['./esm/api']!.import.default)).href;
}

/** File URL of tsx's loader (`node --import <it> entry.ts`), resolved the same way and for the same reason. */
function tsxLoaderUrl(): string {
  const pkgPath = createRequire(import.meta.url).resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { exports: Record<string, string> };
  return pathToFileURL(join(dirname(pkgPath), pkg.exports['.']!)).href;
}

/**
 * Node arguments that run a module given by the URL of its `.ts` source in a child process: its compiled
 * bundle when `make install` built one that matches the sources (bin/compiled.js), else the source through
 * tsx's loader. A child under tsx carries tsx and what its transforms keep (docs/operations.md, "Memory").
 */
export function moduleProcessArgs(tsEntry: URL): string[] {
  const compiled = compiledEntry(tsEntry);
  if (compiled) return [compiled];
  return ['--import', tsxLoaderUrl(), fileURLToPath(tsEntry)];
}

/**
 * Starts a worker thread on a module given by the URL of its `.ts` source: its compiled bundle when one
 * matches the sources, else the source through tsx. Under tsx on Node 20 the parent's loader hooks do not
 * reach a worker's entry module, so the worker registers tsx itself before importing the entry.
 */
export function startModuleWorker(tsEntry: URL, options: Omit<WorkerOptions, 'eval'> = {}): Worker {
  const compiled = compiledEntry(tsEntry);
  if (compiled) return new Worker(pathToFileURL(compiled), options);
  const code = `import(${JSON.stringify(tsxEsmApiUrl())}).then(({ register }) => { register(); return import(${JSON.stringify(tsEntry.href)}); });`;
  return new Worker(code, { ...options, eval: true });
}
