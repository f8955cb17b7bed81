import assert from 'node:assert/strict';
import { lastUserMessage, startFakeOpenAI, type AnswerScript, type FakeMessage, type FakeOpenAI } from '../fakes/index.js';
import { Api, eventually, newUser } from './client.js';
import { addModelServer } from './chat-helpers.js';

/*
 * The Cairn extensions of add_message / search_message (docs/memories.md "Search: dates, types and source
 * turns"): a turn's session time (valid_at), dates in results, a time range, message types, and the source
 * turns of extracted items.
 */
const CHAT = 'fake-chat@fake@OpenAI-API-Compatible';
const EMBED = 'fake-embed@fake@OpenAI-API-Compatible';

const isExtraction = (messages: FakeMessage[]) => (messages.find((m) => m.role === 'system')?.content ?? '').includes('## OUTPUT FORMAT');
/** The extractor turns "kayak" turns into one semantic item; everything else into none. */
const answers: AnswerScript = (messages) => {
  if (!isExtraction(messages)) return { answer: 'ok' };
  const kayak = lastUserMessage(messages).includes('kayak');
  return { answer: JSON.stringify({ semantic: kayak ? [{ content: 'The user owns a red sea kayak named Puffin.', valid_at: null, invalid_at: null }] : [], episodic: [], procedural: [] }) };
};

const day = (iso: string) => Date.parse(`${iso}T12:00:00Z`) / 1000;

function assertError(res: { status: number; body: any }, status: number, message: RegExp) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.code, status);
  assert.match(res.body.message, message);
}

