import assert from 'node:assert/strict';
import { extractInThread } from '../../../src/parsing/thread.js';
import { makePdf } from '../../fixtures/generate.js';

describe('extraction in parser threads', function () {
  this.timeout(60_000);

  it('returns what extract returns, for several files at once', async () => {
    const pdf = await makePdf({ pages: 2, paragraphsPerPage: 2 });
    const docs = await Promise.all([
      extractInThread(pdf, 'a.pdf'),
      extractInThread(Buffer.from('# Title\n\nBody text.'), 'b.md'),
      extractInThread(Buffer.from('plain words'), 'c.txt'),
    ]);
    assert.equal(docs[0].pages, 2);
    assert.ok(docs[1].sections.some((s) => s.kind === 'title' && s.text === 'Title'));
    assert.equal(docs[2].sections[0].text, 'plain words');
  });

  it('reports progress from the thread', async () => {
    const seen: number[] = [];
    await extractInThread(await makePdf({ pages: 3, paragraphsPerPage: 1 }), 'p.pdf', { onProgress: (f) => seen.push(f) });
    assert.ok(seen.length > 0);
    assert.ok(seen.every((f) => f >= 0 && f <= 1));
  });

  it('keeps the error names that mark bad input', async () => {
    await assert.rejects(extractInThread(Buffer.from('%PDF-1.7 garbage'), 'bad.pdf'), { name: 'CorruptFileError' });
    await assert.rejects(extractInThread(Buffer.from('x'), 'file.xyz'), { name: 'UnsupportedFormatError' });
  });

  it('rejects at once when cancelled, and the pool keeps working afterwards', async () => {
    const controller = new AbortController();
    const big = await makePdf({ pages: 40, paragraphsPerPage: 6 });
    const running = extractInThread(big, 'big.pdf', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stopped by the user')), 20);
    await assert.rejects(running, /stopped by the user/);
    const after = await extractInThread(Buffer.from('still fine'), 'after.txt');
    assert.equal(after.sections[0].text, 'still fine');
  });
});
