import assert from 'node:assert/strict';
import { chunkDocument } from '../../../src/chunking/index.js';
import { doc, pos, table, text } from './build.js';

const ctx = { filename: 'tags.csv' };

describe('chunking tag', () => {
  it('turns (content, tags) rows into chunks with tag_kwd', () => {
    const chunks = chunkDocument(
      doc([
        table(
          [
            ['Content', 'Tags'],
            ['Rivers flood in spring.', 'hydrology, seasons ,floods'],
            ['Version 2.0 released.', 'release,v2.0，news'],
            ['No tags here.', ''],
            ['Duplicate tags', 'a,a,b'],
          ],
          { positions: [pos(1, 0)] },
        ),
      ]),
      'tag',
      {},
      ctx,
    );
    assert.deepEqual(chunks, [
      { content: 'Rivers flood in spring.', tag_kwd: ['hydrology', 'seasons', 'floods'], positions: [pos(1, 0)] },
      { content: 'Version 2.0 released.', tag_kwd: ['release', 'v2_0', 'news'], positions: [pos(1, 0)] },
      { content: 'Duplicate tags', tag_kwd: ['a', 'b'], positions: [pos(1, 0)] },
    ]);
  });

  it('reads tab-separated text lines', () => {
    const chunks = chunkDocument(doc([text('Bridges span rivers.\tengineering,bridges\nnot a row')]), 'tag', {}, ctx);
    assert.deepEqual(chunks, [{ content: 'Bridges span rivers.', tag_kwd: ['engineering', 'bridges'] }]);
  });
});
