import assert from 'node:assert/strict';
import { contentTypeFor, CorruptFileError, extract, isSupportedFile, UnsupportedFormatError } from '../../../src/parsing/index.js';
import { makeImageWithText, makePdf, makeXlsx } from '../../fixtures/generate.js';

describe('parsing: format table and dispatch', () => {
  it('accepts the supported extensions case-insensitively and rejects others', () => {
    for (const name of ['a.pdf', 'B.DOCX', 'c.xlsx', 'd.xls', 'e.csv', 'f.pptx', 'g.html', 'h.md', 'i.txt', 'j.py', 'k.json', 'l.jsonl', 'm.eml', 'n.png', 'o.JPG', 'p.tiff', 'q.webp', 'r.yaml', 's.go']) {
      assert.equal(isSupportedFile(name), true, name);
    }
    for (const name of ['a.xyz', 'archive.zip', 'Makefile', 'movie.mp4', 'old.doc', 'a.constructor', 'a.__proto__']) {
      assert.equal(isSupportedFile(name), false, name);
    }
  });

  it('gives MIME types from the same table', () => {
    assert.equal(contentTypeFor('report.pdf'), 'application/pdf');
    assert.equal(contentTypeFor('sheet.XLSX'), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    assert.equal(contentTypeFor('photo.jpeg'), 'image/jpeg');
    assert.equal(contentTypeFor('mail.eml'), 'message/rfc822');
    assert.equal(contentTypeFor('notes.md'), 'text/markdown');
    assert.equal(contentTypeFor('blob.xyz'), 'application/octet-stream');
  });

  it('throws UnsupportedFormatError naming the extension', async () => {
    await assert.rejects(extract(Buffer.from('x'), 'data.xyz'), (error: unknown) => {
      assert.ok(error instanceof UnsupportedFormatError);
      assert.equal(error.message, 'This type of file has not been supported yet: .xyz');
      return true;
    });
  });

  it('parses by content when the extension lies', async () => {
    const pdfAsDocx = await extract(await makePdf({ pages: 1, paragraphsPerPage: 1 }), 'really-a-pdf.docx');
    assert.ok(pdfAsDocx.sections.some((s) => s.text.includes('Paragraph 1.1')));
    assert.equal(pdfAsDocx.sections[0].page, 1);

    const xlsxAsXls = await extract(await makeXlsx(), 'renamed.xls');
    assert.deepEqual(xlsxAsXls.sections[0].rows?.[0], ['Region', 'Quarter', 'Revenue']);

    const pdfAsTxt = await extract(await makePdf({ pages: 1, paragraphsPerPage: 1 }), 'export.txt');
    assert.ok(pdfAsTxt.sections[0].positions);
  });

  it('reports a file whose bytes are not its format as corrupt, naming file and format', async () => {
    const png = await makeImageWithText('x');
    await assert.rejects(extract(png.subarray(0, 0), 'empty.pdf'), (error: unknown) => {
      assert.ok(error instanceof CorruptFileError);
      assert.match(error.message, /^empty\.pdf is not a readable PDF: /);
      return true;
    });
    await assert.rejects(extract(Buffer.from([0, 1, 2, 3, 0, 0]), 'binary.txt'), /binary\.txt is not a readable text file: .*binary/);
  });

  it('stops before parsing when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stopped by user'));
    await assert.rejects(extract(Buffer.from('hello'), 'a.txt', { signal: controller.signal }), /stopped by user/);
  });
});
