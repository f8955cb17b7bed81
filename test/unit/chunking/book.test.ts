import assert from 'node:assert/strict';
import { chunkDocument } from '../../../src/chunking/index.js';
import { countTokens } from '../../../src/text/tokens.js';
import { doc, sentences, text, title } from './build.js';

const ctx = { filename: 'book.epub' };

describe('chunking book', () => {
  it('starts chunks at titles once the chunk has a quarter of its size', () => {
    const chunks = chunkDocument(
      doc([
        title('Chapter 1', 1),
        text(sentences(4, 'a')),
        title('Chapter 2', 1),
        text(sentences(4, 'b')),
        title('Chapter 3', 1),
        text('Short.'),
        title('Chapter 4', 1),
        text('Also short.'),
      ]),
      'book',
      { chunk_token_num: 128 },
      ctx,
    );
    assert.deepEqual(chunks.map((c) => c.content.split('\n')[0]), ['Chapter 1', 'Chapter 2', 'Chapter 3']);
    assert.ok(chunks[2]!.content.includes('Chapter 4\nAlso short.'), 'a short chapter does not make a crumb of a chunk');
  });

  it('still respects the token limit inside long chapters', () => {
    const chunks = chunkDocument(doc([title('Chapter 1'), text(sentences(60))]), 'book', { chunk_token_num: 100 }, ctx);
    assert.ok(chunks.length > 5);
    for (const c of chunks) assert.ok(countTokens(c.content) <= 100);
  });
});
