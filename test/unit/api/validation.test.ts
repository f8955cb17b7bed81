import assert from 'node:assert/strict';
import { validateBody, validateQuery } from '../../../src/api/validation.js';
import { ApiError } from '../../../src/errors.js';
import { safeJson } from '../../../src/api/envelope.js';

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', maxLength: 5 },
    permission: { enum: ['me', 'team'] },
    pagerank: { type: 'integer', minimum: 0, maximum: 100 },
    nested: { type: 'object', properties: { size: { type: 'integer' } } },
  },
};

function rejects(fn: () => unknown, pattern: RegExp) {
  assert.throws(fn, (err: unknown) => err instanceof ApiError && err.status === 400 && pattern.test(err.message));
}

describe('request validation', () => {
  it('accepts a valid body', () => {
    assert.deepEqual(validateBody(schema, { name: 'abc', permission: 'me' }), { name: 'abc', permission: 'me' });
  });

  it('names a missing required field', () => rejects(() => validateBody(schema, {}), /`name` is required/));
  it('names a field of the wrong type', () => rejects(() => validateBody(schema, { name: 1 }), /`name` must be a string/));
  it('names a field over its limit', () => rejects(() => validateBody(schema, { name: 'toolong' }), /`name` must NOT have more than 5 characters/));
  it('lists the allowed values of an enum', () => rejects(() => validateBody(schema, { name: 'a', permission: 'all' }), /`permission` must be one of "me", "team"/));
  it('names an unknown field', () => rejects(() => validateBody(schema, { name: 'a', colour: 'red' }), /`colour` is not an accepted field/));
  it('names a nested field by its path', () => rejects(() => validateBody(schema, { name: 'a', nested: { size: 'big' } }), /`nested.size` must be an integer/));
  it('rejects a body that is not an object', () => rejects(() => validateBody(schema, [1, 2]), /body must be an object/));

  it('uses the given envelope code for a failed body (chunk update: 1002)', () => {
    assert.throws(() => validateBody(schema, {}, 1002), (err: unknown) => err instanceof ApiError && err.status === 400 && err.code === 1002);
  });

  it('coerces query strings, including Python-style True/False', () => {
    const q = validateQuery<{ page: number; desc: boolean }>(
      { type: 'object', properties: { page: { type: 'integer', default: 1 }, desc: { type: 'boolean', default: true } } },
      { page: '3', desc: 'False' },
    );
    assert.deepEqual(q, { page: 3, desc: false });
  });

  it('fills query defaults', () => {
    const q = validateQuery({ type: 'object', properties: { page_size: { type: 'integer', default: 30 } } }, {});
    assert.deepEqual(q, { page_size: 30 });
  });

  it('rejects a query value out of range', () =>
    rejects(() => validateQuery({ type: 'object', properties: { top_k: { type: 'integer', maximum: 100 } } }, { top_k: '101' }), /`top_k` must be <= 100/));

  // issue 15 item 4 (RAGFlow leniency): paging is clamped and 0 means the default, booleans take yes/no/1/0.
  const paging = { type: 'object', properties: { page: { type: 'integer', minimum: 1, default: 1 }, page_size: { type: 'integer', minimum: 1, maximum: 100, default: 30 }, desc: { type: 'boolean', default: true }, id: { type: 'string', pattern: '^[0-9a-f]{32}$' } } };
  it('clamps page_size above the cap to the cap', () => assert.deepEqual(validateQuery(paging, { page_size: '1000' }), { page_size: 100, page: 1, desc: true }));
  it('treats page=0 and page_size=0 as the defaults', () => assert.deepEqual(validateQuery(paging, { page: '0', page_size: 0 }), { page: 1, page_size: 30, desc: true }));
  it('reads yes/no/1/0 as query booleans', () => {
    for (const [word, value] of [['yes', true], ['NO', false], ['1', true], ['0', false]] as const) assert.equal(validateQuery<{ desc: boolean }>(paging, { desc: word }).desc, value);
  });
  it('treats an empty id filter as no filter', () => assert.equal(validateQuery<{ id?: string }>(paging, { id: '' }).id, undefined));
});

describe('JSON envelope', () => {
  it('never writes NaN or Infinity', () => {
    assert.equal(safeJson({ a: NaN, b: Infinity, c: -Infinity, d: 0.5 }), '{"a":0,"b":0,"c":0,"d":0.5}');
  });
});
