import assert from 'node:assert/strict';
import { countTokens, splitByTokenWindow } from '../../../src/text/tokens.js';

describe('text/tokens', () => {
  describe('countTokens', () => {
    it('counts cl100k_base tokens', () => {
      assert.equal(countTokens(''), 0);
      assert.equal(countTokens('hello world'), 2);
      assert.equal(countTokens('The quick brown fox jumps over the lazy dog.'), 10);
    });

    it('treats special-token markers as ordinary text', () => {
      assert.ok(countTokens('before <|endoftext|> after') > 3);
    });

    it('counts CJK text', () => {
      assert.ok(countTokens('法律条文的内容') >= 4);
    });

    it('is fast enough to call per piece', () => {
      const started = performance.now();
      let total = 0;
      for (let i = 0; i < 20_000; i++) total += countTokens(`A short sentence number ${i} about chunking.`);
      assert.ok(total > 0);
      assert.ok(performance.now() - started < 5_000, 'twenty thousand short counts take under 5 s');
    });
  });

  describe('splitByTokenWindow', () => {
    it('cuts into windows of at most maxTokens and loses nothing', () => {
      const text = 'alpha beta gamma delta '.repeat(50);
      const parts = splitByTokenWindow(text, 7);
      assert.equal(parts.join(''), text);
      for (const p of parts) assert.ok(countTokens(p) <= 7, p);
      assert.ok(parts.length >= 200 / 7);
    });

    it('never cuts a multi-token character in half', () => {
      const text = '🦜🦜🦜日本語のテキスト𠮷野家'.repeat(5);
      const parts = splitByTokenWindow(text, 1);
      assert.equal(parts.join(''), text);
      for (const p of parts) assert.ok(!p.includes('\uFFFD'), JSON.stringify(p));
    });

    it('rejects a limit below one', () => {
      assert.throws(() => splitByTokenWindow('abc', 0), RangeError);
    });
  });
});
