import assert from 'node:assert/strict';
import JSZip from 'jszip';
import { CorruptFileError, extract } from '../../../src/parsing/index.js';
import { makeCsv, makeDocx, makePptx, makeXls, makeXlsx, paragraphMarker, SAMPLE_SHEETS, SAMPLE_SLIDES, SAMPLE_TABLE } from '../../fixtures/generate.js';

/** A valid zip that is no Office package. */
const foreignZip = (): Promise<Buffer> => new JSZip().file('hello.txt', 'hello').generateAsync({ type: 'nodebuffer' });

const asText = (rows: (string | number)[][]): string[][] => rows.map((row) => row.map(String));

async function assertCorrupt(bytes: Uint8Array, filename: string, label: string): Promise<void> {
  await assert.rejects(extract(bytes, filename), (error: unknown) => {
    assert.ok(error instanceof CorruptFileError, `${filename}: ${error}`);
    assert.ok(error.message.startsWith(`${filename} is not a readable ${label}: `), error.message);
    return true;
  });
}

describe('parsing: DOCX', () => {
  it('gives headings with levels, paragraphs, list items and table rows in order', async () => {
    const doc = await extract(await makeDocx({ title: 'Harbor Survey' }), 'survey.docx');
    assert.equal(doc.meta.title, 'Harbor Survey');
    const summary = doc.sections.map((s) => [s.kind, s.level, s.text.split(' ').slice(0, 2).join(' ')]);
    assert.deepEqual(summary, [
      ['title', 1, 'Harbor Survey'],
      ['title', 2, 'Introduction'],
      ['text', undefined, paragraphMarker(1, 1)],
      ['text', undefined, paragraphMarker(1, 2)],
      ['text', undefined, '- First'],
      ['title', 2, 'Figures'],
      ['table', undefined, 'Region |'],
    ]);
    assert.match(doc.sections[4].text, /^- First bullet point about harbors\n- Second bullet point about glaciers$/);
    assert.deepEqual(doc.sections[6].rows, SAMPLE_TABLE);
    assert.equal(doc.sections[6].text.split('\n')[1], 'North | Q1 | 1200');
  });

  it('rejects a damaged DOCX', async () => {
    const docx = await makeDocx();
    await assertCorrupt(docx.subarray(0, 2000), 'cut.docx', 'DOCX document');
    await assertCorrupt(Buffer.from('plain words, not a zip'), 'words.docx', 'DOCX document');
    await assertCorrupt(await foreignZip(), 'other.docx', 'DOCX document');
  });
});

describe('parsing: spreadsheets', () => {
  it('XLSX: one table section per sheet, header first, named and numbered', async () => {
    const doc = await extract(await makeXlsx(), 'book.xlsx');
    assert.equal(doc.pages, 2);
    assert.deepEqual(
      doc.sections.map((s) => [s.kind, s.name, s.page]),
      [
        ['table', 'Sales', 1],
        ['table', 'Staff', 2],
      ],
    );
    assert.deepEqual(doc.sections[0].rows, asText(SAMPLE_SHEETS[0].rows));
    assert.deepEqual(doc.sections[1].rows, asText(SAMPLE_SHEETS[1].rows));
    assert.equal(doc.sections[1].text, 'Name | Team\nAda Lovelace | Analytics\nGrace Hopper | Compilers');
  });

  it('XLSX: dates, formulas and empty rows and columns are rendered sensibly', async () => {
    const doc = await extract(
      await makeXlsx([{ name: 'Mixed', rows: [['When', 'Total', ''], [], ['2024-03-01', 42, ''], [' padded ', 1.5]] }]),
      'mixed.xlsx',
    );
    assert.deepEqual(doc.sections[0].rows, [
      ['When', 'Total'],
      ['2024-03-01', '42'],
      ['padded', '1.5'],
    ]);
  });

  it('XLS (BIFF8): same tables as the XLSX', async () => {
    const doc = await extract(await makeXls(), 'legacy.xls');
    assert.equal(doc.pages, 2);
    assert.deepEqual(
      doc.sections.map((s) => [s.name, s.page, s.rows]),
      SAMPLE_SHEETS.map((sheet, i) => [sheet.name, i + 1, asText(sheet.rows)]),
    );
  });

  it('CSV: one table named after the file, values kept verbatim, quotes handled', async () => {
    const rows = [
      ['id', 'note', 'code'],
      ['1', 'hello, "world"', '007'],
      ['2', 'line one\nline two', '1e5'],
    ];
    const doc = await extract(await makeCsv(rows), 'notes.csv');
    assert.equal(doc.sections.length, 1);
    assert.equal(doc.sections[0].name, 'notes');
    assert.equal(doc.sections[0].page, 1);
    assert.deepEqual(doc.sections[0].rows, rows);
  });

  it('CSV: semicolon and tab separated files', async () => {
    const semicolon = await extract(Buffer.from('a;b\n1;2\n'), 'semi.csv');
    assert.deepEqual(semicolon.sections[0].rows, [
      ['a', 'b'],
      ['1', '2'],
    ]);
    const tabs = await extract(Buffer.from('a\tb\n1\t2\n'), 'tabs.tsv');
    assert.deepEqual(tabs.sections[0].rows, [
      ['a', 'b'],
      ['1', '2'],
    ]);
  });

  it('rejects a damaged XLSX and a binary blob named .xls', async () => {
    const xlsx = await makeXlsx();
    await assertCorrupt(xlsx.subarray(0, 1500), 'cut.xlsx', 'XLSX workbook');
    await assertCorrupt(Buffer.from('not a workbook at all'), 'text.xlsx', 'XLSX workbook');
    await assertCorrupt(await foreignZip(), 'other.xlsx', 'XLSX workbook');
    await assertCorrupt(Buffer.from([0x01, 0x02, 0x00, 0xff, 0x00]), 'blob.xls', 'XLS workbook');
    const xls = await makeXls();
    await assertCorrupt(xls.subarray(0, 700), 'cut.xls', 'XLS workbook');
  });
});

describe('parsing: PPTX', () => {
  it('gives each slide its title and text with the slide number as page', async () => {
    const doc = await extract(await makePptx(), 'deck.pptx');
    assert.equal(doc.pages, SAMPLE_SLIDES.length);
    assert.equal(doc.meta.title, 'Fixture deck');
    SAMPLE_SLIDES.forEach((slide, i) => {
      const sections = doc.sections.filter((s) => s.page === i + 1);
      assert.deepEqual(sections[0], { kind: 'title', text: slide.title, level: 1, page: i + 1 });
      assert.equal(sections[1].kind, 'text');
      assert.equal(sections[1].text, slide.bullets.join('\n'));
      if (slide.table) {
        assert.equal(sections[2].kind, 'table');
        assert.deepEqual(sections[2].rows, slide.table);
      }
    });
  });

  it('rejects a damaged PPTX', async () => {
    const pptx = await makePptx();
    await assertCorrupt(pptx.subarray(0, 3000), 'cut.pptx', 'PPTX presentation');
    await assertCorrupt(await foreignZip(), 'other.pptx', 'PPTX presentation');
  });
});
