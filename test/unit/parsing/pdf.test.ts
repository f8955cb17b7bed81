import assert from 'node:assert/strict';
import { CorruptFileError, extract, type Section } from '../../../src/parsing/index.js';
import { groupBlocks, groupLines, titleLevels, type TextRun } from '../../../src/parsing/pdf-layout.js';
import { joinLines } from '../../../src/parsing/text.js';
import { chapterHeading, makePdf, paragraphMarker } from '../../fixtures/generate.js';

const LETTER = { width: 612, height: 792 };

describe('parsing: PDF text layer', () => {
  let pdf: Buffer;
  before(async () => {
    pdf = await makePdf({ pages: 3, paragraphsPerPage: 4, title: 'Annual Harbor Review' });
  });

  it('extracts every paragraph on its page, in reading order, with positions inside the page', async () => {
    const doc = await extract(pdf, 'review.pdf');
    assert.equal(doc.pages, 3);
    assert.equal(doc.meta.title, 'Annual Harbor Review');
    for (let page = 1; page <= 3; page++) {
      const onPage = doc.sections.filter((s) => s.page === page);
      const markers = onPage.filter((s) => s.kind === 'text').map((s) => s.text.slice(0, paragraphMarker(page, 1).length));
      assert.deepEqual(markers, [1, 2, 3, 4].map((i) => paragraphMarker(page, i)));
      let previousTop = -1;
      for (const s of onPage) {
        assert.equal(s.positions?.length, 1);
        const [p, x0, x1, top, bottom] = s.positions![0];
        assert.equal(p, page);
        assert.ok(x0 >= 0 && x0 < x1 && x1 <= LETTER.width, `x in page: ${s.positions}`);
        assert.ok(top >= 0 && top < bottom && bottom <= LETTER.height, `y in page: ${s.positions}`);
        assert.ok(top > previousTop, 'sections go down the page');
        previousTop = top;
      }
    }
    // pdfkit's 1-inch margin: body text starts 72 pt from the left edge.
    const first = doc.sections.find((s) => s.text.startsWith(paragraphMarker(1, 1)))!;
    assert.ok(Math.abs(first.positions![0][1] - 72) < 1);
  });

  it('joins wrapped lines into one paragraph and keeps the whole text', async () => {
    const doc = await extract(pdf, 'review.pdf');
    const paragraph = doc.sections.find((s) => s.text.startsWith(paragraphMarker(2, 3)))!;
    assert.match(paragraph.text, /^Paragraph 2\.3( [a-z]+){40}\.$/);
  });

  it('detects titles by font size: document title level 1, chapter headings level 2', async () => {
    const doc = await extract(pdf, 'review.pdf');
    const titles = doc.sections.filter((s): s is Section & { level: number } => s.kind === 'title');
    assert.deepEqual(
      titles.map((t) => [t.text, t.level, t.page]),
      [
        ['Annual Harbor Review', 1, 1],
        [chapterHeading(1), 2, 1],
        [chapterHeading(2), 2, 2],
        [chapterHeading(3), 2, 3],
      ],
    );
  });

  it('reports progress per page and honours the abort signal between pages', async () => {
    const events: [number, string][] = [];
    await extract(pdf, 'review.pdf', { onProgress: (f, m) => events.push([f, m]) });
    const pageEvents = events.filter(([, m]) => /^Reading page/.test(m));
    assert.deepEqual(pageEvents.map(([f]) => f), [0, 1 / 3, 2 / 3]);
    assert.equal(events[events.length - 1][0], 1);

    const controller = new AbortController();
    const seen: string[] = [];
    await assert.rejects(
      extract(pdf, 'review.pdf', {
        signal: controller.signal,
        onProgress: (_, m) => {
          seen.push(m);
          if (m === 'Reading page 2 of 3') controller.abort(new Error('cancelled'));
        },
      }),
      /cancelled/,
    );
    assert.ok(!seen.includes('Reading page 3 of 3'));
  });

  it('rejects corrupt PDFs quickly with a readable error', async () => {
    const cases: [string, Uint8Array][] = [
      ['garbage', Buffer.from('this is not a pdf')],
      ['header only', Buffer.from('%PDF-1.7\n')],
      ['truncated', pdf.subarray(0, Math.floor(pdf.length / 3))],
    ];
    for (const [label, bytes] of cases) {
      const started = Date.now();
      await assert.rejects(extract(bytes, 'broken.pdf'), (error: unknown) => {
        assert.ok(error instanceof CorruptFileError, label);
        assert.match(error.message, /^broken\.pdf is not a readable PDF: \S/);
        return true;
      });
      assert.ok(Date.now() - started < 5000, `${label} failed fast`);
    }
  });
});

describe('parsing: PDF layout grouping', () => {
  const run = (text: string, x: number, baseline: number, size = 10, eol = false): TextRun => ({
    text,
    x,
    baseline,
    width: text.length * size * 0.5,
    size,
    eol,
  });

  it('merges runs on one baseline, spacing them only where there is a gap', () => {
    const lines = groupLines([run('Hel', 72, 100), run('lo', 87, 100), run('world', 100, 100.5, 10, true), run('Next', 72, 112)]);
    assert.deepEqual(
      lines.map((l) => l.text),
      ['Hello world', 'Next'],
    );
  });

  it('splits paragraphs on vertical gaps and size changes, and undoes hyphenation', () => {
    const lines = groupLines([
      run('Big heading', 72, 60, 20, true),
      run('first line of infor-', 72, 90, 10, true),
      run('mation continues', 72, 102, 10, true),
      run('New paragraph', 72, 130, 10, true),
    ]);
    const blocks = groupBlocks(lines);
    assert.deepEqual(
      blocks.map((b) => b.text),
      ['Big heading', 'first line of information continues', 'New paragraph'],
    );
    assert.deepEqual(titleLevels(blocks), [1, undefined, undefined]);
    assert.equal(joinLines('state-', 'Of'), 'state- Of');
  });
});
