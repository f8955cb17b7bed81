import assert from 'node:assert/strict';
import { bm25Query, bm25Text, VARCHAR_MAX_BYTES } from '../../../../../src/index/chunks/milvus/analysis.js';
import { containsPattern, literal } from '../../../../../src/index/chunks/milvus/expressions.js';
import { splitUtf8, truncateUtf8 } from '../../../../../src/index/chunks/milvus/utf8.js';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe('Milvus index text helpers', () => {
  it('splits text into pieces of at most N UTF-8 bytes without cutting a character', () => {
    const text = 'a€𝄞'.repeat(1000);
    const pieces = splitUtf8(text, 10);
    assert.equal(pieces.join(''), text);
    assert.ok(pieces.every((p) => bytes(p) <= 10 && bytes(p) >= 7), 'each piece is full up to the next character');
    assert.deepEqual(splitUtf8('', 10), ['']);
    assert.equal(truncateUtf8('€€€', 7), '€€');
    assert.equal(truncateUtf8('short', 7), 'short');
  });

  it('writes string literals that hold the value exactly', () => {
    assert.equal(literal('a"b\\c\nd\re\tf'), '"a\\"b\\\\c\\nd\\re\\tf"');
    assert.equal(literal("it's ü"), '"it\'s ü"');
  });

  it('turns a keyword into a LIKE pattern that matches a superset, free of LIKE metacharacters', () => {
    assert.equal(containsPattern('alpha'), '%alpha%');
    assert.equal(containsPattern('50%_off \\ x'), '%50%off % x%');
    assert.equal(containsPattern('%_'), '%');
  });

  it('gives BM25 the stems of the fields, boosted ones repeated first, within one VARCHAR', () => {
    const text = bm25Text({ document_name: 'Reports.pdf', content: 'The runners ran', important_keywords: ['Turbines'], questions: ['Why?'] });
    assert.deepEqual(text.split('\n'), [...Array(5).fill('report pdf'), ...Array(15).fill('turbin'), 'runner ran']);
    assert.equal(bm25Query('Which turbines are running?'), 'turbin run');
    const long = bm25Text({ document_name: 'n', content: 'word '.repeat(40_000), important_keywords: [], questions: [] });
    assert.ok(bytes(long) <= VARCHAR_MAX_BYTES && bytes(long) > VARCHAR_MAX_BYTES - 10);
    assert.ok(long.endsWith(' word'), 'no half word at the end');
  });
});
