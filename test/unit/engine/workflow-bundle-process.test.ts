import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { WORKFLOW_SOURCE_DIRS, bundleIsStale, workflowBundlePath } from '../../../src/engine/bundle-workflows.js';
import { ensureWorkflowBundle } from '../../../src/engine/workflow-bundle-process.js';

const checkout = path.resolve(import.meta.dirname, '..', '..', '..');

/** A root holding a copy of the workflows and what they import, with the checkout's packages: its own bundle. */
function workflowTree(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bundle-'));
  for (const source of [...WORKFLOW_SOURCE_DIRS, 'package.json', 'tsconfig.json']) {
    fs.cpSync(path.join(checkout, source), path.join(root, source), { recursive: true });
  }
  fs.symlinkSync(path.join(checkout, 'node_modules'), path.join(root, 'node_modules'));
  return root;
}

/** webpack's compiler modules that this process has loaded (the package's index alone loads none of them). */
function webpackModulesHere(): string[] {
  return Object.keys(createRequire(import.meta.url).cache).filter((m) => m.includes(`${path.sep}webpack${path.sep}lib${path.sep}`));
}

const aLongTimeAgo = new Date('2001-01-01T00:00:00Z');

describe('the workflow bundle is built in a child process when stale', function () {
  this.timeout(120_000);
  let root: string;

  beforeEach(() => {
    root = workflowTree();
  });

  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('a missing bundle is written, and this process loads no webpack compiler to write it', async () => {
    const loadedBefore = webpackModulesHere();
    assert.ok(bundleIsStale(root));
    await ensureWorkflowBundle(root);
    assert.ok(!bundleIsStale(root), 'the bundle is current');
    assert.match(fs.readFileSync(workflowBundlePath(root), 'utf8'), /parseDocument/);
    assert.deepEqual(webpackModulesHere(), loadedBefore, 'no webpack module was loaded here');
  });

  it('a bundle older than one of its sources is written again; a current one is left as it is', async () => {
    const bundle = workflowBundlePath(root);
    fs.mkdirSync(path.dirname(bundle), { recursive: true });
    fs.writeFileSync(bundle, '// an old bundle\n');
    fs.utimesSync(bundle, aLongTimeAgo, aLongTimeAgo);
    await ensureWorkflowBundle(root);
    assert.match(fs.readFileSync(bundle, 'utf8'), /parseDocument/, 'rebuilt from the sources');

    const built = fs.statSync(bundle).mtimeMs;
    await ensureWorkflowBundle(root);
    assert.equal(fs.statSync(bundle).mtimeMs, built, 'not written again');
  });

  it('workflows that do not compile fail with webpack\'s error and keep the previous bundle', async () => {
    const bundle = workflowBundlePath(root);
    fs.mkdirSync(path.dirname(bundle), { recursive: true });
    fs.writeFileSync(bundle, '// the previous bundle\n');
    fs.utimesSync(bundle, aLongTimeAgo, aLongTimeAgo);
    fs.appendFileSync(path.join(root, 'workflows', 'index.ts'), "import './no-such-workflow.js';\n");
    await assert.rejects(ensureWorkflowBundle(root), (err: Error) => {
      assert.match(err.message, new RegExp(`^could not build the workflow bundle ${bundle}: the bundling process exited with 1:\n`));
      assert.match(err.message, /ERROR in .*workflows\/index\.ts.*\nModule not found: Error: Can't resolve '\.\/no-such-workflow\.js'/);
      assert.ok(!err.message.includes('Field \'browser\''), 'without the resolver\'s trace');
      return true;
    });
    assert.equal(fs.readFileSync(bundle, 'utf8'), '// the previous bundle\n');
    assert.deepEqual(fs.readdirSync(path.dirname(bundle)), ['workflow-bundle.js'], 'no partial file left');
  });
});
