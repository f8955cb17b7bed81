import assert from 'node:assert/strict';
import { parseDelimiters, splitKeepingDelimiters, splitOnCustomDelimiters } from '../../../src/text/delimiters.js';

describe('text/delimiters', () => {
  describe('parseDelimiters', () => {
    it('reads every character as a delimiter', () => {
      const d = parseDelimiters('\n!?;。；！？');
      assert.deepEqual(d.single, ['\n', '!', '?', ';', '。', '；', '！', '？']);
      assert.deepEqual(d.custom, []);
    });

    it('reads backtick-quoted text as one multi-character delimiter', () => {
      const d = parseDelimiters('\n`##`!`---`');
      assert.deepEqual(d.single, ['\n', '!']);
      assert.deepEqual(d.custom, ['---', '##']);
    });

    it('decodes escape sequences typed literally', () => {
      assert.deepEqual(parseDelimiters('\\n\\t').single, ['\n', '\t']);
      assert.deepEqual(parseDelimiters('`\\n\\n`').custom, ['\n\n']);
    });

    it('orders custom delimiters longest first and drops duplicates', () => {
      assert.deepEqual(parseDelimiters('`#``###``#`').custom, ['###', '#']);
    });
  });

  describe('splitKeepingDelimiters', () => {
    it('keeps each delimiter at the end of its piece', () => {
      assert.deepEqual(splitKeepingDelimiters('One! Two? Three', ['!', '?']), ['One!', ' Two?', ' Three']);
    });

    it('keeps runs of delimiters together', () => {
      assert.deepEqual(splitKeepingDelimiters('a\n\nb?!c', ['\n', '?', '!']), ['a\n\n', 'b?!', 'c']);
    });

    it('handles characters outside the BMP and empty input', () => {
      assert.deepEqual(splitKeepingDelimiters('𠮷。𠮷', ['。']), ['𠮷。', '𠮷']);
      assert.deepEqual(splitKeepingDelimiters('', ['\n']), []);
      assert.deepEqual(splitKeepingDelimiters('abc', []), ['abc']);
    });

    it('takes a delimiter outside the BMP and a lone surrogate as one character each, and ignores entries of several characters', () => {
      assert.deepEqual(splitKeepingDelimiters('a😀b😀😀c', ['😀']), ['a😀', 'b😀😀', 'c']);
      assert.deepEqual(splitKeepingDelimiters('a\ud800b', ['\ud800']), ['a\ud800', 'b']);
      assert.deepEqual(splitKeepingDelimiters('a😀b', ['\ud83d']), ['a😀b']);
      assert.deepEqual(splitKeepingDelimiters('xaby', ['ab']), ['xaby']);
    });

    it('splits a 10 MB text into pieces that are slices of it, not chains of characters', () => {
      const text = 'A line of text, sixty characters long, more or less, ends.\n'.repeat(180_000);
      const before = process.memoryUsage().heapUsed;
      const pieces = splitKeepingDelimiters(text, ['\n']);
      assert.equal(pieces.length, 180_000);
      assert.equal(pieces.join(''), text);
      // One character at a time made each piece a chain of one-character strings: ~35 bytes of heap a byte.
      assert.ok(process.memoryUsage().heapUsed - before < 100 * 2 ** 20, `${((process.memoryUsage().heapUsed - before) / 2 ** 20).toFixed(0)} MB`);
    });
  });

  describe('splitOnCustomDelimiters', () => {
    it('drops the delimiters and keeps what lies between', () => {
      assert.deepEqual(splitOnCustomDelimiters('intro## A## B', ['##']), ['intro', ' A', ' B']);
      assert.deepEqual(splitOnCustomDelimiters('a.*b', ['.*']), ['a', 'b'], 'regex characters are literal');
      assert.deepEqual(splitOnCustomDelimiters('abc', []), ['abc']);
    });
  });
});
