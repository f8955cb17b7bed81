import assert from 'node:assert/strict';
import { extract, shutdownOcr, CorruptFileError } from '../../../src/parsing/index.js';
import { makeImageWithText, makeScannedPdf } from '../../fixtures/generate.js';

const words = (text: string): string[] => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];

/** OCR tolerance: most expected words must be read exactly. */
function assertMostlyRead(actual: string, expected: string): void {
  const got = new Set(words(actual));
  const want = words(expected);
  const found = want.filter((w) => got.has(w));
  assert.ok(found.length >= want.length * 0.8, `read "${actual}", expected about "${expected}"`);
}

describe('parsing: OCR', function () {
  this.timeout(30_000);
  after(shutdownOcr);

  it('reads the text of a PNG and keeps the image bytes', async () => {
    const text = 'Invoice number 4711 is due on the first of March';
    const png = await makeImageWithText(text);
    const started = Date.now();
    const doc = await extract(png, 'invoice.png');
    assert.ok(Date.now() - started < 20_000);
    assert.equal(doc.sections.length, 1);
    const [section] = doc.sections;
    assert.equal(section.kind, 'image');
    assert.equal(section.page, 1);
    assert.equal(section.image, png);
    assertMostlyRead(section.text, text);
    assert.ok(section.positions!.length >= 1);
  });

  it('OCRs a PDF page that has no text layer, with page numbers and positions in points', async () => {
    const text = 'The scanned lease agreement covers the harbor warehouse for twelve months starting in April';
    const pdf = await makeScannedPdf(text);
    const progress: string[] = [];
    const started = Date.now();
    const doc = await extract(pdf, 'scan.pdf', { onProgress: (_, m) => progress.push(m) });
    assert.ok(Date.now() - started < 20_000);
    assert.equal(doc.pages, 1);
    assert.ok(progress.includes('Recognising text on page 1 of 1'));
    assert.ok(doc.sections.length >= 1);
    assertMostlyRead(doc.sections.map((s) => s.text).join(' '), text);
    for (const s of doc.sections) {
      assert.equal(s.page, 1);
      const [page, x0, x1, top, bottom] = s.positions![0];
      assert.equal(page, 1);
      assert.ok(x0 >= 0 && x0 < x1 && x1 <= 612 && top >= 0 && top < bottom && bottom <= 792, `${s.positions}`);
    }
  });

  it('reports an unreadable image as corrupt and keeps working afterwards', async () => {
    const png = await makeImageWithText('Truncated');
    for (const bytes of [Buffer.from('definitely not a picture'), png.subarray(0, 120)]) {
      await assert.rejects(extract(bytes, 'photo.png'), (error: unknown) => {
        assert.ok(error instanceof CorruptFileError);
        assert.match(error.message, /^photo\.png is not a readable image: /);
        return true;
      });
    }
    const doc = await extract(await makeImageWithText('Still working fine'), 'after.png');
    assertMostlyRead(doc.sections[0].text, 'Still working fine');
  });
});
