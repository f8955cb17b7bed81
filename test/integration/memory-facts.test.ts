import assert from 'node:assert/strict';
import { lastUserMessage, startFakeOpenAI, type AnswerScript, type FakeMessage, type FakeOpenAI } from '../fakes/index.js';
import { harness } from './harness.js';
import { Api, eventually, newUser } from './client.js';
import { addModelServer } from './chat-helpers.js';
import { FACT_UPDATE_PROMPT_START } from '../../src/memories/fact-updates.js';

const CHAT = 'fake-chat@fake@OpenAI-API-Compatible';
const EMBED = 'fake-embed@fake@OpenAI-API-Compatible';
const EMPTY = JSON.stringify({ semantic: [], episodic: [], procedural: [] });

const system = (messages: FakeMessage[]) => messages.find((m) => m.role === 'system')?.content ?? '';

/** Extraction answers by a marker in the conversation: the one semantic fact it states. */
const facts = new Map<string, string>();
/** The fact-update question: the relation of every candidate to a new fact containing the key. */
const relations = new Map<string, string>();

const answers: AnswerScript = (messages) => {
  const user = lastUserMessage(messages);
  if (system(messages).startsWith(FACT_UPDATE_PROMPT_START)) {
    const newFact = /^New fact \([^)]*\): (.*)$/m.exec(user)?.[1] ?? '';
    const relation = [...relations].find(([key]) => newFact.includes(key))?.[1] ?? 'adds';
    const count = (user.match(/^\d+\. /gm) ?? []).length;
    return { answer: JSON.stringify({ decisions: Array.from({ length: count }, (_, i) => ({ id: i + 1, relation })) }) };
  }
  if (!system(messages).includes('## OUTPUT FORMAT')) return { answer: 'ok' };
  for (const [marker, fact] of facts) if (user.includes(marker)) return { answer: JSON.stringify({ semantic: [{ content: fact }] }) };
  return { answer: EMPTY };
};

let seq = 0;
const unique = (name: string) => `${name}-${++seq}-${Date.now() % 100000}`;

