import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { bundleIsStale, workflowBundlePath } from '../../src/engine/bundle-workflows.js';
import { Api } from './client.js';
import { adminKeyOf, cairnEnv, freeCairnPorts, runCairn, startCairnProcess, type CairnProcess } from './cairn-process.js';
import { upload, waitForRun } from './documents-helpers.js';

const checkout = loadConfig().rootDir;

/**
 * A copy of the checkout's sources (what git tracks or would, as they are on disk) sharing its installed
 * packages and Temporal CLI: its own workflow bundle, so making that stale touches nobody else's. Without
 * dist/node/ it runs through tsx.
 */
function copyOfTheTree(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-tree-'));
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: checkout, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    if (!fs.existsSync(path.join(checkout, file))) continue; // deleted in the working tree
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.copyFileSync(path.join(checkout, file), path.join(root, file));
  }
  for (const shared of ['node_modules', '.venv']) {
    if (fs.existsSync(path.join(checkout, shared))) fs.symlinkSync(path.join(checkout, shared), path.join(root, shared));
  }
  return root;
}

/** A bundle that would fail every workflow task if it ran, dated before every source. */
function writeStaleBundle(root: string): void {
  const bundle = workflowBundlePath(root);
  fs.mkdirSync(path.dirname(bundle), { recursive: true });
  fs.writeFileSync(bundle, "throw new Error('the stale workflow bundle ran');\n");
  const aLongTimeAgo = new Date('2001-01-01T00:00:00Z');
  fs.utimesSync(bundle, aLongTimeAgo, aLongTimeAgo);
}

describe('cairn start with a workflow bundle older than its sources', function () {
  this.timeout(300_000);
  const dirs: string[] = [];
  let cairn: CairnProcess | undefined;
  const tempDir = (prefix: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };

  afterEach(async () => {
    await cairn?.stop();
    cairn = undefined;
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('rebuilds the bundle before its workers start, and documents parse with it', async () => {
    const root = copyOfTheTree();
    dirs.push(root);
    writeStaleBundle(root);
    assert.ok(bundleIsStale(root));

    const dataDir = tempDir('cairn-bundle-data-');
    cairn = await startCairnProcess(dataDir, undefined, { rootDir: root });
    assert.ok(!bundleIsStale(root), 'the bundle is current');
    assert.doesNotMatch(fs.readFileSync(workflowBundlePath(root), 'utf8'), /the stale workflow bundle ran/);

    const api = new Api(cairn.url, adminKeyOf(dataDir));
    const ds = (await api.post('/datasets', { name: 'fresh-bundle' })).body.data;
    const up = await upload(api, ds.id, [{ name: 'cairns.txt', bytes: Buffer.from('A cairn is a human-made pile of stones.\nHikers use cairns to mark trails.') }]);
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const docId = up.body.data[0].id;
    assert.equal((await api.post(`/datasets/${ds.id}/chunks`, { document_ids: [docId] })).status, 200);
    const doc = await waitForRun(api, ds.id, docId);
    assert.equal(doc.run, 'DONE', JSON.stringify(doc));
    assert.ok(doc.chunk_count > 0);
  });

  it('does not start when the workflows do not compile, and says what webpack could not resolve', async () => {
    const root = copyOfTheTree();
    dirs.push(root);
    writeStaleBundle(root);
    fs.appendFileSync(path.join(root, 'workflows', 'index.ts'), "import './no-such-workflow.js';\n");

    const dataDir = tempDir('cairn-bundle-data-');
    const started = await runCairn(['start'], cairnEnv(dataDir, await freeCairnPorts()), root);
    assert.equal(started.code, 1, started.stdout + started.stderr);
    assert.match(started.stderr, /cairn: could not build the workflow bundle .*dist\/workflow-bundle\.js: the bundling process exited with 1:\n/);
    assert.match(started.stderr, /Module not found: Error: Can't resolve '\.\/no-such-workflow\.js'/);
    assert.doesNotMatch(started.stdout + started.stderr, /Cairn is listening/);
  });
});
