import assert from 'node:assert/strict';
import { get_encoding } from 'tiktoken';
import { countTokens, splitByTokenWindow } from '../../../src/text/tokens.js';

const reference = get_encoding('cl100k_base');
const exact = (text: string) => reference.encode_ordinary(text).length;

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

    it('counts long ordinary text exactly', () => {
      const prose = Array.from({ length: 400 }, (_, i) => `Line ${i}:  the   quick brown fox.\n\nNext, please!`).join(' ');
      assert.ok(prose.length > 10_000);
      assert.equal(countTokens(prose), exact(prose));
      const chinese = '为了保护个人信息权益，规范个人信息处理活动，促进个人信息合理利用，根据宪法，制定本法。'.repeat(200);
      assert.equal(countTokens(chinese), exact(chinese));
    });

    it('stays fast on long runs without breaks, never counting low', () => {
      const blob = 'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo'.repeat(3000);
      const cjk = '日本語のテキスト'.repeat(5000);
      const started = performance.now();
      const counts = [countTokens(blob), countTokens(cjk)];
      assert.ok(performance.now() - started < 5_000, 'long runs are segmented');
      assert.ok(counts[0]! >= exact(blob.slice(0, 20_000)) * (blob.length / 20_000) * 0.9);
      assert.ok(counts[1]! >= exact(cjk.slice(0, 8_000)) * 5 * 0.99);
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

    it('handles a long run without breaks quickly', () => {
      const text = 'x'.repeat(200_000);
      const started = performance.now();
      const parts = splitByTokenWindow(text, 128);
      assert.ok(performance.now() - started < 5_000);
      assert.equal(parts.join(''), text);
      for (const p of parts) assert.ok(countTokens(p) <= 128);
    });

    it('rejects a limit below one', () => {
      assert.throws(() => splitByTokenWindow('abc', 0), RangeError);
    });
  });
});
