import assert from 'node:assert/strict';
import { chunkDocument } from '../../../src/chunking/index.js';
import { doc, image, pos, text } from './build.js';

describe('chunking picture', () => {
  const a = new Uint8Array([1]);
  const b = new Uint8Array([2]);

  it('makes one chunk per image with its OCR text and the image attached', () => {
    const chunks = chunkDocument(
      doc([image('STOP', a, { positions: [pos(1, 0)] }), text('Caption: a road sign'), image('EXIT 12', b)]),
      'picture',
      {},
      { filename: 'signs.png' },
    );
    assert.deepEqual(chunks, [
      { content: 'STOP\nCaption: a road sign', positions: [pos(1, 0)], image: a },
      { content: 'EXIT 12', image: b },
    ]);
  });

  it('names an image without text after its section or file', () => {
    const chunks = chunkDocument(doc([image('', a), image(' ', b, { name: 'page-2' })]), 'picture', {}, { filename: 'scan.jpg' });
    assert.deepEqual(chunks, [
      { content: 'scan.jpg', image: a },
      { content: 'page-2', image: b },
    ]);
  });

  it('produces nothing without images or text', () => {
    assert.deepEqual(chunkDocument(doc([]), 'picture', {}, { filename: 'x.png' }), []);
  });
});
