import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkRecords, RECORD_SLICE } from '../../../activities/parse/index-chunks.js';
import { FsBlobStore } from '../../../src/blobs/fs-blob-store.js';
import { chunkImageKey } from '../../../src/services/blob-keys.js';
import type { DocumentRow } from '../../../src/store/documents.js';
import { turnsDuring } from '../../support/event-loop.js';

const doc = { id: 'doc1', dataset_id: 'ds1', tenant_id: 't1', name: 'book.txt' } as DocumentRow;

describe("the index step's chunk records", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'cairn-records-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("a large document's records are built in slices, the event loop turning between them, with one id per run and position", async () => {
    const n = 2 * RECORD_SLICE + 1;
    const drafts = Array.from({ length: n }, (_, i) => ({ content: `line ${i}` }));
    const vectors = drafts.map((_, i) => [i, 1]);
    let records: Awaited<ReturnType<typeof chunkRecords>> = [];
    const turns = await turnsDuring(async () => (records = await chunkRecords(doc, 3, drafts, vectors, Date.UTC(2026, 0, 2, 3, 4, 5), new FsBlobStore(dir))));
    assert.ok(turns >= 2, `the event loop turned ${turns} times`);
    assert.equal(records.length, n);
    assert.equal(new Set(records.map((r) => r.id)).size, n);
    assert.deepEqual(records.at(-1)!.vector, [n - 1, 1]);
    assert.equal(records[0]!.create_time, '2026-01-02 03:04:05');
    const again = await chunkRecords(doc, 3, drafts.slice(0, 1), vectors, 0, new FsBlobStore(dir));
    assert.equal(again[0]!.id, records[0]!.id, 'a retried index step overwrites: same run, same position, same id');
  });

  it("stores a chunk's image and names it in the record", async () => {
    const blobs = new FsBlobStore(dir);
    const [record] = await chunkRecords(doc, 1, [{ content: 'figure', image: Buffer.from('png') }], [[1]], 0, blobs);
    assert.equal(record!.image_id, `ds1-${record!.id}`);
    assert.deepEqual(await blobs.get(chunkImageKey('ds1', record!.id)), Buffer.from('png'));
  });
});
