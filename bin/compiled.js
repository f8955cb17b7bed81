// Which compiled bundle may run in place of a TypeScript entry point. `make install` compiles the entry points
// of Cairn's processes and threads to dist/node/ (scripts/build-node.mjs) with a manifest of the hash of
// every source file in each bundle. A bundle is used only while all of them are unchanged; otherwise (no
// build, or a source edited since) the caller runs the TypeScript through tsx, so a stale build never runs.
// Plain JavaScript: bin/cairn.js must decide before tsx is loaded.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OUT_DIR = path.join(ROOT, 'dist', 'node');
export const MANIFEST_VERSION = 1;

/** Every module Cairn starts a process or a thread on; each bundle is named after its file. */
export const ENTRIES = [
  'src/cli/main.ts',
  'src/parsing/parser-process.ts',
  'src/models/builtin/embedding-process.ts',
  'src/models/builtin/chat-worker.ts',
  'src/index/chunks/sqlite-read-worker.ts',
  'src/index/wal-checkpoint-worker.ts',
];

export const bundleName = (entry) => `${path.basename(entry, '.ts')}.js`;

function statOf(file) {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

/**
 * A lookup of the bundles in outDir for the sources under root: (entry file URL or path) => the bundle's
 * absolute path, or undefined when there is none or it no longer matches the sources. Checked at every call
 * (a stat per source file; a file is hashed again only when its mtime or size changed), so a process started
 * after an edit runs the edit.
 */
export function compiledLookup(root = ROOT, outDir = OUT_DIR) {
  const manifestFile = path.join(outDir, 'manifest.json');
  let manifest; // as last read, with the mtime it had
  const hashes = new Map(); // file -> { mtimeMs, size, hash } as last read

  function readManifest() {
    const stat = statOf(manifestFile);
    if (!stat) return undefined;
    if (manifest?.mtimeMs !== stat.mtimeMs) {
      let content;
      try {
        content = JSON.parse(readFileSync(manifestFile, 'utf8'));
      } catch {
        content = undefined; // half written or damaged: as if there were no build
      }
      manifest = { mtimeMs: stat.mtimeMs, content: content?.version === MANIFEST_VERSION ? content : undefined };
    }
    return manifest.content;
  }

  function currentHash(relative) {
    const file = path.join(root, relative);
    const stat = statOf(file);
    if (!stat) return undefined;
    const known = hashes.get(file);
    if (known && known.mtimeMs === stat.mtimeMs && known.size === stat.size) return known.hash;
    const hash = createHash('sha1').update(readFileSync(file)).digest('hex');
    hashes.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, hash });
    return hash;
  }

  return (source) => {
    const file = String(source).startsWith('file:') ? fileURLToPath(source) : String(source);
    const entry = path.relative(root, file).split(path.sep).join('/');
    const record = readManifest()?.entries?.[entry];
    if (!record) return undefined;
    for (const [input, hash] of Object.entries(record.inputs)) if (currentHash(input) !== hash) return undefined;
    const bundle = path.join(outDir, record.bundle);
    return existsSync(bundle) ? bundle : undefined;
  };
}

/** The bundle in dist/node/ of a TypeScript entry point of this checkout, while it matches the sources. */
export const compiledEntry = compiledLookup();
