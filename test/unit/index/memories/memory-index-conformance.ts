/**
 * The MemoryIndex port's contract, one suite for every implementation: `memoryIndexConformance(name, open)`
 * registers it for a factory that gives a new, empty index (its own id sequence) at each call. Vectors
 * are compared to one decimal (both implementations keep float32), BM25 scores only by order and sign.
 */
import assert from 'node:assert/strict';
import type { MemoryIndex, MemoryMessage, NewMemoryMessage } from '../../../../src/index/memories/memory-index.js';
import { MemoryFullError, fifoOrder, messageSize, planEviction, type FifoCandidate } from '../../../../src/memories/size.js';

/** A raw message with defaults; `valid_at` defaults to increasing times. */
let clock = 1_000_000;
export function msg(fields: Partial<NewMemoryMessage> = {}): NewMemoryMessage {
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

export const opts = (limit = 1_000_000, extra = {}) => ({ limit, tenantId: 't1', ...extra });

/** Every message of a memory as the port lists it (top level and extracted), by id. */
async function allMessages(index: MemoryIndex, memoryId: string): Promise<MemoryMessage[]> {
  const { messages, extracted } = await index.list(memoryId, { page: 1, pageSize: 1000 });
  return [...messages, ...[...extracted.values()].flat()].sort((a, b) => a.message_id - b.message_id);
}

export interface ConformanceOptions {
  /** Steps of the random add/forget/status/remove walk that checks the size total (each one checks usage = recount). */
  randomSteps?: number;
  /** Random memories whose FIFO plan is compared with planEviction. */
  fifoRounds?: number;
}

export function memoryIndexConformance(name: string, open: () => Promise<MemoryIndex>, options: ConformanceOptions = {}): void {
  describe(`${name}: the MemoryIndex contract`, () => {
    it('answers ping', async () => {
      await (await open()).ping();
    });

    it('message ids are one global integer sequence across memories, never reused after a removal', async () => {
      const index = await open();
      const a = (await index.add('m1', [msg(), msg()], opts())).messageIds;
      const b = (await index.add('m2', [msg()], opts())).messageIds;
      assert.deepEqual([...a, ...b], [1, 2, 3]);
      await index.remove('m2', b);
      assert.deepEqual((await index.add('m2', [msg()], opts())).messageIds, [4]);
    });

    it('round-trips every field; size = content bytes + dims × 8', async () => {
      const index = await open();
      const [id] = (await index.add('m1', [msg({ message_type: 'semantic', source_id: 7, content: 'Café', vector: [0.6, 0.8], valid_at: 5000, invalid_at: 9000, user_id: 'u9', agent_id: 'a9', session_id: 's9' })], opts())).messageIds;
      const m = (await index.get('m1', id!))!;
      assert.deepEqual(
        { ...m, create_time: 0, vector: m.vector.map((x) => Math.round(x * 10) / 10) },
        { message_id: id, memory_id: 'm1', tenant_id: 't1', message_type: 'semantic', source_id: 7, user_id: 'u9', agent_id: 'a9', session_id: 's9', content: 'Café', vector: [0.6, 0.8], valid_at: 5000, invalid_at: 9000, replaced_by: null, forget_at: null, status: true, size: 5 + 16, create_time: 0 },
      );
      assert.ok(Math.abs(m.create_time - Date.now()) < 60_000, 'create_time is the time of the add, in ms');
      assert.equal(await index.get('m2', id!), undefined, 'a message is found only in its own memory');
      assert.deepEqual((await index.getMany([id!, 999, id!])).map((x) => x.message_id), [id, id], 'getMany keeps the order asked, skips unknown ids');
    });

    it('invalidate sets invalid_at (an earlier one kept) and replaced_by; currentAt filters search and recent; itemsOf lists a source\'s items', async () => {
      const index = await open();
      const [raw] = (await index.add('m1', [msg({ content: 'raw turn about boats' })], opts())).messageIds;
      const [a, b] = (await index.add('m1', [msg({ message_type: 'semantic', source_id: raw!, content: 'boats are red' }), msg({ message_type: 'semantic', source_id: raw!, content: 'boats are blue' })], opts())).messageIds;
      assert.deepEqual((await index.itemsOf('m1', [raw!])).map((m) => m.message_id), [a, b]);
      const [raw2] = (await index.add('m1', [msg({ content: 'raw turn about cars' })], opts())).messageIds;
      const [c] = (await index.add('m1', [msg({ message_type: 'semantic', source_id: raw2!, content: 'cars are fast' })], opts())).messageIds;
      assert.deepEqual((await index.itemsOf('m1', [raw2!, raw!, 999_999])).map((m) => m.message_id), [a, b, c], 'several sources at once, by source');
      assert.deepEqual(await index.itemsOf('m1', []), []);
      assert.deepEqual(await index.itemsOf('m2', [raw!]), [], 'only within the memory');
      assert.equal(await index.invalidate('m1', a!, 1000, b!), true);
      assert.equal(await index.invalidate('m1', a!, 2000, b!), true);
      const old = (await index.get('m1', a!))!;
      assert.deepEqual([old.invalid_at, old.replaced_by], [1000, b], 'the earlier invalid_at is kept');
      assert.equal(await index.invalidate('m1', 999_999, 1000, null), false);
      const current = await index.fullText('boats', { memoryIds: ['m1'], currentAt: 1500 }, 10);
      assert.ok(!current.some((h) => h.message_id === a) && current.some((h) => h.message_id === b));
      assert.ok((await index.fullText('boats', { memoryIds: ['m1'] }, 10)).some((h) => h.message_id === a), 'no currentAt: the history too');
      assert.ok((await index.fullText('boats', { memoryIds: ['m1'], currentAt: 500 }, 10)).some((h) => h.message_id === a), 'invalid only from invalid_at on');
      assert.ok(!(await index.recent({ memoryIds: ['m1'], currentAt: 1500, limit: 10 })).some((m) => m.message_id === a));
    });

    it('FIFO removes forgotten messages first (earliest forget_at), then the oldest by valid_at, until the new one fits', async () => {
      const index = await open();
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
      assert.equal(await index.get('m1', ids[1]!), undefined, 'an evicted message is gone');
    });

    it('the FIFO order matches fifoOrder and planEviction for random memories', async () => {
      const index = await open();
      let seed = 7;
      const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
      for (let round = 0; round < (options.fifoRounds ?? 20); round++) {
        const memory = `m${round}`;
        const stored: FifoCandidate[] = [];
        for (let i = 0; i < 12; i++) {
          const content = 'x'.repeat(1 + rand(40));
          const [id] = (await index.add(memory, [msg({ content, valid_at: rand(50) })], opts())).messageIds;
          const row = (await index.get(memory, id!))!;
          stored.push({ message_id: id!, size: row.size, valid_at: row.valid_at, forget_at: null });
        }
        for (const c of stored) if (rand(3) === 0) {
          c.forget_at = rand(20);
          await index.forget(memory, c.message_id, c.forget_at);
        }
        const used = stored.reduce((n, c) => n + c.size, 0);
        const incoming = messageSize('y'.repeat(30), 4);
        const limit = used - rand(used / 2);
        const expected = planEviction(used, incoming, limit, [...stored].sort(fifoOrder));
        const got = await index.add(memory, [msg({ content: 'y'.repeat(30) })], opts(limit));
        assert.deepEqual(got.evicted, expected, `round ${round}`);
      }
    });

    it('fitWithin applies FIFO to a shrunken memory at once', async () => {
      const index = await open();
      const ids = (await index.add('m1', [msg(), msg(), msg()], opts())).messageIds;
      const size = messageSize('hello', 4);
      assert.deepEqual(await index.fitWithin('m1', size * 2), [ids[0]]);
      assert.deepEqual(await index.fitWithin('m1', size * 2), []);
      assert.deepEqual(await index.usage('m1'), { bytes: size * 2, messages: 2 });
    });

    it('a message larger than the memory is refused (MemoryFullError) and nothing changes', async () => {
      const index = await open();
      await index.add('m1', [msg()], opts(100));
      await assert.rejects(index.add('m1', [msg({ content: 'z'.repeat(100) })], opts(100)), MemoryFullError);
      assert.deepEqual(await index.usage('m1'), { bytes: messageSize('hello', 4), messages: 1 });
    });

    it('the stored byte total equals a recount after any sequence of adds, forgets, status changes, FIFO removals and deletes', async () => {
      const index = await open();
      let seed = 42;
      const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
      const live = new Map<string, number[]>([['a', []], ['b', []]]);
      const steps = options.randomSteps ?? 400;
      for (let step = 0; step < steps; step++) {
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
      assert.equal(await index.deleteMemory('a'), live.get('a')!.length, 'deleteMemory counts the messages it removed');
      assert.deepEqual(await index.usage('a'), { bytes: 0, messages: 0 });
      assert.deepEqual(await index.recount('a'), { bytes: 0, messages: 0 });
      assert.deepEqual(await index.fullText('w', { memoryIds: ['a'] }, 10), []);
      assert.deepEqual(await index.vectorSearch([1, 1, 1, 1], { memoryIds: ['a'] }, 10), []);
    });

    it('onceForSource stores the items of a raw message exactly once, even after they were removed by FIFO', async () => {
      const index = await open();
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
      const index = await open();
      const [a] = (await index.add('m1', [msg({ dedup_key: 'turn:1' })], opts())).messageIds;
      const [b] = (await index.add('m1', [msg({ dedup_key: 'turn:1' })], opts())).messageIds;
      assert.equal(a, b);
      assert.equal((await index.usage('m1')).messages, 1);
      const [c] = (await index.add('m2', [msg({ dedup_key: 'turn:1' })], opts())).messageIds;
      assert.notEqual(c, a, 'per memory');
    });

    describe('search', () => {
      let built: Promise<{ index: MemoryIndex; ids: Record<string, number> }> | undefined;
      /** One corpus for the read-only search tests. */
      const corpus = () => (built ??= (async () => {
        const index = await open();
        const add = async (memory: string, fields: Partial<NewMemoryMessage>) => (await index.add(memory, [msg(fields)], opts())).messageIds[0]!;
        const ids = {
          tea: await add('m1', { content: 'The user drinks green tea every morning', vector: [1, 0, 0, 0] }),
          coffee: await add('m1', { content: 'The user hates coffee', vector: [0, 1, 0, 0], agent_id: 'a2' }),
          teaOther: await add('m1', { content: 'Tea ceremony in Kyoto', vector: [0.9, 0.1, 0, 0], session_id: 's2', user_id: 'u2' }),
          foreign: await add('m2', { content: 'green tea and more tea', vector: [1, 0, 0, 0] }),
          disabled: await add('m1', { content: 'tea is disabled here', vector: [1, 0, 0, 0] }),
          forgotten: await add('m1', { content: 'tea was forgotten', vector: [1, 0, 0, 0] }),
          running: await add('m1', { content: 'She was running marathons', vector: [0, 0, 1, 0] }),
          zero: await add('m1', { content: 'a message with a zero vector', vector: [0, 0, 0, 0] }),
          short: await add('m1', { content: 'a message with another dimension', vector: [1, 0] }),
        };
        await index.setStatus('m1', ids.disabled, false);
        await index.forget('m1', ids.forgotten, 5);
        return { index, ids };
      })());
      const f = (extra = {}) => ({ memoryIds: ['m1'], ...extra });

      it('full text and vector search return only enabled, not forgotten messages of the given memories', async () => {
        const { index, ids } = await corpus();
        const text = (await index.fullText('tea', f(), 10)).map((h) => h.message_id);
        assert.deepEqual(new Set(text), new Set([ids.tea, ids.teaOther]));
        const vec = (await index.vectorSearch([1, 0, 0, 0], f(), 10)).map((h) => h.message_id);
        assert.deepEqual(vec.slice(0, 2), [ids.tea, ids.teaOther]);
        assert.deepEqual(new Set(vec), new Set([ids.tea, ids.teaOther, ids.coffee, ids.running]), 'orthogonal vectors too (cosine 0)');
        for (const hit of await index.fullText('tea', f(), 10)) assert.ok(hit.score > 0, 'BM25 relevance is positive');
        assert.deepEqual((await index.fullText('tea', { memoryIds: ['m1', 'm2'] }, 10)).length, 3, 'several memories at once');
        assert.deepEqual(await index.fullText('tea', { memoryIds: [] }, 10), []);
      });

      it('full text matches inflections and ignores stopword-only and syntax-laden questions', async () => {
        const { index, ids } = await corpus();
        assert.deepEqual((await index.fullText('runs', f(), 10)).map((h) => h.message_id), [ids.running]);
        assert.deepEqual(await index.fullText('the and of', f(), 10), []);
        assert.deepEqual((await index.fullText('"coffee" OR (NEAR*', f(), 10)).map((h) => h.message_id), [ids.coffee]);
        assert.equal((await index.fullText('tea', f(), 1)).length, 1, 'limit');
      });

      it('vector search: cosine scores, limit, only vectors of the same dimension, zero vectors never found', async () => {
        const { index, ids } = await corpus();
        const hits = await index.vectorSearch([1, 0, 0, 0], f(), 2);
        assert.deepEqual(hits.map((h) => [h.message_id, Math.round(h.score * 1e4) / 1e4]), [[ids.tea, 1], [ids.teaOther, Math.round((0.9 / Math.hypot(0.9, 0.1)) * 1e4) / 1e4]]);
        assert.deepEqual((await index.vectorSearch([1, 0], f(), 10)).map((h) => h.message_id), [ids.short]);
        assert.ok(!(await index.vectorSearch([0, 0, 0, 1], f(), 10)).some((h) => h.message_id === ids.zero));
        assert.deepEqual(await index.vectorSearch([0, 0, 0, 0], f(), 10), []);
        assert.deepEqual(await index.vectorSearch([1, 0, 0, 0, 0, 0], f(), 10), [], 'no message has that dimension');
      });

      it('cosineSimilarities: of the given ids with a vector of that dimension, zero vectors absent', async () => {
        const { index, ids } = await corpus();
        const cos = await index.cosineSimilarities([ids.tea, ids.coffee, ids.zero, ids.short, ids.disabled, 999], [1, 0, 0, 0]);
        assert.deepEqual([...cos.keys()].sort((a, b) => a - b), [ids.tea, ids.coffee, ids.disabled].sort((a, b) => a - b));
        assert.ok(Math.abs(cos.get(ids.tea)! - 1) < 1e-6 && Math.abs(cos.get(ids.coffee)!) < 1e-6);
      });

      it('agent, session and user filters', async () => {
        const { index, ids } = await corpus();
        assert.deepEqual((await index.vectorSearch([1, 0, 0, 0], f({ agentId: 'a2' }), 10)).map((h) => h.message_id), [ids.coffee]);
        assert.deepEqual((await index.fullText('tea', f({ sessionId: 's2' }), 10)).map((h) => h.message_id), [ids.teaOther]);
        assert.deepEqual((await index.fullText('tea', f({ userId: 'u1' }), 10)).map((h) => h.message_id), [ids.tea]);
        assert.deepEqual(await index.fullText('tea', f({ userId: 'nobody' }), 10), []);
      });

      it('recent: newest first, forgotten hidden, disabled included', async () => {
        const { index, ids } = await corpus();
        const recent = (await index.recent({ memoryIds: ['m1'], limit: 10 })).map((m) => m.message_id);
        assert.deepEqual(recent, [ids.short, ids.zero, ids.running, ids.disabled, ids.teaOther, ids.coffee, ids.tea]);
        assert.deepEqual((await index.recent({ memoryIds: ['m1'], limit: 2 })).length, 2);
        assert.deepEqual((await index.recent({ memoryIds: ['m1'], limit: 10, agentId: 'a2' })).map((m) => m.message_id), [ids.coffee]);
      });
    });

    it('a search within one memory examines only that memory\'s rows, however many other memories hold', async () => {
      const index = await open();
      const small = (await index.add('small', Array.from({ length: 4 }, (_, i) => msg({ content: `green tea note ${i}`, vector: [1, 0, 0, i] })), opts())).messageIds;
      for (let k = 0; k < 3; k++) {
        await index.add(`big${k}`, Array.from({ length: 100 }, (_, i) => msg({ content: `green tea leaf ${i}`, vector: [1, 0, 0, i] })), opts());
      }
      const before = index.scans.examined;
      const text = await index.fullText('green tea', { memoryIds: ['small'] }, 10);
      const vec = await index.vectorSearch([1, 0, 0, 0], { memoryIds: ['small'] }, 10);
      assert.deepEqual(new Set(text.map((h) => h.message_id)), new Set(small));
      assert.deepEqual(new Set(vec.map((h) => h.message_id)), new Set(small));
      const examined = index.scans.examined - before;
      assert.ok(examined > 0 && examined <= 2 * small.length, `examined ${examined} rows for a memory of ${small.length} among 300 others`);
      const wide = index.scans.examined;
      await index.fullText('green tea', { memoryIds: ['small', 'big0', 'big1', 'big2'] }, 10);
      assert.ok(index.scans.examined - wide >= 10, 'a search of every memory examines (and counts) more rows');
    });

    it('search follows status and forget changes at once', async () => {
      const index = await open();
      const [id] = (await index.add('m1', [msg({ content: 'granite boulder' })], opts())).messageIds;
      const found = async () => (await index.fullText('granite', { memoryIds: ['m1'] }, 5)).map((h) => h.message_id);
      assert.deepEqual(await found(), [id]);
      assert.equal(await index.setStatus('m1', id!, false), true);
      assert.deepEqual(await found(), []);
      assert.equal(await index.setStatus('m1', id!, true), true);
      assert.deepEqual((await index.vectorSearch([1, 0, 0, 0], { memoryIds: ['m1'] }, 5)).map((h) => h.message_id), [id]);
      assert.equal(await index.forget('m1', id!, 10), true);
      assert.equal(await index.forget('m1', id!, 20), true, 'forgetting twice keeps the first forget_at');
      assert.equal((await index.get('m1', id!))?.forget_at, 10);
      assert.deepEqual(await found(), []);
      assert.equal(await index.setStatus('m1', 999, true), false);
      assert.equal(await index.forget('m1', 999, 1), false);
      assert.equal(await index.remove('m1', [id!, 999]), 1);
      assert.deepEqual(await index.vectorSearch([1, 0, 0, 0], { memoryIds: ['m1'] }, 5), []);
    });

    it('list: raw messages newest first with their extracted items nested; an item whose raw message is gone is listed on its own', async () => {
      const index = await open();
      const [raw1] = (await index.add('m1', [msg({ session_id: 'alpha-1' })], opts())).messageIds;
      const [raw2] = (await index.add('m1', [msg({ session_id: 'beta-2', agent_id: 'a2' })], opts())).messageIds;
      const items = (await index.add('m1', [msg({ message_type: 'semantic', source_id: raw1! }), msg({ message_type: 'procedural', source_id: raw1! })], opts())).messageIds;
      const page = await index.list('m1', { page: 1, pageSize: 10 });
      assert.equal(page.total, 2);
      assert.deepEqual(page.messages.map((m) => m.message_id), [raw2, raw1]);
      assert.deepEqual(page.extracted.get(raw1!)!.map((m) => m.message_id), items);
      assert.deepEqual((await index.list('m1', { page: 1, pageSize: 10, agentIds: ['a2'] })).messages.map((m) => m.message_id), [raw2]);
      assert.deepEqual((await index.list('m1', { page: 1, pageSize: 10, sessionKeywords: 'ALPHA' })).messages.map((m) => m.message_id), [raw1]);
      assert.deepEqual((await index.list('m1', { page: 1, pageSize: 10, sessionKeywords: '%' })).messages, [], 'LIKE characters match literally');
      assert.deepEqual((await index.list('m1', { page: 2, pageSize: 1 })).messages.map((m) => m.message_id), [raw1]);
      await index.remove('m1', [raw1!]);
      const orphans = await index.list('m1', { page: 1, pageSize: 10 });
      assert.equal(orphans.total, 3);
      assert.deepEqual(new Set(orphans.messages.map((m) => m.message_id)), new Set([raw2, ...items]));
    });

    describe('importMessages (moving memories between indexes)', () => {
      const newMessage = (content: string, fields: Partial<NewMemoryMessage> = {}): NewMemoryMessage => ({
        message_type: 'raw', source_id: 0, user_id: 'u1', agent_id: 'a1', session_id: 's1', content, vector: [0.6, 0.8], valid_at: 1000, ...fields,
      });
      const limits = { limit: 1_000_000, tenantId: 't1' };

      it('keeps ids, sizes, times, status, forget_at and extracted items; the total equals a recount; search finds them', async () => {
        const source = await open();
        const [raw] = (await source.add('m1', [newMessage('the granite cairn on the ridge')], limits)).messageIds;
        await source.add('m1', [newMessage('cairns mark trails', { message_type: 'semantic', source_id: raw!, valid_at: 2000 })], { ...limits, onceForSource: raw! });
        const [forgotten] = (await source.add('m1', [newMessage('an old fact about moors', { valid_at: 500 })], limits)).messageIds;
        await source.forget('m1', forgotten!, 9999);
        await source.setStatus('m1', raw!, false);
        const messages = await allMessages(source, 'm1');
        assert.equal(messages.length, 3);

        const target = await open();
        await target.importMessages('m1', messages);
        assert.deepEqual(await allMessages(target, 'm1'), messages);
        assert.deepEqual(await target.usage('m1'), await source.recount('m1'));
        assert.deepEqual(await target.recount('m1'), await source.recount('m1'));
        const hits = await target.fullText('cairns trails', { memoryIds: ['m1'] }, 10);
        assert.deepEqual(hits.map((h) => h.message_id), [raw! + 1], 'the disabled raw message and the forgotten one are not searchable, as before');
        assert.deepEqual((await target.vectorSearch([0.6, 0.8], { memoryIds: ['m1'] }, 10)).map((h) => h.message_id), [raw! + 1]);
      });

      it('a second import of the same messages changes nothing (a rerun after a failure)', async () => {
        const source = await open();
        await source.add('m1', [newMessage('one'), newMessage('two')], limits);
        const messages = await allMessages(source, 'm1');
        const target = await open();
        await target.importMessages('m1', messages);
        await target.importMessages('m1', messages);
        assert.deepEqual(await allMessages(target, 'm1'), messages);
        assert.deepEqual(await target.usage('m1'), { bytes: messages[0]!.size + messages[1]!.size, messages: 2 });
        assert.equal((await target.vectorSearch([0.6, 0.8], { memoryIds: ['m1'] }, 10)).length, 2, 'one search copy per message');
      });

      it('later adds get ids above the imported ones and above idsUsedThrough, never a gone message\'s id', async () => {
        const source = await open();
        await source.add('m1', [newMessage('a'), newMessage('b')], limits);
        const target = await open();
        await target.importMessages('m1', await allMessages(source, 'm1'));
        assert.deepEqual((await target.add('m1', [newMessage('c')], limits)).messageIds, [3]);
        await target.importMessages('m2', [], { idsUsedThrough: 40 });
        assert.deepEqual((await target.add('m2', [newMessage('d')], limits)).messageIds, [41]);
      });

      it('refuses messages of another memory, and ids another memory holds, storing nothing', async () => {
        const source = await open();
        await source.add('m1', [newMessage('a')], limits);
        const messages = await allMessages(source, 'm1');
        const target = await open();
        await assert.rejects(target.importMessages('m2', messages), /cannot import message 1 of memory m1 into memory m2/);
        await target.importMessages('m1', messages);
        await assert.rejects(target.importMessages('m2', messages.map((m) => ({ ...m, memory_id: 'm2' }))), /message id\(s\) 1 belong to another memory/);
        assert.deepEqual(await target.recount('m2'), { bytes: 0, messages: 0 });
      });
    });
  });
}
