import assert from 'node:assert/strict';
import { mergePieces } from '../../../src/chunking/merge.js';
import type { Piece } from '../../../src/chunking/pieces.js';
import { countTokens } from '../../../src/text/tokens.js';
import { pos } from './build.js';

const p = (text: string, extra: Partial<Piece> = {}): Piece => ({ text, joiner: '\n', ...extra });

describe('chunking/merge mergePieces', () => {
  it('packs pieces in order up to the token limit', () => {
    const pieces = Array.from({ length: 20 }, (_, i) => p(`Line number ${i} of the text.`));
    const chunks = mergePieces(pieces, { maxTokens: 30 });
    assert.ok(chunks.length > 1);
    for (const c of chunks) assert.ok(countTokens(c.content) <= 30, c.content);
    assert.equal(chunks.map((c) => c.content).join('\n'), pieces.map((x) => x.text).join('\n'));
  });

  it('joins pieces of one section without a separator and sections with a newline', () => {
    const chunks = mergePieces([p('One. '), p('Two.', { joiner: '' }), p('Three.')], { maxTokens: 100 });
    assert.deepEqual(chunks.map((c) => c.content), ['One. Two.\nThree.']);
  });

  it('starts a new chunk at a boundary', () => {
    const chunks = mergePieces([p('a'), p('b', { boundary: true }), p('c')], { maxTokens: 100 });
    assert.deepEqual(chunks.map((c) => c.content), ['a', 'b\nc']);
  });

  it('puts the prefix on every chunk and counts it in the limit', () => {
    const pieces = Array.from({ length: 10 }, (_, i) => p(`Body line ${i} with some words.`));
    const chunks = mergePieces(pieces, { maxTokens: 40, prefix: ['Chapter 1', 'Part A'] });
    assert.ok(chunks.length > 1);
    for (const c of chunks) {
      assert.ok(c.content.startsWith('Chapter 1\nPart A\n'), c.content);
      assert.ok(countTokens(c.content) <= 40);
    }
  });

  it('drops outer prefix lines that would crowd out the text', () => {
    const chunks = mergePieces([p('body text')], { maxTokens: 20, prefix: ['a very long outer heading that goes on and on', 'Inner'] });
    assert.deepEqual(chunks.map((c) => c.content), ['Inner\nbody text']);
  });

  it('wraps each chunk body', () => {
    const chunks = mergePieces([p('<tr>1</tr>', { joiner: '' }), p('<tr>2</tr>', { joiner: '' })], {
      maxTokens: 100,
      prefix: ['Path'],
      wrap: { open: '<table>', close: '</table>' },
    });
    assert.deepEqual(chunks.map((c) => c.content), ['Path\n<table><tr>1</tr><tr>2</tr></table>']);
  });

  it('cuts a piece larger than a chunk at sentences', () => {
    const long = 'This is one sentence of the long paragraph. '.repeat(20);
    const chunks = mergePieces([p(long)], { maxTokens: 25 });
    assert.ok(chunks.length >= 8);
    for (const c of chunks) {
      assert.ok(countTokens(c.content) <= 25);
      assert.match(c.content, /\.$/);
    }
  });

  it('breaks before headings once the chunk holds enough body', () => {
    const pieces = [
      p('Chapter 1', { heading: true }),
      p('Short intro.'),
      p('Chapter 2', { heading: true }),
      p('A longer body that fills the chunk well past the threshold we set for the test.'),
      p('Chapter 3', { heading: true }),
      p('More.'),
    ];
    const chunks = mergePieces(pieces, { maxTokens: 500, headingBreakTokens: 10 });
    assert.deepEqual(chunks.map((c) => c.content.split('\n')[0]), ['Chapter 1', 'Chapter 3']);
    const always = mergePieces(pieces, { maxTokens: 500, headingBreakTokens: 0 });
    assert.equal(always.length, 3);
    const titlesOnly = mergePieces([p('Part I', { heading: true }), p('Chapter 1', { heading: true }), p('x')], {
      maxTokens: 500,
      headingBreakTokens: 0,
    });
    assert.deepEqual(titlesOnly.map((c) => c.content), ['Part I\nChapter 1\nx'], 'consecutive titles stay together');
  });

  it('carries the union of positions and never emits blank chunks', () => {
    const chunks = mergePieces(
      [p('a', { positions: [pos(1, 0)] }), p('   '), p('b', { positions: [pos(1, 0), pos(2, 5)] })],
      { maxTokens: 100 },
    );
    assert.deepEqual(chunks, [{ content: 'a\nb', positions: [pos(1, 0), pos(2, 5)] }]);
    assert.deepEqual(mergePieces([p(' \n ')], { maxTokens: 10 }), []);
  });
});
