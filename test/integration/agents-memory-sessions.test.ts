import assert from 'node:assert/strict';
import { lastUserMessage, startFakeOpenAI, type AnswerScript, type FakeMessage, type FakeOpenAI } from '../fakes/index.js';
import { Api, eventually, newUser } from './client.js';
import { addModelServer } from './chat-helpers.js';
import { createAgent } from './agent-helpers.js';
import { FACT_UPDATE_PROMPT_START } from '../../src/memories/fact-updates.js';

const CHAT = 'fake-chat@fake@OpenAI-API-Compatible';
const EMBED = 'fake-embed@fake@OpenAI-API-Compatible';
const TEAL = "The user's favourite colour is teal.";
const GREEN = "The user's favourite colour is green.";

const system = (messages: FakeMessage[]) => messages.find((m) => m.role === 'system')?.content ?? '';

/** Extraction: the colour the turn states; fact updates: a new colour updates an old one; the assistant: "ok". */
const answers: AnswerScript = (messages) => {
  const user = lastUserMessage(messages);
  if (system(messages).startsWith(FACT_UPDATE_PROMPT_START)) {
    const n = (user.match(/^\d+\. /gm) ?? []).length;
    return { answer: JSON.stringify({ decisions: Array.from({ length: n }, (_, i) => ({ id: i + 1, relation: 'updates' })) }) };
  }
  if (system(messages).includes('## OUTPUT FORMAT')) {
    const fact = user.includes('colour is now green') ? GREEN : user.includes('colour is teal') ? TEAL : undefined;
    return { answer: JSON.stringify({ semantic: fact ? [{ content: fact }] : [], episodic: [], procedural: [] }) };
  }
  return { answer: 'ok' };
};

describe('agents remember across sessions: the "assistant with memory" template', function () {
  this.timeout(90_000);
  let fake: FakeOpenAI;
  let api: Api;
  let memoryId: string;
  let agentId: string;

  before(async () => {
    fake = await startFakeOpenAI({ answer: answers });
    ({ api } = await newUser('agent-sessions'));
    await addModelServer(api, fake.baseUrl, { embedding: 'fake-embed' });
    const mem = await api.post('/memories', { name: `sessions-${Date.now()}`, memory_type: ['raw', 'semantic'], embd_id: EMBED, llm_id: CHAT });
    assert.equal(mem.status, 200, JSON.stringify(mem.body));
    memoryId = mem.body.data.id;
    const templates = (await api.get('/agents/templates')).body.data as any[];
    const template = templates.find((t) => t.id === 'assistant_with_memory');
    assert.ok(template, 'the template is listed');
    const dsl = structuredClone(template.dsl);
    dsl.components['Retrieval:Recall'].obj.params.memory_ids = [memoryId];
    dsl.components['Message:Reply'].obj.params.memory_ids = [memoryId];
    dsl.components['LLM:Answer'].obj.params.llm_id = CHAT;
    agentId = await createAgent(api, dsl);
  });
  after(() => fake.close());

  /** One turn in a new session; returns the system prompt the assistant's model received. */
  async function turn(query: string): Promise<string> {
    fake.clear();
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query, stream: false });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const asked = fake.requests.filter((r) => r.path === '/v1/chat/completions' && JSON.stringify(r.body).includes('assistant with a memory'));
    assert.equal(asked.length, 1, 'the assistant answered once');
    return (asked[0]!.body.messages as { role: string; content: string }[]).find((m) => m.role === 'system')!.content;
  }

  /** Waits until the memory holds a current fact with this content. */
  const factStored = (content: string) => eventually(async () => {
    const found = (await api.get('/messages/search', { query: content, memory_id: memoryId, similarity_threshold: 0 })).body.data as any[];
    return found.some((m) => m.message_type === 'semantic' && m.content === content) || undefined;
  }, 30_000, 200);

  it('session 2 recalls the fact told in session 1, with its date; after an update in session 3, session 4 recalls only the newer fact', async () => {
    await turn('Hi! My favourite colour is teal.');
    await factStored(TEAL);

    const second = await turn('Which colour do I like?');
    assert.match(second, new RegExp(`Memory \\d+ \\(fact, valid since \\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z\\):\\n${TEAL.replace('.', '\\.')}`));
    const firstMemory = /Memory 0 \(([^,]+),/.exec(second)?.[1];
    assert.equal(firstMemory, 'fact', 'current facts come first');

    await turn('Actually my favourite colour is now green.');
    await factStored(GREEN);
    // The update decision runs after the new fact is stored: wait until the old one is no longer current.
    await eventually(async () => {
      const found = (await api.get('/messages/search', { query: TEAL, memory_id: memoryId, similarity_threshold: 0 })).body.data as any[];
      return !found.some((m) => m.content === TEAL) || undefined;
    }, 30_000, 200);
    // Worded apart from session 2's question: that turn is in the memory too, and a near-copy of the query
    // takes the top term score (similarity is relative to the best match, docs/memories.md "Search").
    const fourth = await turn('Tell me my favourite colour.');
    assert.ok(fourth.includes(GREEN), fourth);
    assert.ok(!fourth.includes(TEAL), 'the replaced fact is not recalled');
  });
});