describe('memories: session dates, time ranges, message types and source turns in search', function () {
  this.timeout(90_000);
  let fake: FakeOpenAI;
  let api: Api;
  let seq = 0;

  const createMemory = async (memory_type: string[]) => {
    const res = await api.post('/memories', { name: `scope-${++seq}-${Date.now() % 100000}`, memory_type, embd_id: EMBED, llm_id: CHAT });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data.id as string;
  };
  const add = async (memoryId: string, user_input: string, valid_at?: unknown) => {
    const res = await api.post('/messages', { memory_id: [memoryId], agent_id: 'a', session_id: 's', user_input, agent_response: 'noted', ...(valid_at === undefined ? {} : { valid_at }) });
    return res;
  };
  const search = (query: Record<string, unknown>) => api.get('/messages/search', { similarity_threshold: 0, ...query });

  before(async () => {
    fake = await startFakeOpenAI({ answer: answers, dims: 64 });
    ({ api } = await newUser('memory-scope'));
    await addModelServer(api, fake.baseUrl, { embedding: 'fake-embed' });
  });
  after(async () => fake.close());

  it('add_message takes the session time as valid_at (Unix seconds or ISO 8601); search shows it as valid_at and valid_date', async () => {
    const memoryId = await createMemory(['raw']);
    const bySeconds = await add(memoryId, 'we repainted the garden shed green', day('2024-04-02'));
    assert.equal(bySeconds.status, 200, JSON.stringify(bySeconds.body));
    assert.equal((await add(memoryId, 'the garden shed roof leaked again', '2024-06-15T08:30:00Z')).status, 200);
    assert.equal((await add(memoryId, 'a new lock for the garden shed')).status, 200, 'no valid_at: now');
    const found = (await search({ query: 'garden shed', memory_id: memoryId })).body.data as any[];
    const byText = (word: string) => found.find((m) => m.content.includes(word));
    assert.equal(byText('repainted').valid_at, day('2024-04-02'));
    assert.equal(byText('repainted').valid_date, '2024-04-02T12:00:00.000Z');
    assert.equal(byText('leaked').valid_date, '2024-06-15T08:30:00.000Z');
    assert.ok(Math.abs(byText('lock').valid_at - Date.now() / 1000) < 120, 'defaults to now');
    const listed = (await api.get(`/memories/${memoryId}`)).body.data.messages.message_list as any[];
    assert.ok(listed.some((m) => m.valid_at === day('2024-04-02')), 'the listing shows the session time too');
  });

  it('a valid_at that is not a time is a 400 naming the field, and nothing is stored', async () => {
    const memoryId = await createMemory(['raw']);
    assertError(await add(memoryId, 'soon', 'next tuesday'), 400, /`valid_at` must be Unix seconds or an ISO 8601/);
    assertError(await add(memoryId, 'soon', -5), 400, /valid_at/);
    assert.equal((await api.get(`/memories/${memoryId}`)).body.data.messages.total_count, 0);
  });

  it('valid_since / valid_until keep only messages of that period (a date alone is the whole day); the best of them still fill top_n', async () => {
    const memoryId = await createMemory(['raw']);
    for (const [date, text] of [['2024-03-01', 'march'], ['2024-03-31', 'late march'], ['2024-04-01', 'april'], ['2024-05-20', 'may']]) {
      for (let i = 0; i < 3; i++) assert.equal((await add(memoryId, `bicycle repair ${text} ${i}`, `${date}T${10 + i}:00:00Z`)).status, 200);
    }
    const march = (await search({ query: 'bicycle repair', memory_id: memoryId, valid_since: '2024-03-01', valid_until: '2024-03-31' })).body.data as any[];
    assert.equal(march.length, 6, JSON.stringify(march.map((m) => m.valid_date)));
    for (const m of march) assert.match(m.valid_date, /^2024-03-/);
    const fromApril = (await search({ query: 'bicycle repair', memory_id: memoryId, valid_since: day('2024-04-01') - 43200, top_n: 2 })).body.data as any[];
    assert.equal(fromApril.length, 2, 'top_n is filled from within the range');
    for (const m of fromApril) assert.ok(m.valid_at >= day('2024-04-01') - 43200);
    assert.equal((await search({ query: 'bicycle repair', memory_id: memoryId, valid_until: '2023-12-31' })).body.data.length, 0);
    assertError(await search({ query: 'x', memory_id: memoryId, valid_since: 'yesterday' }), 400, /`valid_since` must be Unix seconds/);
    assertError(await search({ query: 'x', memory_id: memoryId, valid_since: '2024-05-01', valid_until: '2024-04-01' }), 400, /must not be after/);
  });

  it('message_type keeps only those types; include_source returns the turn behind each extracted item, with its date', async () => {
    const memoryId = await createMemory(['raw', 'semantic']);
    const added = await add(memoryId, 'I bought a red sea kayak and called it Puffin', '2024-07-04T09:00:00Z');
    assert.equal(added.status, 200, JSON.stringify(added.body));
    const rawId = added.body.data[0].message_id as number;
    const item = await eventually(async () => {
      const hits = (await search({ query: 'kayak Puffin', memory_id: memoryId, message_type: 'semantic' })).body.data as any[];
      return hits[0];
    }, 30_000, 100);
    assert.equal(item.message_type, 'semantic');
    assert.equal(item.source_id, rawId);
    assert.equal(item.valid_date, '2024-07-04T09:00:00.000Z', 'an item without its own time carries the conversation time');
    assert.equal(item.source, undefined, 'no source unless asked');

    const raws = (await search({ query: 'kayak Puffin', memory_id: memoryId, message_type: 'raw' })).body.data as any[];
    assert.deepEqual(raws.map((m) => m.message_type), ['raw']);
    const both = (await search({ query: 'kayak Puffin', memory_id: memoryId, message_type: 'raw,semantic' })).body.data as any[];
    assert.deepEqual(both.map((m) => m.message_type).sort(), ['raw', 'semantic']);

    const withSource = (await search({ query: 'kayak Puffin', memory_id: memoryId, include_source: true })).body.data as any[];
    const found = withSource.find((m) => m.message_type === 'semantic');
    assert.deepEqual(found.source, {
      message_id: rawId, content: 'User Input: I bought a red sea kayak and called it Puffin\nAgent Response: noted',
      valid_at: Date.parse('2024-07-04T09:00:00Z') / 1000, valid_date: '2024-07-04T09:00:00.000Z', session_id: 's',
    });
    assert.equal(withSource.find((m) => m.message_type === 'raw').source, undefined, 'a raw message is its own source');

    assert.equal((await api.delete(`/messages/${memoryId}:${rawId}`)).status, 200);
    const afterForget = (await search({ query: 'kayak Puffin', memory_id: memoryId, include_source: true })).body.data as any[];
    assert.equal(afterForget.find((m) => m.message_type === 'semantic').source.message_id, rawId, 'a forgotten turn is still shown as the provenance');
    assertError(await search({ query: 'x', memory_id: memoryId, message_type: 'dream' }), 400, /Message type 'dream' is not supported/);
  });
});
