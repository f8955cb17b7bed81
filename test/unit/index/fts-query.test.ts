import assert from 'node:assert/strict';
import { buildMatchExpression } from '../../../src/index/fts-query.js';

const BODY = '{title content important_keywords questions}';

describe('buildMatchExpression', () => {
  it('is null without words', () => {
    assert.equal(buildMatchExpression([]), null);
  });

  it('ORs every word when their matches fit the budget', () => {
    const expr = buildMatchExpression([{ word: 'solar', chunkFrequency: 30 }, { word: 'panel', chunkFrequency: 10 }], 100);
    assert.equal(expr, `${BODY}: ("panel" OR "solar")`);
  });

  it('makes the most common words optional once the rarest ones fill the budget', () => {
    const expr = buildMatchExpression([
      { word: 'cancer', chunkFrequency: 900 },
      { word: 'bariatric', chunkFrequency: 20 },
      { word: 'surgery', chunkFrequency: 60 },
      { word: 'reduces', chunkFrequency: 400 },
    ], 100);
    assert.equal(expr, `${BODY}: ("bariatric" OR "surgery") AND (${BODY}: ("reduces" OR "cancer") OR scope: all)`);
  });

  it('always requires the rarest word, even above the budget', () => {
    const expr = buildMatchExpression([{ word: 'common', chunkFrequency: 500 }, { word: 'frequent', chunkFrequency: 800 }], 100);
    assert.equal(expr, `${BODY}: ("common") AND (${BODY}: ("frequent") OR scope: all)`);
  });

  it('escapes double quotes', () => {
    assert.equal(buildMatchExpression([{ word: 'a"b', chunkFrequency: 1 }]), `${BODY}: ("a""b")`);
  });
});
