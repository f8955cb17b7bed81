import assert from 'node:assert/strict';
import { buildMatchExpression } from '../../../../src/index/fulltext/fts5-match.js';

const BODY = '{title content important_keywords questions}';

describe('buildMatchExpression', () => {
  it('is null without words', () => {
    assert.equal(buildMatchExpression([], 10), null);
  });

  it('ORs every word when their matches fit the row budget, however common', () => {
    const words = [{ word: 'solar', chunkFrequency: 30 }, { word: 'panel', chunkFrequency: 40 }];
    assert.equal(buildMatchExpression(words, 40, 100), `${BODY}: ("solar" OR "panel")`);
  });

  it('over budget: rarest words required, next ones optional, words in half the chunks left out', () => {
    const expr = buildMatchExpression([
      { word: 'cancer', chunkFrequency: 900 },
      { word: 'bariatric', chunkFrequency: 20 },
      { word: 'surgery', chunkFrequency: 60 },
      { word: 'reduces', chunkFrequency: 150 },
      { word: 'patients', chunkFrequency: 200 },
      { word: 'study', chunkFrequency: 1000 },
    ], 1000, 100);
    assert.equal(expr, `${BODY}: ("bariatric" OR "surgery") AND (${BODY}: ("reduces") OR scope: all)`);
  });

  it('optional words are taken up to three times the row budget', () => {
    const expr = buildMatchExpression([
      { word: 'a1', chunkFrequency: 90 }, { word: 'b2', chunkFrequency: 120 }, { word: 'c3', chunkFrequency: 150 },
      { word: 'd4', chunkFrequency: 400 },
    ], 10_000, 100);
    assert.equal(expr, `${BODY}: ("a1") AND (${BODY}: ("b2" OR "c3") OR scope: all)`);
  });

  it('always requires the rarest word, even above the budget', () => {
    const expr = buildMatchExpression([{ word: 'common', chunkFrequency: 150 }, { word: 'frequent', chunkFrequency: 200 }], 10_000, 100);
    assert.equal(expr, `${BODY}: ("common") AND (${BODY}: ("frequent") OR scope: all)`);
  });

  it('keeps the words when all of them are in half the chunks or more', () => {
    const expr = buildMatchExpression([{ word: 'x', chunkFrequency: 600 }, { word: 'y', chunkFrequency: 700 }], 1000, 300);
    assert.equal(expr, `${BODY}: ("x") AND (${BODY}: ("y") OR scope: all)`);
  });

  it('escapes double quotes', () => {
    assert.equal(buildMatchExpression([{ word: 'a"b', chunkFrequency: 1 }], 10), `${BODY}: ("a""b")`);
  });
});
