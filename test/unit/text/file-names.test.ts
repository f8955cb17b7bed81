import assert from 'node:assert/strict';
import { contentDisposition, safeFileName } from '../../../src/text/file-names.js';

describe('uploaded file names', () => {
  it('a path in a name keeps only its last segment: ../ cannot reach anything', () => {
    assert.equal(safeFileName('../../etc/passwd'), 'passwd');
    assert.equal(safeFileName('..\\..\\boot.ini'), 'boot.ini');
    assert.equal(safeFileName('..'), '');
  });

  it('NUL, other control characters and bidirectional overrides are dropped; other Unicode is kept', () => {
    assert.equal(safeFileName('a\u0000b.txt'), 'ab.txt');
    assert.equal(safeFileName('line\r\nbreak\t.md'), 'linebreak.md');
    assert.equal(safeFileName('invoice\u202Efdp.exe'), 'invoicefdp.exe');
    assert.equal(safeFileName('\u2067x\u2069.pdf'), 'x.pdf');
    assert.equal(safeFileName('Résumé 履歴書 👩‍💻.docx'), 'Résumé 履歴書 👩‍💻.docx');
  });

  it('Content-Disposition carries an ASCII fallback and the exact UTF-8 name, with nothing that could split the header', () => {
    assert.equal(contentDisposition('attachment', 'Résumé "final".pdf'), `attachment; filename="R_sum_ _final_.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22.pdf`);
    const header = contentDisposition('inline', 'a\r\nSet-Cookie: x=1\u202E.txt');
    assert.ok(!/[\r\n\u0000-\u001f\u202e]/.test(header), header);
    assert.equal(contentDisposition('attachment', '../'), `attachment; filename="download"; filename*=UTF-8''download`);
  });
});
