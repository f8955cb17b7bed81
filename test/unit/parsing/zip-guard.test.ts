import assert from 'node:assert/strict';
import { ParseLimitError } from '../../../src/parsing/index.js';
import { DEFAULT_PARSE_LIMITS, type ParseLimits } from '../../../src/parsing/limits.js';
import { guardZip } from '../../../src/parsing/zip-guard.js';
import { makeDocx, makePptx, makeXlsx } from '../../fixtures/generate.js';
import { docxBomb, entry, manyEntriesDocx, repeatedEntry, zipArchive, type ZipEntry } from '../../fixtures/hostile.js';

const MB = 1024 * 1024;
const limits = (overrides: Partial<ParseLimits> = {}): ParseLimits => ({ ...DEFAULT_PARSE_LIMITS, ...overrides });

/** An entry of `mb` MB of XML whose headers claim it holds 1 KB. */
const lying = (name: string, mb: number): ZipEntry => ({ ...repeatedEntry(name, '<x>', '<p>boom</p>', mb * MB, '</x>'), declaredSize: 1024 });

async function refusal(bytes: Buffer, overrides: Partial<ParseLimits> = {}): Promise<ParseLimitError> {
  try {
    await guardZip(bytes, 'file.docx', limits(overrides));
  } catch (error) {
    assert.ok(error instanceof ParseLimitError, `expected a ParseLimitError, got ${error}`);
    return error;
  }
  assert.fail('the archive was not refused');
}

describe('zip guard', function () {
  this.timeout(60_000);

  it('lets real DOCX, XLSX and PPTX files through', async () => {
    for (const bytes of [await makeDocx(), await makeXlsx(), await makePptx()]) await guardZip(bytes, 'file', limits());
  });

  it('ignores bytes that are not a zip archive', async () => {
    await guardZip(Buffer.from('plain words, no central directory'), 'notes.docx', limits());
  });

  it('refuses an archive whose entries declare more than the per-entry limit, without inflating them', async () => {
    const bomb = docxBomb(420);
    const started = Date.now();
    const error = await refusal(bomb);
    assert.match(error.message, /^file\.docx was refused: "word\/document\.xml" declares 420 MB uncompressed \(limit 256 MB per part, CAIRN_PARSE_INFLATE_ENTRY_MAX_MB\)$/);
    assert.ok(Date.now() - started < 2000);
  });

  it('measures entries whose headers lie: past the compression ratio limit', async () => {
    const bomb = zipArchive([entry('[Content_Types].xml', '<Types/>'), lying('word/document.xml', 100)]);
    assert.ok(bomb.length < 1 * MB, `bomb is ${bomb.length} bytes`);
    const error = await refusal(bomb);
    assert.match(error.message, /"word\/document\.xml" inflates to more than 200 times its compressed size \(limit 200×, CAIRN_PARSE_INFLATE_MAX_RATIO\)/);
  });

  it('measures entries whose headers lie: past the per-entry limit', async () => {
    const error = await refusal(zipArchive([lying('word/document.xml', 12)]), { inflateRatio: 1e6, inflateEntryBytes: 10 * MB });
    assert.match(error.message, /"word\/document\.xml" inflates to more than 10 MB \(limit 10 MB per part, CAIRN_PARSE_INFLATE_ENTRY_MAX_MB\)/);
  });

  it('measures entries whose headers lie: past the total limit', async () => {
    const parts = [1, 2, 3, 4].map((i) => lying(`xl/worksheets/sheet${i}.xml`, 6));
    const error = await refusal(zipArchive(parts), { inflateRatio: 1e6, inflateEntryBytes: 10 * MB, inflateTotalBytes: 16 * MB });
    assert.match(error.message, /its zip entries inflate to more than 16 MB \(limit 16 MB in total, CAIRN_PARSE_INFLATE_MAX_MB\)/);
  });

  it('allows a highly compressed entry below the ratio grace size', async () => {
    await guardZip(zipArchive([repeatedEntry('word/document.xml', '', ' ', 0.5 * MB, '')]), 'blank.docx', limits());
  });

  it('refuses an archive with 100,000 entries (ZIP64) before reading them', async () => {
    const error = await refusal(manyEntriesDocx(100_000));
    assert.match(error.message, /it holds 100000 zip entries \(limit 10000, CAIRN_PARSE_ZIP_MAX_ENTRIES\)/);
  });

  it('counts entries by walking the directory, not only by its declared count', async () => {
    const archive = manyEntriesDocx(30);
    // Forge the end record's counts down to 3: the directory still holds 30 entries.
    const end = archive.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    archive.writeUInt16LE(3, end + 8);
    archive.writeUInt16LE(3, end + 10);
    const error = await refusal(archive, { zipEntries: 20 });
    assert.match(error.message, /it holds more than 20 zip entries \(limit 20, CAIRN_PARSE_ZIP_MAX_ENTRIES\)/);
  });
});
