#!/usr/bin/env node
// Compiles Cairn's process and thread entry points to plain JavaScript in dist/node/ (esbuild: a bundle per
// entry and chunks of what they share or import lazily; npm packages stay imports), so that `cairn start` and its child processes run without tsx: every Node
// process under tsx carries tsx and what its transforms keep (docs/operations.md, "Memory").
// dist/node/manifest.json records, per entry, the hash of every source file its bundle and chunks hold; bin/compiled.js
// uses a bundle only while all of them are unchanged, so an edited tree runs through tsx until rebuilt.
// Usage: node scripts/build-node.mjs [--out DIR]  (part of `make install`; DIR, default dist/node, must be
// inside the checkout, whose node_modules the bundles import from).
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ENTRIES, MANIFEST_VERSION, OUT_DIR as DEFAULT_OUT_DIR, bundleName, ROOT } from '../bin/compiled.js';

const SCRIPT = path.relative(ROOT, fileURLToPath(import.meta.url));
const outAt = process.argv.indexOf('--out');
const OUT_DIR = outAt > 0 ? path.resolve(process.argv[outAt + 1]) : DEFAULT_OUT_DIR;

/**
 * Every file bundled keeps the import.meta.url of its source: `new URL('../../dsl-schemas/', import.meta.url)`,
 * `createRequire(import.meta.url)` and the like then find what they find under tsx, from one flat dist/node/.
 */
const sourceUrls = {
  name: 'source-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.(ts|js|mjs)$/ }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = readFileSync(args.path, 'utf8');
      const fromBundle = path.relative(OUT_DIR, args.path).split(path.sep).join('/');
      const url = `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`;
      return { contents: source.replace(/\bimport\.meta\.url\b/g, `(${url})`), loader: args.path.endsWith('.ts') ? 'ts' : 'js' };
    });
  },
};

const sha1 = (file) => createHash('sha1').update(readFileSync(path.join(ROOT, file))).digest('hex');

const staging = `${OUT_DIR}.building-${process.pid}`;
rmSync(staging, { recursive: true, force: true });
mkdirSync(staging, { recursive: true });
const result = await build({
  entryPoints: Object.fromEntries(ENTRIES.map((entry) => [bundleName(entry).replace(/\.js$/, ''), path.join(ROOT, entry)])),
  outdir: staging,
  bundle: true,
  // Modules a source imports with import() stay separate files, loaded when first imported, with the npm
  // packages they import: a parser process loads pdfjs only when it parses a PDF.
  splitting: true,
  chunkNames: 'chunk-[hash]',
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // As tsx does: classes and functions keep their names (error names, logs) when the bundle renames them.
  keepNames: true,
  metafile: true,
  logLevel: 'warning',
  plugins: [sourceUrls],
});

/** The source files of an output and of every output it imports, statically or with import(). */
function sourcesOf(output, seen = new Set()) {
  if (seen.has(output)) return [];
  seen.add(output);
  const meta = result.metafile.outputs[output];
  return [...Object.keys(meta.inputs), ...meta.imports.filter((i) => !i.external).flatMap((i) => sourcesOf(i.path, seen))];
}

const manifest = { version: MANIFEST_VERSION, entries: {} };
for (const [output, meta] of Object.entries(result.metafile.outputs)) {
  if (!meta.entryPoint) continue;
  const entry = path.relative(ROOT, path.resolve(ROOT, meta.entryPoint)).split(path.sep).join('/');
  const sources = sourcesOf(output).map((p) => path.relative(ROOT, path.resolve(ROOT, p)).split(path.sep).join('/'));
  // The build's own settings are inputs too: a changed script or tsconfig makes every bundle stale.
  const hashed = [...new Set([...sources, SCRIPT, 'tsconfig.json', 'bin/compiled.js'])].sort();
  manifest.entries[entry] = { bundle: path.basename(output), inputs: Object.fromEntries(hashed.map((f) => [f, sha1(f)])) };
}
writeFileSync(path.join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 1)}\n`);
// Swapped in whole: a launcher never sees half a build.
rmSync(OUT_DIR, { recursive: true, force: true });
renameSync(staging, OUT_DIR);
console.log(`compiled ${ENTRIES.length} entry points to ${path.relative(process.cwd(), OUT_DIR) || '.'}/`);
