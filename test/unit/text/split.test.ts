import assert from 'node:assert/strict';
import { splitSentences, splitToFit, splitWords } from '../../../src/text/split.js';
import { countTokens } from '../../../src/text/tokens.js';

describe('text/split', () => {
  it('splits sentences keeping punctuation and spacing', () => {
    assert.deepEqual(splitSentences('Pi is 3.14. Really? Yes!\nNext'), ['Pi is 3.14. ', 'Really? ', 'Yes!\n', 'Next']);
    assert.deepEqual(splitSentences('第一句。第二句！第三句'), ['第一句。', '第二句！', '第三句']);
  });

  it('splits words keeping whitespace', () => {
    assert.deepEqual(splitWords(' a bb  c'), [' a ', 'bb  ', 'c']);
  });

  it('returns short text whole', () => {
    assert.deepEqual(splitToFit('Short text.', 50), ['Short text.']);
  });

  it('breaks long text at sentences first', () => {
    const text = 'The first sentence is here. The second sentence is here. The third sentence is here.';
    const parts = splitToFit(text, 8);
    assert.deepEqual(parts, ['The first sentence is here. ', 'The second sentence is here. ', 'The third sentence is here.']);
  });

  it('falls back to words, then to token windows, and loses nothing', () => {
    const longSentence = 'word '.repeat(40) + 'x'.repeat(200);
    const parts = splitToFit(longSentence, 5);
    assert.equal(parts.join(''), longSentence);
    for (const p of parts) assert.ok(countTokens(p) <= 5, JSON.stringify(p));
  });
});