describe('memory facts stay current (updates, corrections, retractions)', function () {
  this.timeout(90_000);
  let fake: FakeOpenAI;
  let api: Api;

  before(async () => {
    await harness();
    fake = await startFakeOpenAI({ answer: answers, dims: 64 });
    ({ api } = await newUser('memfacts'));
    await addModelServer(api, fake.baseUrl, { embedding: 'fake-embed' });
  });
  after(async () => {
    await fake.close();
  });

  async function createMemory() {
    const res = await api.post('/memories', { name: unique('facts'), memory_type: ['raw', 'semantic'], embd_id: EMBED, llm_id: CHAT });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data.id as string;
  }

  /** Adds a turn and waits for its extraction to finish; returns the task's closing message and the items. */
  async function tell(memoryId: string, userInput: string) {
    const res = await api.post('/messages', { memory_id: [memoryId], agent_id: 'agent-1', session_id: unique('s'), user_input: userInput, agent_response: 'Noted.' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const rawId = res.body.data[0].message_id as number;
    return eventually(async () => {
      const list = (await api.get(`/memories/${memoryId}`, { page_size: 100, include_invalid: true })).body.data.messages.message_list;
      const raw = list.find((m: any) => m.message_id === rawId);
      if (!raw || raw.task.progress < 1) return undefined;
      return { message: raw.task.progress_msg as string, items: raw.extract as any[] };
    }, 30_000, 100);
  }

  const search = async (memoryId: string, query: string, extra: Record<string, unknown> = {}) => {
    const res = await api.get('/messages/search', { query, memory_id: memoryId, similarity_threshold: 0, ...extra });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return (res.body.data as any[]).filter((m) => m.message_type === 'semantic');
  };

  it('an updated fact gets invalid_at and replaced_by the new one; search and recent return only the current fact, include_invalid=true the history', async () => {
    const mem = await createMemory();
    facts.set('moved-paris', 'The user lives in Paris.');
    facts.set('moved-berlin', 'The user lives in Berlin.');
    relations.set('Berlin', 'updates');
    const first = await tell(mem, 'moved-paris: I live in Paris.');
    const paris = first.items[0];
    assert.equal(paris.invalid_at, null);
    fake.clear();
    const second = await tell(mem, 'moved-berlin: I moved to Berlin.');
    const berlin = second.items[0];
    assert.match(second.message, /1 earlier fact\(s\) replaced/);
    const asked = fake.requests.filter((r) => r.path === '/v1/chat/completions' && JSON.stringify(r.body).includes(FACT_UPDATE_PROMPT_START));
    assert.equal(asked.length, 1, 'one structured question for the new fact');
    assert.match(JSON.stringify(asked[0]!.body), /1\. The user lives in Paris\./);

    const current = await search(mem, 'where does the user live');
    assert.deepEqual(current.map((m) => m.content), ['The user lives in Berlin.']);
    const history = await search(mem, 'where does the user live', { include_invalid: true });
    const old = history.find((m) => m.message_id === paris.message_id);
    assert.ok(old, 'include_invalid returns the replaced fact');
    assert.equal(old.replaced_by, berlin.message_id);
    assert.ok(Number.isInteger(old.invalid_at) && old.invalid_at >= paris.valid_at, 'invalid_at in Unix seconds');

    const recent = (await api.get('/messages', { memory_id: mem, limit: 100 })).body.data as any[];
    assert.ok(!recent.some((m) => m.message_id === paris.message_id), 'recent skips the replaced fact');
    assert.ok(recent.some((m) => m.message_id === berlin.message_id));
    const recentAll = (await api.get('/messages', { memory_id: mem, limit: 100, include_invalid: true })).body.data as any[];
    assert.ok(recentAll.some((m) => m.message_id === paris.message_id));

    const listed = (await api.get(`/memories/${mem}`, { page_size: 100 })).body.data.messages.message_list;
    const items = listed.flatMap((m: any) => m.extract).map((m: any) => m.message_id);
    assert.ok(!items.includes(paris.message_id) && items.includes(berlin.message_id), 'the listing nests current items only by default');
    const content = (await api.get(`/messages/${mem}:${paris.message_id}/content`)).body.data;
    assert.equal(content.content, 'The user lives in Paris.', 'never deleted');
  });

  it('a turn whose fact was replaced ranks below the turn that replaced it in a default raw or turns-and-items search', async () => {
    const mem = await createMemory();
    facts.set('job-barista', 'The user\'s job is barista at a café.');
    facts.set('job-developer', 'The user\'s job is now junior web developer.');
    relations.set('developer', 'updates');
    const old = await tell(mem, 'job-barista: these days my job is barista at the café, my job starts early these days');
    const change = await tell(mem, 'job-developer: I quit the café; these days I am a junior web developer');
    assert.match(change.message, /1 earlier fact\(s\) replaced/);
    const oldTurn = old.items[0].source_id as number;
    const newTurn = change.items[0].source_id as number;
    /** The raw turns found, best first (results come most recent first; similarity gives the rank). */
    const turns = async (extra: Record<string, unknown>) => {
      const res = await api.get('/messages/search', { query: 'what is my job these days', memory_id: mem, similarity_threshold: 0, ...extra });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return (res.body.data as any[]).filter((m) => m.message_type === 'raw').sort((a, b) => b.similarity - a.similarity).map((m) => m.message_id);
    };
    // The replaced statement shares more words with the question: with the history shown it comes first.
    assert.deepEqual(await turns({ message_type: 'raw', include_invalid: true }), [oldTurn, newTurn]);
    assert.deepEqual(await turns({ message_type: 'raw' }), [newTurn, oldTurn], 'raw search, default');
    assert.deepEqual(await turns({}), [newTurn, oldTurn], 'turns and items, default');
  });

  it('a fact the model says only adds to an earlier one leaves both current', async () => {
    const mem = await createMemory();
    facts.set('tea-lover', 'The user likes green tea.');
    facts.set('coffee-too', 'The user likes black coffee and tea.');
    relations.set('coffee', 'adds');
    await tell(mem, 'tea-lover: I like green tea.');
    const second = await tell(mem, 'coffee-too: I also like coffee.');
    assert.doesNotMatch(second.message, /replaced/);
    const found = await search(mem, 'what does the user like tea');
    assert.equal(found.length, 2, JSON.stringify(found));
    assert.ok(found.every((m) => m.invalid_at === null && m.replaced_by === null));
  });

  it('correct: the corrected text becomes a new item replacing the old (kept as history); raw messages, stale items and empty text are 400', async () => {
    const mem = await createMemory();
    facts.set('pet-cat', 'The user has a cat named Tom.');
    const { items: [cat] } = await tell(mem, 'pet-cat: my cat is Tom.');
    const res = await api.post(`/messages/${mem}:${cat.message_id}/correct`, { content: 'The user has a cat named Tim.' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const fixed = res.body.data;
    assert.equal(fixed.content, 'The user has a cat named Tim.');
    assert.equal(fixed.replaces, cat.message_id);
    assert.equal(fixed.message_type, 'semantic');
    assert.equal(fixed.source_id, cat.source_id);
    const old = (await api.get(`/messages/${mem}:${cat.message_id}/content`)).body.data;
    assert.equal(old.replaced_by, fixed.message_id);
    assert.ok(old.invalid_at !== null);
    assert.deepEqual((await search(mem, 'cat named')).map((m) => m.content), ['The user has a cat named Tim.']);

    const again = await api.post(`/messages/${mem}:${cat.message_id}/correct`, { content: 'x y' });
    assert.equal(again.status, 400);
    assert.match(again.body.message, new RegExp(`no longer current.*replaced by message '${fixed.message_id}'`));
    const raw = await api.post(`/messages/${mem}:${cat.source_id}/correct`, { content: 'The user said something else.' });
    assert.equal(raw.status, 400);
    assert.match(raw.body.message, /raw message/);
    const blank = await api.post(`/messages/${mem}:${fixed.message_id}/correct`, { content: '   ' });
    assert.equal(blank.status, 400);
    assert.match(blank.body.message, /content/);
    assert.equal((await api.post(`/messages/${mem}:999999999/correct`, { content: 'a b' })).status, 404);
  });

  it('retract: the item stops being current with no replacement, stays readable with include_invalid; retracting twice is 400', async () => {
    const mem = await createMemory();
    facts.set('allergy', 'The user is allergic to peanuts.');
    const { items: [allergy] } = await tell(mem, 'allergy: peanuts make me sick.');
    const res = await api.post(`/messages/${mem}:${allergy.message_id}/retract`, {});
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.replaced_by, null);
    assert.ok(res.body.data.invalid_at !== null);
    assert.deepEqual(await search(mem, 'allergic peanuts'), []);
    const history = await search(mem, 'allergic peanuts', { include_invalid: true });
    assert.deepEqual(history.map((m) => m.message_id), [allergy.message_id]);
    const twice = await api.post(`/messages/${mem}:${allergy.message_id}/retract`, {});
    assert.equal(twice.status, 400);
    assert.match(twice.body.message, /no longer current/);
  });
});
