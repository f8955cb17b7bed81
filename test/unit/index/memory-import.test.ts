import assert from 'node:assert/strict';
import { openIndexDatabase } from '../../../src/index/sqlite-database.js';
import { SqliteMemoryIndex } from '../../../src/index/memory-sqlite-index.js';
import type { MemoryMessage, NewMemoryMessage } from '../../../src/index/memory-types.js';

const open = () => new SqliteMemoryIndex(openIndexDatabase(':memory:'));

const newMessage = (content: string, fields: Partial<NewMemoryMessage> = {}): NewMemoryMessage => ({
  message_type: 'raw', source_id: 0, user_id: 'u1', agent_id: 'a1', session_id: 's1', content, vector: [0.6, 0.8], valid_at: 1000, ...fields,
});
const limits = { limit: 1_000_000, tenantId: 't1' };

/** Every message of a memory as the port lists it (top level and extracted), by id. */
async function allMessages(index: SqliteMemoryIndex, memoryId: string): Promise<MemoryMessage[]> {
  const { messages, extracted } = await index.list(memoryId, { page: 1, pageSize: 1000 });
  return [...messages, ...[...extracted.values()].flat()].sort((a, b) => a.message_id - b.message_id);
}

describe('SqliteMemoryIndex.importMessages (moving memories between indexes)', () => {
  it('keeps ids, sizes, times, status, forget_at and extracted items; the total equals a recount; search finds them', async () => {
    const source = open();
    const [raw] = (await source.add('m1', [newMessage('the granite cairn on the ridge')], limits)).messageIds;
    await source.add('m1', [newMessage('cairns mark trails', { message_type: 'semantic', source_id: raw!, valid_at: 2000 })], { ...limits, onceForSource: raw! });
    const [forgotten] = (await source.add('m1', [newMessage('an old fact about moors', { valid_at: 500 })], limits)).messageIds;
    await source.forget('m1', forgotten!, 9999);
    await source.setStatus('m1', raw!, false);
    const messages = await allMessages(source, 'm1');
    assert.equal(messages.length, 3);

    const target = open();
    await target.importMessages('m1', messages);
    assert.deepEqual(await allMessages(target, 'm1'), messages);
    assert.deepEqual(await target.usage('m1'), await source.recount('m1'));
    assert.deepEqual(await target.recount('m1'), await source.recount('m1'));
    const hits = await target.fullText('cairns trails', { memoryIds: ['m1'] }, 10);
    assert.deepEqual(hits.map((h) => h.message_id), [raw! + 1], 'the disabled raw message and the forgotten one are not searchable, as before');
  });

  it('a second import of the same messages changes nothing (a rerun after a failure)', async () => {
    const source = open();
    await source.add('m1', [newMessage('one'), newMessage('two')], limits);
    const messages = await allMessages(source, 'm1');
    const target = open();
    await target.importMessages('m1', messages);
    await target.importMessages('m1', messages);
    assert.deepEqual(await allMessages(target, 'm1'), messages);
    assert.deepEqual(await target.usage('m1'), { bytes: messages[0]!.size + messages[1]!.size, messages: 2 });
  });

  it('later adds get ids above the imported ones and above idsUsedThrough, never a gone message\'s id', async () => {
    const source = open();
    await source.add('m1', [newMessage('a'), newMessage('b')], limits);
    const target = open();
    await target.importMessages('m1', await allMessages(source, 'm1'));
    assert.deepEqual((await target.add('m1', [newMessage('c')], limits)).messageIds, [3]);
    await target.importMessages('m2', [], { idsUsedThrough: 40 });
    assert.deepEqual((await target.add('m2', [newMessage('d')], limits)).messageIds, [41]);
  });

  it('refuses messages of another memory, and ids another memory holds, storing nothing', async () => {
    const source = open();
    await source.add('m1', [newMessage('a')], limits);
    const messages = await allMessages(source, 'm1');
    const target = open();
    await assert.rejects(target.importMessages('m2', messages), /cannot import message 1 of memory m1 into memory m2/);
    await target.importMessages('m1', messages);
    await assert.rejects(target.importMessages('m2', messages.map((m) => ({ ...m, memory_id: 'm2' }))), /message id\(s\) 1 belong to another memory/);
    assert.deepEqual(await target.recount('m2'), { bytes: 0, messages: 0 });
  });
});
