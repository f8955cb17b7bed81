import assert from 'node:assert/strict';
import { openIndexDatabase } from '../../../src/index/sqlite-database.js';
import { SqliteMemoryIndex } from '../../../src/index/memories/sqlite-memory-index.js';
import type { MemoryType, NewMemoryMessage } from '../../../src/index/memories/memory-index.js';
import { searchMessages } from '../../../src/memories/search.js';
import { parseApiTime, searchScope } from '../../../src/memories/search-scope.js';
import { ApiError } from '../../../src/errors.js';

const DAY = 86_400_000;

describe('memories: search scope (dates and message types)', () => {
  it('times are Unix seconds or ISO 8601; a date alone is the whole UTC day; anything else is a 400 naming the field', () => {
    assert.equal(parseApiTime(1_700_000_000, 'valid_at'), 1_700_000_000_000);
    assert.equal(parseApiTime('1700000000', 'valid_at'), 1_700_000_000_000);
    assert.equal(parseApiTime('2024-03-02T10:00:00Z', 'valid_at'), Date.UTC(2024, 2, 2, 10));
    assert.equal(parseApiTime('2024-03-02T10:00:00', 'valid_at'), Date.UTC(2024, 2, 2, 10), 'no zone: UTC');
    assert.equal(parseApiTime('2024-03-02T10:00:00+02:00', 'valid_at'), Date.UTC(2024, 2, 2, 8));
    assert.equal(parseApiTime('2024-03-02', 'valid_since'), Date.UTC(2024, 2, 2));
    assert.equal(parseApiTime('2024-03-02', 'valid_until', 'end'), Date.UTC(2024, 2, 3) - 1);
    for (const bad of ['tomorrow', '', -1, Number.NaN, 1e15, '2024-13-45', true, null]) {
      assert.throws(() => parseApiTime(bad, 'valid_at'), (e: unknown) => e instanceof ApiError && e.status === 400 && /`valid_at`/.test(e.message), String(bad));
    }
  });

  it('a range running backwards and an unknown type are 400s; empty parameters narrow nothing', () => {
    assert.throws(() => searchScope({ valid_since: '2024-05-01', valid_until: '2024-04-01' }), /must not be after/);
    assert.throws(() => searchScope({ message_type: ['raw', 'dream'] }), /'dream' is not supported/);
    assert.deepEqual(searchScope({ valid_since: '', message_type: [] }), {});
  });

  it('with a scope, the best top_n in scope are returned even when better matches fall outside it', async () => {
    const index = new SqliteMemoryIndex(openIndexDatabase(':memory:'));
    const add = async (content: string, type: MemoryType, day: number) => {
      const m: NewMemoryMessage = { message_type: type, source_id: 0, user_id: 'u', agent_id: 'a', session_id: 's', content, vector: [1, 0], valid_at: Date.UTC(2024, 0, 1) + day * DAY };
      return (await index.add('m1', [m], { limit: 1e9, tenantId: 't' })).messageIds[0]!;
    };
    // 100 strong matches in January, three weaker ones in March: the March ones rank below all January ones.
    for (let i = 0; i < 100; i++) await add(`kayak trip kayak paddle kayak ${i}`, 'raw', i % 28);
    const march = [await add('a kayak in march', 'raw', 70), await add('kayak rental in march', 'raw', 75), await add('kayak march again', 'semantic', 80)];
    const search = (scope: object, top_n = 10) =>
      searchMessages({ query: 'kayak', filter: { memoryIds: ['m1'] }, similarity_threshold: 0, keywords_similarity_weight: 1, top_n, scope }, { index, embedQuery: async () => [1, 0] });
    const unscoped = await search({});
    assert.ok(unscoped.every((h) => !march.includes(h.message.message_id)), 'without a scope the January matches win');
    const scoped = await search({ validSince: Date.UTC(2024, 2, 1), validUntil: Date.UTC(2024, 2, 31) });
    assert.deepEqual(scoped.map((h) => h.message.message_id).sort(), [...march].sort());
    const rawInMarch = await search({ validSince: Date.UTC(2024, 2, 1), messageTypes: ['raw'] }, 1);
    assert.equal(rawInMarch.length, 1);
    assert.ok(march.slice(0, 2).includes(rawInMarch[0]!.message.message_id));
    const itemsOnly = await search({ messageTypes: ['semantic'] });
    assert.deepEqual(itemsOnly.map((h) => h.message.message_id), [march[2]]);
  });
});
