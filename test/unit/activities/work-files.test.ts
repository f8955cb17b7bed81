import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJson, writeJson } from '../../../activities/work-files.js';
import { FsBlobStore } from '../../../src/blobs/fs-blob-store.js';
import { encodeChunks } from '../../../src/chunking/chunk-file.js';

describe('work files', () => {
  let root: string;
  let blobs: FsBlobStore;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'cairn-work-files-'));
    blobs = new FsBlobStore(root);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('keeps image bytes as bytes through a JSON work file, beside plain values', async () => {
    const drafts = [
      { content: 'a picture', image: new Uint8Array([0, 1, 254, 255]), positions: [[1, 2, 3, 4, 5]] },
      { content: 'text only', questions: ['why?'] },
    ];
    await writeJson(blobs, 'work/d-1/chunks.json', drafts);
    const back = await readJson<typeof drafts>(blobs, 'work/d-1/chunks.json');
    assert.ok(back[0]!.image instanceof Uint8Array);
    assert.deepEqual([...back[0]!.image!], [0, 1, 254, 255]);
    assert.deepEqual({ ...back[0], image: undefined }, { ...drafts[0], image: undefined });
    assert.deepEqual(back[1], drafts[1]);
  });

  it('reads a file without bytes as plain JSON, a text that mentions "$b64" included', async () => {
    const drafts = [{ content: 'the key "$b64" in a sentence', keywords: ['$b64'] }, { content: 'plain' }];
    await writeJson(blobs, 'work/d-2/chunks.json', drafts);
    assert.deepEqual(await readJson(blobs, 'work/d-2/chunks.json'), drafts);
  });

  it('a parser process\'s encoded chunks are the work file\'s text: read back, images are bytes again', async () => {
    const drafts = [{ content: 'a slide', image: new Uint8Array([9, 8, 7]) }, { content: 'text', positions: [[2, 0, 10, 0, 10]] as [number, number, number, number, number][] }];
    const encoded = encodeChunks({ drafts, tokens: 5, pages: 2, sections: 2 });
    assert.deepEqual({ ...encoded, draftsJson: undefined }, { draftsJson: undefined, chunks: 2, tokens: 5, pages: 2, sections: 2 });
    await blobs.put('work/d-4/chunks.json', Buffer.from(encoded.draftsJson));
    const back = await readJson<typeof drafts>(blobs, 'work/d-4/chunks.json');
    assert.deepEqual([...back[0]!.image!], [9, 8, 7]);
    assert.deepEqual(back[1], drafts[1]);
  });

  it('says which work file is missing', async () => {
    await assert.rejects(readJson(blobs, 'work/d-3/chunks.json'), /work file work\/d-3\/chunks.json is missing/);
  });
});
