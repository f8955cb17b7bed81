import assert from 'node:assert/strict';
import { chunkDocument } from '../../../src/chunking/index.js';
import { doc, pos, table, text } from './build.js';

const ctx = { filename: 'a.txt' };
const on = (children_delimiter: string, extra: Record<string, unknown> = {}) => ({
  chunk_token_num: 128,
  delimiter: '\n',
  parent_child: { use_parent_child: true, children_delimiter },
  ...extra,
});

describe('chunking parent_child', () => {
  it('returns the children of each chunk with the chunk as parent_content', () => {
    const chunks = chunkDocument(doc([text('Line one.\nLine two.', { positions: [pos(1, 5)] })]), 'naive', on('\n'), ctx);
    assert.deepEqual(chunks, [
      { content: 'Line one.', positions: [pos(1, 5)], parent_content: 'Line one.\nLine two.' },
      { content: 'Line two.', positions: [pos(1, 5)], parent_content: 'Line one.\nLine two.' },
    ]);
  });

  it('splits children on backtick delimiters too', () => {
    const chunks = chunkDocument(doc([text('a || b || c')]), 'naive', on('`||`'), ctx);
    assert.deepEqual(chunks.map((c) => [c.content, c.parent_content]), [
      ['a', 'a || b || c'],
      ['b', 'a || b || c'],
      ['c', 'a || b || c'],
    ]);
  });

  it('leaves a chunk that does not split as it is', () => {
    const chunks = chunkDocument(doc([text('Only one line.')]), 'naive', on('\n'), ctx);
    assert.deepEqual(chunks, [{ content: 'Only one line.' }]);
  });

  it('is off unless use_parent_child is true', () => {
    const config = { chunk_token_num: 128, parent_child: { use_parent_child: false, children_delimiter: '\n' } };
    const chunks = chunkDocument(doc([text('a\nb')]), 'naive', config, ctx);
    assert.deepEqual(chunks, [{ content: 'a\nb' }]);
  });

  it('does not cut row-based methods into children', () => {
    const chunks = chunkDocument(doc([table([['q', 'a'], ['Why?', 'Because\nof this.']])]), 'qa', on('\n'), ctx);
    assert.equal(chunks.length, 1);
    assert.equal(chunks[0]!.parent_content, undefined);
  });
});
