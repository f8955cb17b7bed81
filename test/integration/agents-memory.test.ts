import assert from 'node:assert/strict';
import { echoAnswer, startFakeOpenAI, toolRoundTrip, type FakeOpenAI } from '../fakes/index.js';
import type { Api } from './client.js';
import { addModelServer } from './chat-helpers.js';
import { newUser } from './client.js';
import { canvas, createAgent, runStream } from './agent-helpers.js';

const CHAT = 'fake-chat@fake@OpenAI-API-Compatible';
const EMBED = 'fake-embed@fake@OpenAI-API-Compatible';

describe('agents remember: Message memory_ids writes, Retrieval from memories reads', function () {
  this.timeout(120_000);
  let fake: FakeOpenAI;
  let api: Api;
  let memoryId: string;

  before(async () => {
    fake = await startFakeOpenAI();
    ({ api } = await newUser('agent-memory'));
    await addModelServer(api, fake.baseUrl, { embedding: 'fake-embed' });
    const res = await api.post('/memories', { name: `agent-mem-${Date.now()}`, memory_type: ['raw'], embd_id: EMBED, llm_id: CHAT });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    memoryId = res.body.data.id;
  });
  beforeEach(() => {
    fake.behaviour = { ...fake.behaviour, answer: echoAnswer };
  });
  after(() => fake.close());

  it("a Message with memory_ids writes the turn (question and answer) to the memory, tagged with the agent and the session", async () => {
    const dsl = canvas([
      ['begin', 'Begin', {}, ['LLM:A']],
      ['LLM:A', 'LLM', { prompts: [{ role: 'user', content: '{sys.query}' }] }, ['Message:M']],
      ['Message:M', 'Message', { content: ['{LLM:A@content}'], memory_ids: [memoryId] }, []],
    ]);
    const agentId = await createAgent(api, dsl);
    const { events } = await runStream(api, { agent_id: agentId, query: 'my favourite colour is teal' });
    const done = events.find((e) => e.event === 'node_finished' && e.data.component_id === 'Message:M');
    assert.equal(done.data.memory_writes.length, 1);
    assert.equal(done.data.memory_writes[0].memory_id, memoryId);
    assert.ok(Number.isInteger(done.data.memory_writes[0].message_id), JSON.stringify(done.data.memory_writes));
    const listed = (await api.get(`/memories/${memoryId}`)).body.data.messages.message_list;
    const raw = listed.find((m: any) => m.message_id === done.data.memory_writes[0].message_id);
    assert.equal(raw.agent_id, agentId);
    assert.equal(raw.session_id, events[0].session_id);
    const content = (await api.get(`/messages/${memoryId}:${raw.message_id}/content`)).body.data.content;
    assert.match(content, /my favourite colour is teal/);
    assert.match(content, /Echo: my favourite colour is teal/);
  });

  it('a failed memory write is visible in the run events, and the answer still arrives', async () => {
    const dsl = canvas([
      ['begin', 'Begin', {}, ['Message:M']],
      ['Message:M', 'Message', { content: ['noted'], memory_ids: ['0123456789abcdef0123456789abcdef'] }, []],
    ]);
    const agentId = await createAgent(api, dsl);
    const { events } = await runStream(api, { agent_id: agentId, query: 'remember me' });
    const done = events.find((e) => e.event === 'node_finished' && e.data.component_id === 'Message:M');
    assert.match(done.data.memory_writes[0].error, /not found/i);
    assert.equal(events.filter((e) => e.event === 'message').map((e) => e.data.content).join(''), 'noted');
  });

  it("an Agent's Retrieval tool with retrieval_from memory reads what the memory holds", async () => {
    const added = await api.post('/messages', { memory_id: [memoryId], agent_id: 'a', session_id: 's', user_input: 'the launch code word is pineapple', agent_response: 'noted' });
    assert.equal(added.status, 200, JSON.stringify(added.body));
    const dsl = canvas([
      ['begin', 'Begin', {}, ['Agent:A']],
      ['Agent:A', 'Agent', { prompts: [{ role: 'user', content: '{sys.query}' }], tools: [{ component_name: 'Retrieval', name: 'Retrieval', params: { retrieval_from: 'memory', memory_ids: [memoryId], similarity_threshold: 0 } }] }, ['Message:M']],
      ['Message:M', 'Message', { content: ['{Agent:A@content}'] }, []],
    ]);
    const agentId = await createAgent(api, dsl);
    fake.behaviour.answer = toolRoundTrip('search_my_dateset', { query: 'launch code word' }, (result) => (result.includes('pineapple') ? 'The code word is pineapple.' : `not found: ${result.slice(0, 120)}`));
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'what is the code word?', stream: false });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.data.content, 'The code word is pineapple.');
    assert.deepEqual(res.body.data.data.reference.chunks, [], 'memory hits are not dataset references');
  });

  it('a Retrieval component reads from memories too, and a memory of another tenant is an error naming it', async () => {
    const dsl = (ids: string[]) =>
      canvas([
        ['begin', 'Begin', {}, ['Retrieval:R']],
        ['Retrieval:R', 'Retrieval', { retrieval_from: 'memory', memory_ids: ids, similarity_threshold: 0 }, ['Message:M']],
        ['Message:M', 'Message', { content: ['{Retrieval:R@formalized_content}'] }, []],
      ]);
    const agentId = await createAgent(api, dsl([memoryId]));
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'pineapple', stream: false });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.data.data.content, /pineapple/);

    const other = await newUser('agent-memory-other');
    await addModelServer(other.api, fake.baseUrl, { embedding: 'fake-embed' });
    const theirs = await createAgent(other.api, dsl([memoryId]));
    const denied = await other.api.post('/agents/chat/completions', { agent_id: theirs, query: 'pineapple', stream: false });
    assert.equal(denied.status, 400, 'a memory the canvas names but may not read is its configuration, not a fault of Cairn');
    assert.match(denied.body.message, /Retrieval:R.*not found/);
  });
});
