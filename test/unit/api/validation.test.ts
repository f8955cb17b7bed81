import assert from 'node:assert/strict';
import { validateBody, validateQuery } from '../../../src/api/validation.js';
import { ApiError } from '../../../src/errors.js';
import type { Response } from 'express';
import { MAX_ERROR_MESSAGE, safeJson, sendError } from '../../../src/api/envelope.js';
import { MAX_PAGE, MAX_PAGE_SIZE_GIVEN, pagingParams } from '../../../src/api/schemas.js';
import { partialReply } from '../../../src/api/partial.js';
import { Reply } from '../../../src/api/routes.js';

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
  const paging = { type: 'object', properties: { ...pagingParams(), desc: { type: 'boolean', default: true }, id: { type: 'string', pattern: '^[0-9a-f]{32}$' } } };
  it('clamps page_size above the cap to the cap', () => assert.deepEqual(validateQuery(paging, { page_size: '1000' }), { page_size: 100, page: 1, desc: true }));
  it('treats page=0 and page_size=0 as the defaults', () => assert.deepEqual(validateQuery(paging, { page: '0', page_size: 0 }), { page: 1, page_size: 30, desc: true }));
  it('reads yes/no/1/0 as query booleans', () => {
    for (const [word, value] of [['yes', true], ['NO', false], ['1', true], ['0', false]] as const) assert.equal(validateQuery<{ desc: boolean }>(paging, { desc: word }).desc, value);
  });
  it('treats an empty id filter as no filter', () => assert.equal(validateQuery<{ id?: string }>(paging, { id: '' }).id, undefined));

  // issue 19 part 4: numbers beyond safe ranges are a 400 naming the field, never an offset SQLite refuses.
  it('refuses page=1e30 naming page and its range', () =>
    rejects(() => validateQuery(paging, { page: '1e30' }), new RegExp(`^\`page\` must be an integer between 0 and ${MAX_PAGE}$`)));
  it('refuses a negative page and a page_size beyond the safe range', () => {
    rejects(() => validateQuery(paging, { page: '-1' }), /`page` must be an integer between 0 and/);
    rejects(() => validateQuery(paging, { page_size: String(MAX_PAGE_SIZE_GIVEN + 1) }), /`page_size` must be an integer between 0 and/);
    rejects(() => validateQuery(paging, { page_size: '1e30' }), /`page_size`/);
  });
  it('still clamps the largest page_size in the safe range to the cap', () => assert.equal(validateQuery<{ page_size: number }>(paging, { page_size: String(MAX_PAGE_SIZE_GIVEN) }).page_size, 100));
  it('refuses a body integer beyond its range naming the field and the range', () =>
    rejects(() => validateBody({ type: 'object', properties: { top_k: { type: 'integer', minimum: 1, maximum: 10000 } } }, { top_k: 1e30 }), /^`top_k` must be an integer between 1 and 10000$/));
});

describe('short error messages (issue 19 part 4)', () => {
  const ids = { type: 'object', properties: { ids: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 32 } } } };

  it('names the first three fields at fault and counts the rest', () => {
    const schema = { type: 'object', additionalProperties: false, properties: {} };
    const body = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]));
    assert.throws(() => validateBody(schema, body), (err: unknown) => {
      const message = (err as ApiError).message;
      assert.match(message, /^`k0` is not an accepted field; `k1` is not an accepted field; `k2` is not an accepted field … and 19,997 more$/);
      return true;
    });
  });

  it('keeps the message of a list of 20,000 bad ids short, its size rule first', () => {
    assert.throws(() => validateBody(ids, { ids: Array.from({ length: 20_000 }, (_, i) => i) }), (err: unknown) => {
      const message = (err as ApiError).message;
      assert.match(message, /^`ids` must NOT have more than 10 items; `ids\.0` must be a string; `ids\.1` must be a string … and 19,998 more$/);
      return true;
    });
  });

  it('tells a value that matches no alternative as the first alternative tells it, once', () => {
    const schema = { type: 'object', properties: { pages: { anyOf: [{ type: 'array', items: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 9 } } }, { type: 'null' }] } } };
    rejects(() => validateBody(schema, { pages: [['1', 2]] }), /^`pages\.0\.0` must be an integer between 0 and 9$/);
  });

  it('lists the first few failures of a partial batch delete and counts the rest', () => {
    const errors = Array.from({ length: 20_000 }, (_, i) => `Invalid Chunk ID: ${String(i).padStart(32, '0')}`);
    const reply = partialReply({ success_count: 3, errors }, 'chunks', null) as Reply;
    const data = reply.data as { errors: string[]; success_count: number };
    assert.equal(data.success_count, 3);
    assert.deepEqual(data.errors.slice(0, 5), errors.slice(0, 5));
    assert.equal(data.errors[5], '… and 19,995 more');
    assert.equal(data.errors.length, 6);
    assert.equal(reply.extra.message, 'Partially deleted 3 chunks with 20000 errors');
  });
});

describe('JSON envelope', () => {
  it('never writes NaN or Infinity', () => {
    assert.equal(safeJson({ a: NaN, b: Infinity, c: -Infinity, d: 0.5 }), '{"a":0,"b":0,"c":0,"d":0.5}');
  });

  it(`cuts an error message to ${MAX_ERROR_MESSAGE} characters, saying how long it was`, () => {
    let sent = '';
    const res = { status: () => res, type: () => res, send: (body: string) => void (sent = body) } as unknown as Response;
    sendError(res, 404, 1001, `Invalid Chunk ID: ${'x'.repeat(700_000)}`);
    const body = JSON.parse(sent);
    assert.equal(body.code, 1001);
    assert.ok(body.message.length <= MAX_ERROR_MESSAGE, String(body.message.length));
    assert.match(body.message, /^Invalid Chunk ID: x+ … \(cut: 700,018 characters in all\)$/);
  });
});
