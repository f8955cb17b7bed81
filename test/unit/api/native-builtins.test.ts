import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Some libraries install global polyfills when imported (pdfjs-dist's legacy build replaces
 * Array.prototype.push and JSON.stringify with core-js versions, ~10x and ~5x slower). In the API process
 * they would slow every request on the event loop, so such libraries may only load in parser processes
 * and threads, and the parser process puts the natives back once pdfjs is loaded. A fresh process is
 * needed: this test process may have loaded them for other tests.
 */
const nativesAfter = async (importing: string): Promise<unknown> => {
  const script = `
    const push = Array.prototype.push, stringify = JSON.stringify, parse = JSON.parse;
    ${importing}
    console.log(JSON.stringify({ push: Array.prototype.push === push, stringify: JSON.stringify === stringify, parse: JSON.parse === parse }));`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 55_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
};
const moduleUrl = (relative: string): string => pathToFileURL(new URL(relative, import.meta.url).pathname).href;

describe('the API and parser processes keep the native built-ins', () => {
  it('loading the server (every route, service and activity) replaces neither Array.prototype.push nor JSON.stringify', async function () {
    this.timeout(60_000);
    const natives = await nativesAfter(`await import(${JSON.stringify(moduleUrl('../../../src/server.ts'))});`);
    assert.deepEqual(natives, { push: true, stringify: true, parse: true });
  });

  it('a parser that has read a PDF (pdfjs and its worker loaded) has the native push, JSON.stringify and JSON.parse', async function () {
    this.timeout(60_000);
    const natives = await nativesAfter(`
      const { makePdf } = await import(${JSON.stringify(moduleUrl('../../fixtures/generate.ts'))});
      const { extract } = await import(${JSON.stringify(moduleUrl('../../../src/parsing/index.ts'))});
      const doc = await extract(await makePdf({ pages: 2, paragraphsPerPage: 2, title: 'Natives' }), 'natives.pdf');
      if (doc.pages !== 2 || doc.meta.title !== 'Natives') throw new Error('the PDF was not read');`);
    assert.deepEqual(natives, { push: true, stringify: true, parse: true });
  });
});
