import assert from 'node:assert/strict';
import { Api, newUser } from './client.js';
import { createChat, parsedDataset, postSse } from './chat-helpers.js';
import { canvas, createAgent, fixture, runStream, streamedText } from './agent-helpers.js';
import { harness } from './harness.js';

/*
 * Chat out of the box: a tenant that configured no model provider chats over its dataset with the
 * built-in model (SmolLM2-135M-Instruct, real, on the CPU). Greedy decoding keeps the answer reproducible;
 * a short max_tokens keeps the test fast.
 */
describe('chat with the built-in model, no provider configured', function () {
  this.timeout(180_000);
  let api: Api;
  let datasetId: string;

  before(async function () {
    this.timeout(180_000);
    ({ api } = await newUser('builtin-chat'));
    ({ id: datasetId } = await parsedDataset(api, 'trail-notes', {
      'cairns.txt': 'Granite cairns mark the trail crossings in the northern valley. Volunteers rebuild each cairn after the winter storms.',
      'logbook.txt': 'The hut logbook records the weather every morning. Hikers write the temperature and the wind speed in the logbook.',
    }));
  });

  it('a new tenant has the built-in chat model as its default, listed in the catalogue', async () => {
    assert.equal((await api.get('/models/default')).body.data.chat_model, 'SmolLM2-135M-Instruct@Builtin');
    const models = (await api.get('/models', { type: 'chat' })).body.data;
    assert.deepEqual(
      models.map((m: any) => [m.model_id, m.provider_name, m.model_type]),
      [['SmolLM2-135M-Instruct@Builtin', 'Builtin', ['chat']]],
    );
  });

  it('answers over the dataset with a non-empty streamed answer and references', async () => {
    // Token by token: the grounding check (on by default for this model) releases whole sentences; it has its own tests.
    const chat = await createChat(api, { name: 'trail', dataset_ids: [datasetId], similarity_threshold: 0, llm_setting: { temperature: 0, max_tokens: 48 }, prompt_config: { grounding_check: false } });
    assert.equal(chat.llm_id, 'SmolLM2-135M-Instruct@Builtin');
    const res = await postSse(api, '/chat/completions', {
      chat_id: chat.id,
      stream: true,
      messages: [{ role: 'user', content: 'What marks the trail crossings in the northern valley?' }],
    });
    assert.equal(res.status, 200, res.raw);
    const frames = res.frames.slice(0, -1).map((f) => f.data);
    assert.ok(frames.every((d) => d && typeof d === 'object'), res.raw.slice(0, 500));
    const final = frames.at(-1);
    assert.equal(final.final, true);
    assert.ok(final.answer.trim().length > 0, 'a non-empty answer');
    const streamed = frames.slice(0, -1);
    assert.ok(streamed.length > 2, `streamed in pieces: ${streamed.length} frames`);
    for (let i = 1; i < streamed.length; i++) assert.ok(streamed[i].answer.startsWith(streamed[i - 1].answer), 'cumulative');
    assert.ok(final.reference.chunks.length > 0, 'references');
    assert.ok(final.reference.chunks.some((c: any) => c.document_name === 'cairns.txt'));
    assert.equal(res.frames.at(-1).data, true);

    const session = (await api.get(`/chats/${chat.id}/sessions/${final.session_id}`)).body.data;
    assert.equal(session.messages.at(-1).content, final.answer, 'the answer is stored');
  });

  it('an agent (Begin → Agent with the Retrieval tool → Message) completes on the built-in model', async () => {
    const dsl = fixture('your_starter_dataset_chatbot');
    const params = dsl.components['Agent:StalePandasDream'].obj.params;
    params.tools[0].params.kb_ids = [datasetId];
    assert.equal(params.llm_id, '', "the template's Agent uses the tenant's default chat model");
    // A short system prompt keeps the test fast (the template's is ~600 tokens); max_rounds stays 5: the model must not loop.
    Object.assign(params, { sys_prompt: 'You answer from the knowledge base only. Search it for every question.', max_tokens: 48, temperature: 0 });
    const agentId = await createAgent(api, dsl);
    const { events } = await runStream(api, { agent_id: agentId, query: 'What marks the trail crossings?' });
    assert.ok(events.some((e) => e.event === 'workflow_finished'), JSON.stringify(events.at(-1)));
    assert.ok(!events.some((e) => e.event === 'error' || e.data?.error), JSON.stringify(events.filter((e) => e.event === 'error')));
    assert.ok(streamedText(events).trim().length > 0, 'a non-empty answer');
    const agent = events.find((e) => e.event === 'node_finished' && e.data.component_id === 'Agent:StalePandasDream');
    // The model searched the dataset once (the built-in model calls each tool at most once per turn), then answered.
    assert.deepEqual(agent.data.tool_calls.map((c: any) => c.tool_name), ['search_my_dateset'], JSON.stringify(agent.data.tool_calls));
    const end = events.find((e) => e.event === 'message_end');
    assert.ok(end.data.reference.chunks.length > 0, 'references from the search');
  });

  it('structured output: an LLM component with an output schema gets JSON that parses against it', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' }, sunny: { type: 'boolean' } }, required: ['city', 'sunny'] };
    const dsl = canvas([
      ['begin', 'Begin', {}, ['LLM:Extract']],
      ['LLM:Extract', 'LLM', { sys_prompt: 'Extract the city and whether it is sunny.', temperature: 0, max_tokens: 48, outputs: { structured: { type: 'object', value: {}, schema } } }, ['Message:Out']],
      ['Message:Out', 'Message', { content: ['City: {LLM:Extract@structured.city}'] }, []],
    ]);
    const agentId = await createAgent(api, dsl);
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'I live in Oslo and it is sunny today.', stream: false });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const structured = res.body.data.data.structured['LLM:Extract'];
    assert.equal(typeof structured.city, 'string', JSON.stringify(structured));
    assert.equal(typeof structured.sunny, 'boolean', JSON.stringify(structured));
    assert.equal(res.body.data.data.content, `City: ${structured.city}`);
  });

  it('Categorize on the built-in model always picks one of its categories (the answer is constrained to their names)', async () => {
    const dsl = fixture('customer_feedback_dispatcher');
    const agentId = await createAgent(api, dsl);
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, stream: false, inputs: { customer_review: { value: 'The parcel arrived three weeks late.' } }, return_trace: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const first = res.body.data.data.trace.find((t: any) => t.component_id === 'Categorize:RottenWallsObey').trace[0];
    assert.ok(['Negative review ', 'Positive review'].includes(first.outputs.category_name), JSON.stringify(first.outputs));
    assert.match(res.body.data.data.content, /Final review category is:/);
  });

  it('healthz reports the loaded model and its memory', async () => {
    const health = await new Api((await harness()).url).get('/system/healthz');
    assert.equal(health.status, 200);
    const m = health.body.chat_model;
    assert.equal(m.state, 'loaded');
    assert.ok(m.memory_bytes > 90e6, String(m.memory_bytes));
    assert.equal(m.active, 0);
  });
});
