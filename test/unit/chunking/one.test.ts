import assert from 'node:assert/strict';
import { chunkDocument } from '../../../src/chunking/index.js';
import { doc, pos, sentences, table, text, title } from './build.js';

describe('chunking one', () => {
  it('makes the whole document a single chunk, whatever its size', () => {
    const long = sentences(400);
    const chunks = chunkDocument(
      doc([title('Report', 1, { positions: [pos(1, 0)] }), text(long, { positions: [pos(2, 0)] }), table([['A', 'B'], ['1', '2']])]),
      'one',
      {},
      { filename: 'r.pdf' },
    );
    assert.equal(chunks.length, 1);
    assert.equal(chunks[0]!.content, `Report\n${long}\nA | B\n1 | 2`);
    assert.deepEqual(chunks[0]!.positions, [pos(1, 0), pos(2, 0)]);
  });

  it('produces nothing for an empty document', () => {
    assert.deepEqual(chunkDocument(doc([text(' ')]), 'one', {}, { filename: 'e.txt' }), []);
  });
});
