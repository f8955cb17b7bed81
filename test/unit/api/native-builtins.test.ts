import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Some libraries install global polyfills when imported (pdfjs-dist's legacy build replaces
 * Array.prototype.push and JSON.stringify with core-js versions, ~10x and ~5x slower). In the API process
 * they would slow every request on the event loop, so such libraries may only load in parser processes
 * and threads. A fresh process is needed: this test process may have loaded them for other tests.
 */
describe('the API process keeps the native built-ins', () => {
  it('loading the server (every route, service and activity) replaces neither Array.prototype.push nor JSON.stringify', async function () {
    this.timeout(60_000);
    const server = pathToFileURL(new URL('../../../src/server.ts', import.meta.url).pathname).href;
    const script = `
      const push = Array.prototype.push, stringify = JSON.stringify;
      await import(${JSON.stringify(server)});
      console.log(JSON.stringify({ push: Array.prototype.push === push, stringify: JSON.stringify === stringify }));`;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 55_000 });
    assert.deepEqual(JSON.parse(stdout.trim().split('\n').at(-1)!), { push: true, stringify: true });
  });
});
