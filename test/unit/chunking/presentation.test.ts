import assert from 'node:assert/strict';
import { chunkDocument } from '../../../src/chunking/index.js';
import { doc, image, pos, table, text, title } from './build.js';

const ctx = { filename: 'deck.pptx' };

describe('chunking presentation', () => {
  it('makes one chunk per slide with its image and page', () => {
    const png = new Uint8Array([137, 80, 78, 71]);
    const chunks = chunkDocument(
      doc(
        [
          title('Welcome', 1, { page: 1 }),
          text('Agenda for today', { page: 1 }),
          image('', png, { page: 1 }),
          title('Numbers', 1, { page: 2, positions: [pos(2, 40)] }),
          table([['Q', 'Revenue'], ['Q1', '10']], { page: 2 }),
          text('Speaker note without page'),
          image('', png, { page: 3 }),
          text('Closing', { page: 4 }),
        ],
        {},
        4,
      ),
      'presentation',
      { raptor: { use_raptor: false } },
      ctx,
    );
    assert.deepEqual(chunks, [
      { content: 'Welcome\nAgenda for today', positions: [[1, 0, 0, 0, 0]], image: png },
      { content: 'Numbers\nQ | Revenue\nQ1 | 10\nSpeaker note without page', positions: [pos(2, 40)] },
      { content: 'Closing', positions: [[4, 0, 0, 0, 0]] },
    ]);
  });
});
