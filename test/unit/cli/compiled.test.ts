import assert from 'node:assert/strict';
import { execFile, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { compiledLookup, MANIFEST_VERSION, ROOT } from '../../../bin/compiled.js';

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

describe('compiled bundles (bin/compiled.js)', () => {
  describe('a bundle runs only while its sources are unchanged', () => {
    let root: string;
    let outDir: string;
    const source = () => path.join(root, 'src', 'a.ts');
    const writeBuild = (inputs: Record<string, string>, version = MANIFEST_VERSION) => {
      writeFileSync(path.join(outDir, 'a.js'), 'export {};\n');
      writeFileSync(path.join(outDir, 'manifest.json'), JSON.stringify({ version, entries: { 'src/a.ts': { bundle: 'a.js', inputs } } }));
    };

    beforeEach(() => {
      root = mkdtempSync(path.join(tmpdir(), 'cairn-compiled-'));
      outDir = path.join(root, 'dist', 'node');
      mkdirSync(path.join(root, 'src'));
      mkdirSync(outDir, { recursive: true });
      writeFileSync(source(), 'export const a = 1;\n');
      writeFileSync(path.join(root, 'src', 'b.ts'), 'export const b = 2;\n');
      writeBuild({ 'src/a.ts': sha1('export const a = 1;\n'), 'src/b.ts': sha1('export const b = 2;\n') });
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it('finds the bundle of an entry whose sources match the manifest, by path or file URL', () => {
      const lookup = compiledLookup(root, outDir);
      assert.equal(lookup(source()), path.join(outDir, 'a.js'));
      assert.equal(lookup(new URL(`file://${source()}`)), path.join(outDir, 'a.js'));
    });

    it('falls back (undefined) when any source of the bundle was edited, and uses it again when the edit is undone', () => {
      const lookup = compiledLookup(root, outDir);
      assert.ok(lookup(source()));
      writeFileSync(path.join(root, 'src', 'b.ts'), 'export const b = 3;\n');
      assert.equal(lookup(source()), undefined);
      writeFileSync(path.join(root, 'src', 'b.ts'), 'export const b = 2;\n');
      assert.equal(lookup(source()), path.join(outDir, 'a.js'));
    });

    it('falls back when a source is gone, the bundle is missing, the manifest is of another version or damaged, or the entry was not built', () => {
      rmSync(path.join(root, 'src', 'b.ts'));
      assert.equal(compiledLookup(root, outDir)(source()), undefined);
      writeFileSync(path.join(root, 'src', 'b.ts'), 'export const b = 2;\n');
      rmSync(path.join(outDir, 'a.js'));
      assert.equal(compiledLookup(root, outDir)(source()), undefined);
      writeBuild({ 'src/a.ts': sha1('export const a = 1;\n') }, MANIFEST_VERSION + 1);
      assert.equal(compiledLookup(root, outDir)(source()), undefined);
      writeFileSync(path.join(outDir, 'manifest.json'), '{"version":');
      assert.equal(compiledLookup(root, outDir)(source()), undefined);
      writeBuild({ 'src/a.ts': sha1('export const a = 1;\n') });
      assert.equal(compiledLookup(root, outDir)(path.join(root, 'src', 'b.ts')), undefined);
      rmSync(outDir, { recursive: true });
      assert.equal(compiledLookup(root, outDir)(source()), undefined);
    });
  });

  describe('scripts/build-node.mjs', function () {
    this.timeout(120_000);
    let outDir: string;
    before(async () => {
      // Inside the checkout, as dist/node is: the bundles import npm packages from its node_modules.
      mkdirSync(path.join(ROOT, 'dist'), { recursive: true });
      outDir = mkdtempSync(path.join(ROOT, 'dist', 'node-test-'));
      await promisify(execFile)(process.execPath, [path.join(ROOT, 'scripts', 'build-node.mjs'), '--out', outDir]);
    });
    after(() => rmSync(outDir, { recursive: true, force: true }));

    it('records every source file of each bundle, and the build is current for the tree it was built from', () => {
      const manifest = JSON.parse(readFileSync(path.join(outDir, 'manifest.json'), 'utf8'));
      const parser = manifest.entries['src/parsing/parser-process.ts'];
      assert.ok(parser.inputs['src/parsing/parser-process.ts'], 'the entry itself');
      assert.ok(parser.inputs['src/parsing/extractors/pdf.ts'], 'a module it imports with import()');
      assert.ok(!Object.keys(parser.inputs).some((f) => f.includes('node_modules')), 'npm packages stay imports');
      assert.equal(compiledLookup(ROOT, outDir)(path.join(ROOT, 'src/parsing/parser-process.ts')), path.join(outDir, 'parser-process.js'));
    });

    it('a compiled parser process extracts a file, finding its files where the sources are', async () => {
      const child = fork(path.join(outDir, 'parser-process.js'), [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
      try {
        const replies: { type: string; result?: { sections: { text: string }[] } }[] = [];
        const done = new Promise<void>((resolve, reject) => {
          child.on('message', (msg: (typeof replies)[number]) => {
            replies.push(msg);
            if (msg.type === 'ready') child.send({ type: 'job', id: 1, bytes: Buffer.from('# Title\n\nSome text.'), filename: 'a.md', limits: undefined });
            if (msg.type === 'done' || msg.type === 'error') resolve();
          });
          child.on('exit', (code) => reject(new Error(`the compiled parser process exited (${code})`)));
        });
        await done;
        const last = replies.at(-1)!;
        assert.equal(last.type, 'done', JSON.stringify(last));
        assert.match(last.result!.sections.map((s) => s.text).join('\n'), /Some text/);
      } finally {
        child.kill();
      }
    });

    it('the compiled CLI runs', async () => {
      const { stdout } = await promisify(execFile)(process.execPath, [path.join(outDir, 'main.js'), 'help']);
      assert.match(stdout, /^usage: cairn <command>/);
    });
  });
});
