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
  });

  describe('splitOnCustomDelimiters', () => {
    it('drops the delimiters and keeps what lies between', () => {
      assert.deepEqual(splitOnCustomDelimiters('intro## A## B', ['##']), ['intro', ' A', ' B']);
      assert.deepEqual(splitOnCustomDelimiters('a.*b', ['.*']), ['a', 'b'], 'regex characters are literal');
      assert.deepEqual(splitOnCustomDelimiters('abc', []), ['abc']);
    });
  });
});
