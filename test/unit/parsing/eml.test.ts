import assert from 'node:assert/strict';
import { CorruptFileError, extract } from '../../../src/parsing/index.js';
import { makeCsv, makeDocx, makeEml, makePdf, paragraphMarker } from '../../fixtures/generate.js';

describe('parsing: EML', () => {
  it('puts headers in meta and the body in sections', async () => {
    const doc = await extract(await makeEml(), 'inspection.eml');
    assert.deepEqual(doc.meta, {
      from: '"Ada Lovelace" <ada@example.com>',
      to: '"Grace Hopper" <grace@example.com>',
      subject: 'Harbor inspection results',
      date: '2024-01-01T09:30:00.000Z',
    });
    assert.deepEqual(
      doc.sections.map((s) => s.text),
      ['Hello Grace,', 'The harbor inspection passed without findings.', 'Regards,\nAda'],
    );
  });

  it('extracts attachments recursively after a title naming each; unreadable ones are noted, not fatal', async () => {
    const inner = await makeEml({ subject: 'Forwarded', text: 'Inner message body about fjords', attachments: [{ filename: 'rates.csv', content: await makeCsv() }] });
    const eml = await makeEml({
      attachments: [
        { filename: 'report.pdf', content: await makePdf({ pages: 2, paragraphsPerPage: 1 }), contentType: 'application/pdf' },
        { filename: 'summary.docx', content: await makeDocx({ title: 'Attached Summary' }) },
        { filename: 'forwarded.eml', content: inner, contentType: 'message/rfc822' },
        { filename: 'tool.exe', content: Buffer.from('MZ') },
        { filename: 'broken.pdf', content: Buffer.from('not a pdf') },
      ],
    });
    const doc = await extract(eml, 'with-attachments.eml');
    assert.equal(doc.meta.attachments, 'report.pdf, summary.docx, forwarded.eml');
    assert.equal(
      doc.meta.skipped_attachments,
      'tool.exe (unsupported file type); broken.pdf (broken.pdf is not a readable PDF: Invalid PDF structure.)',
    );

    const titleIndex = (name: string): number => doc.sections.findIndex((s) => s.kind === 'title' && s.text === `Attachment: ${name}`);
    const pdfAt = titleIndex('report.pdf');
    const docxAt = titleIndex('summary.docx');
    const emlAt = titleIndex('forwarded.eml');
    assert.ok(pdfAt > 0 && pdfAt < docxAt && docxAt < emlAt, 'attachments follow the body in order');
    const pdfSections = doc.sections.slice(pdfAt + 1, docxAt);
    assert.ok(pdfSections.some((s) => s.text.startsWith(paragraphMarker(2, 1)) && s.page === 2));
    assert.ok(pdfSections.every((s) => s.positions === undefined), 'positions into the attachment are dropped');
    assert.ok(doc.sections.slice(docxAt + 1, emlAt).some((s) => s.kind === 'title' && s.text === 'Attached Summary'));
    const nested = doc.sections.slice(emlAt + 1);
    assert.ok(nested.some((s) => s.text === 'Inner message body about fjords'));
    assert.ok(nested.some((s) => s.text === 'Attachment: rates.csv'));
    assert.ok(nested.some((s) => s.kind === 'table' && s.rows?.[0]?.[0] === 'Region'));
  });

  it('rejects bytes that carry no email headers', async () => {
    await assert.rejects(extract(Buffer.from('\n\njust some words\n'), 'nothing.eml'), (error: unknown) => {
      assert.ok(error instanceof CorruptFileError);
      assert.match(error.message, /^nothing\.eml is not a readable email \(EML\): /);
      return true;
    });
  });
});
