import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { openIndexDatabase } from '../../../src/index/sqlite-database.js';
import { SqliteMemoryIndex } from '../../../src/index/memory-sqlite-index.js';
import type { NewMemoryMessage } from '../../../src/index/memory-types.js';
import { MemoryFullError, fifoOrder, messageSize, planEviction, type FifoCandidate } from '../../../src/memories/size.js';

function open() {
  const db = openIndexDatabase(':memory:');
  return { db, index: new SqliteMemoryIndex(db) };
}

/** A raw message with defaults; `valid_at` defaults to increasing times. */
let clock = 1_000_000;
function msg(fields: Partial<NewMemoryMessage> = {}): NewMemoryMessage {
  return {
    message_type: 'raw',
    source_id: 0,
    user_id: 'u1',
    agent_id: 'a1',
    session_id: 's1',
    content: 'hello',
    vector: [1, 0, 0, 0],
    valid_at: clock++,
    ...fields,
  };
}

const opts = (limit = 1_000_000, extra = {}) => ({ limit, tenantId: 't1', ...extra });

describe('SqliteMemoryIndex', () => {
  it('refuses a connection without sqlite-vec; the schema is idempotent and every table is prefixed memory_', async () => {
    assert.throws(() => new SqliteMemoryIndex(new Database(':memory:')), /sqlite-vec/);
    const { db, index } = open();
    const [id] = (await index.add('m1', [msg()], opts())).messageIds;
    const again = new SqliteMemoryIndex(db);
    assert.equal((await again.get('m1', id!))?.content, 'hello');
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'memory_%' AND name != 'sqlite_sequence'`).all();
    assert.deepEqual(tables, []);
    await index.ping();
  });

  it('message ids are one global integer sequence across memories, never reused after a removal', async () => {
    const { index } = open();
    const a = (await index.add('m1', [msg(), msg()], opts())).messageIds;
    const b = (await index.add('m2', [msg()], opts())).messageIds;
    assert.deepEqual([...a, ...b], [1, 2, 3]);
    await index.remove('m2', b);
    assert.deepEqual((await index.add('m2', [msg()], opts())).messageIds, [4]);
  });

  it('round-trips every field; size = content bytes + dims × 8', async () => {
    const { index } = open();
    const [id] = (await index.add('m1', [msg({ message_type: 'semantic', source_id: 7, content: 'Café', vector: [0.6, 0.8], valid_at: 5000, invalid_at: 9000, user_id: 'u9', agent_id: 'a9', session_id: 's9' })], opts())).messageIds;
    const m = (await index.get('m1', id!))!;
    assert.deepEqual(
      { ...m, create_time: 0, vector: m.vector.map((x) => Math.round(x * 10) / 10) },
      { message_id: id, memory_id: 'm1', tenant_id: 't1', message_type: 'semantic', source_id: 7, user_id: 'u9', agent_id: 'a9', session_id: 's9', content: 'Café', vector: [0.6, 0.8], valid_at: 5000, invalid_at: 9000, forget_at: null, status: true, size: 5 + 16, create_time: 0 },
    );
    assert.equal(await index.get('m2', id!), undefined, 'a message is found only in its own memory');
  });

  it('FIFO removes forgotten messages first (earliest forget_at), then the oldest by valid_at, until the new one fits', async () => {
    const { index } = open();
    const size = messageSize('hello', 4); // 37
    const limit = size * 5;
    const ids = (await index.add('m1', [msg({ valid_at: 500 }), msg({ valid_at: 100 }), msg({ valid_at: 300 }), msg({ valid_at: 200 }), msg({ valid_at: 400 })], opts(limit))).messageIds;
    await index.forget('m1', ids[4]!, 2000);
    await index.forget('m1', ids[0]!, 1000);
    const first = await index.add('m1', [msg()], opts(limit));
    assert.deepEqual(first.evicted, [ids[0]], 'earliest forget_at first');
    const second = await index.add('m1', [msg(), msg()], opts(limit));
    assert.deepEqual(second.evicted, [ids[4], ids[1]], 'the other forgotten one, then the oldest valid_at');
    assert.deepEqual(await index.usage('m1'), { bytes: limit, messages: 5 });
  });

  it('the SQL FIFO order matches fifoOrder and planEviction for random memories', async () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    for (let round = 0; round < 20; round++) {
      const { index } = open();
      const stored: FifoCandidate[] = [];
      for (let i = 0; i < 12; i++) {
        const content = 'x'.repeat(1 + rand(40));
        const [id] = (await index.add('m', [msg({ content, valid_at: rand(50) })], opts())).messageIds;
        const row = (await index.get('m', id!))!;
        stored.push({ message_id: id!, size: row.size, valid_at: row.valid_at, forget_at: null });
      }
      for (const c of stored) if (rand(3) === 0) {
        c.forget_at = rand(20);
        await index.forget('m', c.message_id, c.forget_at);
      }
      const used = stored.reduce((n, c) => n + c.size, 0);
      const incoming = messageSize('y'.repeat(30), 4);
      const limit = used - rand(used / 2);
      const expected = planEviction(used, incoming, limit, [...stored].sort(fifoOrder));
      const got = await index.add('m', [msg({ content: 'y'.repeat(30) })], opts(limit));
      assert.deepEqual(got.evicted, expected, `round ${round}`);
    }
  });

  it('fitWithin applies FIFO to a shrunken memory at once', async () => {
    const { index } = open();
    const ids = (await index.add('m1', [msg(), msg(), msg()], opts())).messageIds;
    const size = messageSize('hello', 4);
    assert.deepEqual(await index.fitWithin('m1', size * 2), [ids[0]]);
    assert.deepEqual(await index.fitWithin('m1', size * 2), []);
    assert.deepEqual(await index.usage('m1'), { bytes: size * 2, messages: 2 });
  });

  it('a message larger than the memory is refused (MemoryFullError) and nothing changes', async () => {
    const { index } = open();
    await index.add('m1', [msg()], opts(100));
    await assert.rejects(index.add('m1', [msg({ content: 'z'.repeat(100) })], opts(100)), MemoryFullError);
    assert.deepEqual(await index.usage('m1'), { bytes: messageSize('hello', 4), messages: 1 });
  });

  it('the stored byte total equals a recount after any sequence of adds, forgets, status changes, FIFO removals and deletes', async () => {
    const { index } = open();
    let seed = 42;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const live = new Map<string, number[]>([['a', []], ['b', []]]);
    for (let step = 0; step < 400; step++) {
      const memory = rand(2) ? 'a' : 'b';
      const ids = live.get(memory)!;
      const op = rand(10);
      if (op < 6) {
        const batch = Array.from({ length: 1 + rand(3) }, () => msg({ content: 'w'.repeat(rand(200)), vector: Array.from({ length: rand(2) ? 4 : 8 }, () => rand(5) - 2) }));
        const res = await index.add(memory, batch, opts(1500 + rand(1500)));
        live.set(memory, [...ids.filter((id) => !res.evicted.includes(id)), ...res.messageIds]);
      } else if (op < 8 && ids.length) {
        await index.forget(memory, ids[rand(ids.length)]!, rand(1000));
      } else if (op < 9 && ids.length) {
        await index.setStatus(memory, ids[rand(ids.length)]!, rand(2) === 0);
      } else if (ids.length) {
        const gone = ids.filter(() => rand(4) === 0);
        assert.equal(await index.remove(memory, gone), gone.length);
        live.set(memory, ids.filter((id) => !gone.includes(id)));
      }
      for (const m of ['a', 'b']) assert.deepEqual(await index.usage(m), await index.recount(m), `step ${step}, memory ${m}`);
    }
    assert.ok((await index.usage('a')).messages > 0);
    await index.deleteMemory('a');
    assert.deepEqual(await index.usage('a'), { bytes: 0, messages: 0 });
    assert.deepEqual(await index.recount('a'), { bytes: 0, messages: 0 });
  });

  it('onceForSource stores the items of a raw message exactly once, even after they were removed by FIFO', async () => {
    const { index } = open();
    const items = [msg({ message_type: 'semantic', source_id: 1, content: 'fact one' }), msg({ message_type: 'episodic', source_id: 1, content: 'event one' })];
    const first = await index.add('m1', items, opts(10_000, { onceForSource: 1 }));
    assert.equal(first.messageIds.length, 2);
    const again = await index.add('m1', items, opts(10_000, { onceForSource: 1 }));
    assert.deepEqual(again, { messageIds: [], evicted: [], alreadyStored: true });
    await index.remove('m1', first.messageIds);
    assert.equal((await index.add('m1', items, opts(10_000, { onceForSource: 1 }))).alreadyStored, true);
    assert.equal((await index.usage('m1')).messages, 0);
    assert.equal((await index.add('m2', items, opts(10_000, { onceForSource: 1 }))).alreadyStored, false, 'per memory');
  });

  it('a dedup_key stores a raw message once per memory and returns the stored id', async () => {
    const { index } = open();
    const [a] = (await index.add('m1', [msg({ dedup_key: 'turn:1' })], opts())).messageIds;
    const [b] = (await index.add('m1', [msg({ dedup_key: 'turn:1' })], opts())).messageIds;
    assert.equal(a, b);
    assert.equal((await index.usage('m1')).messages, 1);
  });

  describe('search', () => {
    async function corpus() {
      const { index } = open();
      const add = async (memory: string, fields: Partial<NewMemoryMessage>) => (await index.add(memory, [msg(fields)], opts())).messageIds[0]!;
      const ids = {
        tea: await add('m1', { content: 'The user drinks green tea every morning', vector: [1, 0, 0, 0] }),
        coffee: await add('m1', { content: 'The user hates coffee', vector: [0, 1, 0, 0], agent_id: 'a2' }),
        teaOther: await add('m1', { content: 'Tea ceremony in Kyoto', vector: [0.9, 0.1, 0, 0], session_id: 's2', user_id: 'u2' }),
        foreign: await add('m2', { content: 'green tea and more tea', vector: [1, 0, 0, 0] }),
        disabled: await add('m1', { content: 'tea is disabled here', vector: [1, 0, 0, 0] }),
        forgotten: await add('m1', { content: 'tea was forgotten', vector: [1, 0, 0, 0] }),
      };
      await index.setStatus('m1', ids.disabled, false);
      await index.forget('m1', ids.forgotten, 5);
      return { index, ids };
    }
    const f = (extra = {}) => ({ memoryIds: ['m1'], ...extra });

    it('full text and vector search return only enabled, not forgotten messages of the given memories', async () => {
      const { index, ids } = await corpus();
      const text = (await index.fullText('tea', f(), 10)).map((h) => h.message_id);
      assert.deepEqual(new Set(text), new Set([ids.tea, ids.teaOther]));
      const vec = (await index.vectorSearch([1, 0, 0, 0], f(), 10)).map((h) => h.message_id);
      assert.deepEqual(vec, [ids.tea, ids.teaOther, ids.coffee]);
      for (const hit of await index.fullText('tea', f(), 10)) assert.ok(hit.score > 0, 'BM25 relevance is positive');
    });

    it('agent, session and user filters', async () => {
      const { index, ids } = await corpus();
      assert.deepEqual((await index.vectorSearch([1, 0, 0, 0], f({ agentId: 'a2' }), 10)).map((h) => h.message_id), [ids.coffee]);
      assert.deepEqual((await index.fullText('tea', f({ sessionId: 's2' }), 10)).map((h) => h.message_id), [ids.teaOther]);
      assert.deepEqual((await index.fullText('tea', f({ userId: 'u1' }), 10)).map((h) => h.message_id), [ids.tea]);
    });

    it('recent: newest first, forgotten hidden, disabled included', async () => {
      const { index, ids } = await corpus();
      const recent = (await index.recent({ memoryIds: ['m1'], limit: 10 })).map((m) => m.message_id);
      assert.deepEqual(recent, [ids.disabled, ids.teaOther, ids.coffee, ids.tea]);
      assert.deepEqual((await index.recent({ memoryIds: ['m1'], limit: 2 })).length, 2);
    });
  });

  it('list: raw messages newest first with their extracted items nested; an item whose raw message is gone is listed on its own', async () => {
    const { index } = open();
    const [raw1] = (await index.add('m1', [msg({ session_id: 'alpha-1' })], opts())).messageIds;
    const [raw2] = (await index.add('m1', [msg({ session_id: 'beta-2', agent_id: 'a2' })], opts())).messageIds;
    const items = (await index.add('m1', [msg({ message_type: 'semantic', source_id: raw1! }), msg({ message_type: 'procedural', source_id: raw1! })], opts())).messageIds;
    const page = await index.list('m1', { page: 1, pageSize: 10 });
    assert.equal(page.total, 2);
    assert.deepEqual(page.messages.map((m) => m.message_id), [raw2, raw1]);
    assert.deepEqual(page.extracted.get(raw1!)!.map((m) => m.message_id), items);
    assert.deepEqual((await index.list('m1', { page: 1, pageSize: 10, agentIds: ['a2'] })).messages.map((m) => m.message_id), [raw2]);
    assert.deepEqual((await index.list('m1', { page: 1, pageSize: 10, sessionKeywords: 'ALPHA' })).messages.map((m) => m.message_id), [raw1]);
    assert.deepEqual((await index.list('m1', { page: 2, pageSize: 1 })).messages.map((m) => m.message_id), [raw1]);
    await index.remove('m1', [raw1!]);
    const orphans = await index.list('m1', { page: 1, pageSize: 10 });
    assert.equal(orphans.total, 3);
    assert.deepEqual(new Set(orphans.messages.map((m) => m.message_id)), new Set([raw2, ...items]));
  });
});
