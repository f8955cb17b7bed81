#!/usr/bin/env node
// Runs Cairn's CLI: the compiled bundle that `make install` builds (dist/node/) while it matches the sources,
// else the TypeScript through tsx, so `cairn` works without a build step and never runs a stale build.
import { pathToFileURL } from 'node:url';
import { compiledEntry } from './compiled.js';

const compiled = compiledEntry(new URL('../src/cli/main.ts', import.meta.url));
if (compiled) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
