import assert from 'node:assert/strict';
import {
  allowedDocumentIds, matchesMetadata, METADATA_OPERATORS, type MetadataFilterCondition, type MetadataOperator,
} from '../../../src/retrieval/metadata.js';

const meta = {
  author: 'Ada Lovelace',
  year: 1843,
  pages: '120',
  published: '2024-03-15',
  tags: ['Math', 'engines', 'History'],
  blank: '',
  none: null,
  list_empty: [],
  flag: true,
};

function check(name: string, op: MetadataOperator, value?: unknown): boolean {
  return matchesMetadata(meta, { conditions: [{ name, comparison_operator: op, value }] });
}

describe('matchesMetadata', () => {
  it('contains / not contains: case-insensitive substring, any list element', () => {
    assert.equal(check('author', 'contains', 'LOVE'), true);
    assert.equal(check('author', 'contains', 'babbage'), false);
    assert.equal(check('tags', 'contains', 'engine'), true);
    assert.equal(check('tags', 'contains', 'physics'), false);
    assert.equal(check('year', 'contains', '84'), true);
    assert.equal(check('author', 'not contains', 'babbage'), true);
    assert.equal(check('author', 'not contains', 'ada'), false);
    assert.equal(check('tags', 'not contains', 'math'), false);
    assert.equal(check('missing', 'contains', 'x'), false);
    assert.equal(check('missing', 'not contains', 'x'), true);
  });

  it('start with / end with', () => {
    assert.equal(check('author', 'start with', 'ada'), true);
    assert.equal(check('author', 'start with', 'love'), false);
    assert.equal(check('author', 'end with', 'LACE'), true);
    assert.equal(check('author', 'end with', 'ada'), false);
    assert.equal(check('tags', 'start with', 'hist'), true);
    assert.equal(check('tags', 'end with', 'ines'), true);
    assert.equal(check('missing', 'start with', ''), false);
  });

  it('empty / not empty: missing, null, "" and [] are empty', () => {
    for (const name of ['blank', 'none', 'list_empty', 'missing']) {
      assert.equal(check(name, 'empty'), true, name);
      assert.equal(check(name, 'not empty'), false, name);
    }
    for (const name of ['author', 'year', 'tags', 'flag']) {
      assert.equal(check(name, 'empty'), false, name);
      assert.equal(check(name, 'not empty'), true, name);
    }
  });

  it('= and ≠ / != compare numbers numerically, strings case-insensitively, lists by any element', () => {
    assert.equal(check('year', '=', '1843.0'), true);
    assert.equal(check('pages', '=', 120), true);
    assert.equal(check('author', '=', 'ada lovelace'), true);
    assert.equal(check('author', '=', 'ada'), false);
    assert.equal(check('tags', '=', 'ENGINES'), true);
    assert.equal(check('flag', '=', 'true'), true);
    assert.equal(check('year', '≠', 1843), false);
    assert.equal(check('year', '!=', 1844), true);
    assert.equal(check('tags', '≠', 'math'), false);
    assert.equal(check('tags', '!=', 'physics'), true);
    assert.equal(check('missing', '=', ''), false);
    assert.equal(check('missing', '≠', 'x'), true);
  });

  it('> < ≥ ≤ (and >= <=): numeric when both sides are numbers', () => {
    assert.equal(check('pages', '>', '99'), true, '"120" > "99" numerically, not lexically');
    assert.equal(check('pages', '<', 99), false);
    assert.equal(check('year', '≥', 1843), true);
    assert.equal(check('year', '>=', 1844), false);
    assert.equal(check('year', '≤', 1843), true);
    assert.equal(check('year', '<=', 1842), false);
    assert.equal(check('year', '<', 1900), true);
    assert.equal(check('missing', '>', 0), false);
    assert.equal(check('missing', '<', 0), false);
  });

  it('compares ISO dates lexically', () => {
    assert.equal(check('published', '>', '2024-01-01'), true);
    assert.equal(check('published', '<', '2024-03-14'), false);
    assert.equal(check('published', '≥', '2024-03-15'), true);
    assert.equal(check('published', '≤', '2024-03-15T00:00:00'), true);
    assert.equal(check('published', '=', '2024-03-15'), true);
  });

  it('in / not in take a list or a comma-separated string', () => {
    assert.equal(check('author', 'in', ['Grace Hopper', 'ADA LOVELACE']), true);
    assert.equal(check('year', 'in', '1842, 1843'), true);
    assert.equal(check('year', 'in', [1842, 1844]), false);
    assert.equal(check('tags', 'in', ['physics', 'history']), true);
    assert.equal(check('author', 'not in', ['Grace Hopper']), true);
    assert.equal(check('tags', 'not in', 'math,physics'), false);
    assert.equal(check('missing', 'in', ['x']), false);
    assert.equal(check('missing', 'not in', ['x']), true);
  });

  it('combines conditions with and (default) / or; no condition matches everything', () => {
    const yes: MetadataFilterCondition = { name: 'year', comparison_operator: '=', value: 1843 };
    const no: MetadataFilterCondition = { name: 'year', comparison_operator: '=', value: 1900 };
    assert.equal(matchesMetadata(meta, { conditions: [yes, no] }), false);
    assert.equal(matchesMetadata(meta, { logic: 'and', conditions: [yes, yes] }), true);
    assert.equal(matchesMetadata(meta, { logic: 'or', conditions: [no, yes] }), true);
    assert.equal(matchesMetadata(meta, { logic: 'or', conditions: [no, no] }), false);
    assert.equal(matchesMetadata(meta, { conditions: [] }), true);
    assert.equal(matchesMetadata(null, { conditions: [{ name: 'x', comparison_operator: 'empty' }] }), true);
  });

  it('does not read inherited properties as fields', () => {
    assert.equal(check('constructor', 'empty'), true);
    assert.equal(check('toString', 'not empty'), false);
  });

  it('rejects an unknown operator', () => {
    assert.throws(() => check('year', 'like' as MetadataOperator, 'x'), /Unknown metadata comparison operator: like/);
  });

  it('every listed operator is handled', () => {
    for (const op of METADATA_OPERATORS) assert.equal(typeof check('year', op, 1843), 'boolean', op);
  });
});

describe('allowedDocumentIds', () => {
  it('returns the ids of documents whose metadata match', () => {
    const docs = [
      { document_id: 'd1', meta_fields: { lang: 'en', year: 2021 } },
      { document_id: 'd2', meta_fields: { lang: 'fr', year: 2023 } },
      { document_id: 'd3', meta_fields: { lang: 'EN', year: 2024 } },
      { document_id: 'd4', meta_fields: null },
    ];
    const condition = {
      logic: 'and' as const,
      conditions: [
        { name: 'lang', comparison_operator: '=' as const, value: 'en' },
        { name: 'year', comparison_operator: '>' as const, value: '2022' },
      ],
    };
    assert.deepEqual(allowedDocumentIds(docs, condition), ['d3']);
  });
});
