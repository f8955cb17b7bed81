import assert from 'node:assert/strict';
import { extract, ParseLimitError } from '../../../src/parsing/index.js';
import { DEFAULT_PARSE_LIMITS, parseLimitsFrom, parserCeilingsFrom } from '../../../src/parsing/limits.js';
import { makeImageWithText, makePdf } from '../../fixtures/generate.js';
import { deepJson, deepPdf, docxBomb, emlWith, pdfStreamBomb, plainPdf, pngClaiming, textOfSize } from '../../fixtures/hostile.js';

const MB = 1024 * 1024;

async function refused(bytes: Uint8Array, filename: string, pattern: RegExp, limits = DEFAULT_PARSE_LIMITS): Promise<void> {
  await assert.rejects(extract(bytes, filename, { limits }), (error: Error) => {
    assert.ok(error instanceof ParseLimitError, `expected a ParseLimitError, got ${error.name}: ${error.message}`);
    assert.match(error.message, pattern);
    return true;
  });
}

describe('parsing limits', function () {
  this.timeout(60_000);

  it('refuses a 1 GB text file by its size, before decoding a byte of it', async () => {
    // Zero-filled pages are never touched, so the test costs no real memory.
    const huge = Buffer.alloc(1024 * MB);
    const started = Date.now();
    await refused(huge, 'dump.txt', /^dump\.txt was refused: 1\.0 GB of text is more than the limit of 50 MB \(CAIRN_PARSE_TEXT_MAX_MB\)$/);
    assert.ok(Date.now() - started < 1000);
  });

  it('parses text up to the limit', async () => {
    const doc = await extract(textOfSize(2 * MB), 'log.txt', { limits: { ...DEFAULT_PARSE_LIMITS, textBytes: 2 * MB } });
    assert.ok(doc.sections.length > 1000);
    await refused(textOfSize(2 * MB + 1), 'log.txt', /more than the limit of 2 MB/, { ...DEFAULT_PARSE_LIMITS, textBytes: 2 * MB });
  });

  it('refuses JSON nested 1,000,000 deep before parsing it, and JSON Lines likewise', async () => {
    await refused(deepJson(1_000_000), 'deep.json', /^deep\.json was refused: its JSON nests deeper than 256 levels \(limit 256, CAIRN_PARSE_MAX_DEPTH\)$/);
    await refused(Buffer.concat([Buffer.from('{"ok":1}\n'), deepJson(300)]), 'rows.jsonl', /nests deeper than 256 levels/);
  });

  it('parses JSON nested up to the limit; brackets inside strings do not count', async () => {
    const doc = await extract(Buffer.from(`{"text":"${'['.repeat(1000)}","nested":${'['.repeat(200)}1${']'.repeat(200)}}`), 'ok.json');
    assert.ok(doc.sections[0].text.startsWith('text: [[['));
  });

  it('refuses a PNG whose header claims 100,000 × 100,000 pixels without decoding it', async () => {
    await refused(
      pngClaiming(100_000, 100_000),
      'scan.png',
      /^scan\.png was refused: the image is 100000 × 100000 pixels \(10000 megapixels\), more than the limit of 64 megapixels \(CAIRN_PARSE_IMAGE_MAX_MEGAPIXELS\)$/,
    );
  });

  it('reads the size of real images: an ordinary PNG is over a 0.1 megapixel limit', async () => {
    const image = await makeImageWithText('HARBOR');
    await refused(image, 'photo.png', /more than the limit of 0\.1 megapixels/, { ...DEFAULT_PARSE_LIMITS, imagePixels: 100_000 });
  });

  it('refuses a PDF whose objects nest 1,000,000 deep', async () => {
    await refused(deepPdf(1_000_000), 'deep.pdf', /^deep\.pdf was refused: its PDF objects nest deeper than 256 levels \(limit 256, CAIRN_PARSE_MAX_DEPTH\)$/);
  });

  it('refuses a PDF whose content stream inflates to 1 GB', async () => {
    const bomb = pdfStreamBomb(1024);
    assert.ok(bomb.length < 4 * MB);
    await refused(bomb, 'bomb.pdf', /^bomb\.pdf was refused: a compressed PDF stream inflates to more than 256 MB \(limit 256 MB per part, CAIRN_PARSE_INFLATE_ENTRY_MAX_MB\)$/);
  });

  it('still parses ordinary PDFs, nested and compressed ones included', async () => {
    assert.equal((await extract(plainPdf('Harbor log'), 'log.pdf')).sections[0].text, 'Harbor log');
    assert.equal((await extract(deepPdf(200), 'deep-ok.pdf')).sections[0].text, 'deep');
    assert.equal((await extract(await makePdf({ pages: 2, paragraphsPerPage: 1 }), 'gen.pdf')).pages, 2);
  });

  it('fails an email whose attachment is a zip bomb, naming the attachment and the limit', async () => {
    await refused(
      await emlWith('report.docx', docxBomb(420)),
      'mail.eml',
      /^mail\.eml has an attachment over a parsing limit: report\.docx was refused: "word\/document\.xml" declares 420 MB uncompressed \(limit 256 MB per part, CAIRN_PARSE_INFLATE_ENTRY_MAX_MB\)$/,
    );
  });

  it('reads its settings from CAIRN_PARSE_* variables, the old CAIRN_PARSE_THREADS included, and rejects nonsense', () => {
    const limits = parseLimitsFrom({ CAIRN_PARSE_TEXT_MAX_MB: '8', CAIRN_PARSE_IMAGE_MAX_MEGAPIXELS: '1.5', CAIRN_PARSE_MAX_DEPTH: '32' });
    assert.equal(limits.textBytes, 8 * MB);
    assert.equal(limits.imagePixels, 1_500_000);
    assert.equal(limits.nestingDepth, 32);
    assert.equal(limits.zipEntries, DEFAULT_PARSE_LIMITS.zipEntries);
    assert.deepEqual(parserCeilingsFrom({ CAIRN_PARSE_THREADS: '3', CAIRN_PARSE_MEMORY_MB: '512', CAIRN_PARSE_TIMEOUT_SEC: '30' }), { processes: 3, memoryMb: 512, timeoutSec: 30, idleSec: 30, pageTimeoutSec: 120, waitingFiles: 200 });
    assert.equal(parserCeilingsFrom({ CAIRN_PARSE_THREADS: '3', CAIRN_PARSE_PROCESSES: '2' }).processes, 2);
    assert.throws(() => parseLimitsFrom({ CAIRN_PARSE_ZIP_MAX_ENTRIES: 'lots' }), /CAIRN_PARSE_ZIP_MAX_ENTRIES="lots": expected an integer at least 1/);
    assert.throws(() => parserCeilingsFrom({ CAIRN_PARSE_MEMORY_MB: '-1' }), /CAIRN_PARSE_MEMORY_MB="-1": expected an integer at least 1/);
  });
});
