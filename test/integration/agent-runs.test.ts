import assert from 'node:assert/strict';
import { echoAnswer, lastUserMessage, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import { eventually, newUser, type Api } from './client.js';
import { datasetWithChunk, postSse, userWithModel } from './chat-helpers.js';
import { canvas, createAgent, llmCanvas, streamedText } from './agent-helpers.js';
import { harness } from './harness.js';

/** Begin → LLM:Draft → LLM:Polish → Message:Out: two model calls per turn, the second streamed by the Message. */
const twoLlmCanvas = () =>
  canvas([
    ['begin', 'Begin', { mode: 'conversational', prologue: 'Hi.' }, ['LLM:Draft']],
    ['LLM:Draft', 'LLM', { sys_prompt: 'Draft.', prompts: [{ role: 'user', content: '{sys.query}' }] }, ['LLM:Polish']],
    ['LLM:Polish', 'LLM', { sys_prompt: 'Polish.', prompts: [{ role: 'user', content: 'Polish: {LLM:Draft@content}' }] }, ['Message:Out']],
    ['Message:Out', 'Message', { content: ['{LLM:Polish@content}'] }, []],
  ]);

describe('agent runs: durable run records, their steps, the turn log and replay', function () {
  this.timeout(120_000);
  let fake: FakeOpenAI;
  let api: Api;

  before(async () => {
    fake = await startFakeOpenAI();
    ({ api } = await userWithModel('agent-runs', fake.baseUrl));
  });
  beforeEach(() => {
    fake.behaviour = { ...fake.behaviour, answer: echoAnswer, ttftMs: 0, tokenDelayMs: 0, failure: undefined };
  });
  after(() => fake.close());

  const modelCalls = () => fake.requests.filter((r) => r.path === '/v1/chat/completions').length;

  /** One non-stream turn in a new session: its agent, session and message (= run) ids. */
  async function turn(agentId: string, query: string, sessionId?: string) {
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query, stream: false, session_id: sessionId });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return { sessionId: res.body.data.session_id as string, runId: res.body.data.message_id as string, content: res.body.data.data.content as string };
  }

  it("lists a session's runs with each component's status, duration, inputs and outputs, in the order they ran", async () => {
    const agentId = await createAgent(api, twoLlmCanvas());
    const { sessionId, runId, content } = await turn(agentId, 'hello');
    assert.equal(content, 'Echo: Polish: Echo: hello');
    const res = await api.get(`/agents/${agentId}/sessions/${sessionId}/runs`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.total, 1);
    const [run] = res.body.data;
    assert.equal(run.id, runId);
    assert.equal(run.status, 'finished');
    assert.equal(run.trigger, 'completion');
    assert.equal(run.query, 'hello');
    assert.ok(run.end_time >= run.start_time && run.elapsed_time >= 0);
    assert.deepEqual(run.steps.map((s: any) => [s.component_id, s.status, s.reused]), [
      ['begin', 'finished', false],
      ['LLM:Draft', 'finished', false],
      ['LLM:Polish', 'finished', false],
      ['Message:Out', 'finished', false],
    ]);
    for (const s of run.steps) assert.ok(typeof s.elapsed_time === 'number' && s.elapsed_time >= 0, `${s.component_id} has a duration`);
    const [, draft, polish, message] = run.steps;
    assert.equal(draft.component_name, 'node LLM:Draft');
    assert.equal(draft.component_type, 'LLM');
    assert.deepEqual(draft.inputs.messages, [{ role: 'system', content: 'Draft.' }, { role: 'user', content: 'hello' }]);
    assert.equal(draft.outputs.content, 'Echo: hello');
    assert.equal(polish.inputs.messages.at(-1).content, 'Polish: Echo: hello');
    assert.equal(polish.outputs.content, 'Echo: Polish: Echo: hello');
    assert.equal(message.outputs.content, 'Echo: Polish: Echo: hello');
    assert.equal(JSON.stringify(run.steps).includes('_elapsed_time'), false, 'timings are fields of the step, not outputs');

    const one = await api.get(`/agents/${agentId}/sessions/${sessionId}/runs/${runId}`);
    assert.equal(one.status, 200);
    assert.deepEqual(one.body.data, run);
  });

  it('a turn whose first steps were logged longer ago than the purge age still records every step (logs go whole, after their run ended)', async () => {
    const agentId = await createAgent(api, twoLlmCanvas());
    fake.behaviour.ttftMs = 1500;
    const pending = api.post('/agents/chat/completions', { agent_id: agentId, query: 'slow', stream: false });
    const { events } = await (await harness()).backends();
    await new Promise((r) => setTimeout(r, 1000));
    // The purge as it runs every ten minutes, with ages shorter than the turn so far (a test clock): the
    // turn's early steps (Begin, LLM:Draft's start and inputs) are older than both.
    const purged = await events.purgeLogs({ endedMs: 0, idleMs: 10 * 60 * 1000 });
    const res = await pending;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { session_id: sessionId, message_id: runId } = res.body.data;
    const run = (await api.get(`/agents/${agentId}/sessions/${sessionId}/runs/${runId}`)).body.data;
    assert.deepEqual(run.steps.map((s: any) => [s.component_id, s.status]), [
      ['begin', 'finished'],
      ['LLM:Draft', 'finished'],
      ['LLM:Polish', 'finished'],
      ['Message:Out', 'finished'],
    ], `purged ${purged} events of other logs`);
    assert.deepEqual(run.steps[1].inputs.messages.at(-1), { role: 'user', content: 'slow' });

    // Once the turn has ended, its log goes whole.
    assert.ok((await events.read(runId, 0)).length > 0);
    await events.purgeLogs({ endedMs: 0, idleMs: 60 * 60 * 1000 });
    assert.deepEqual(await events.read(runId, 0), []);
  });

  it('pages runs newest first', async () => {
    const agentId = await createAgent(api, llmCanvas());
    const first = await turn(agentId, 'one');
    const second = await turn(agentId, 'two', first.sessionId);
    const page1 = await api.get(`/agents/${agentId}/sessions/${first.sessionId}/runs`, { page: 1, page_size: 1 });
    const page2 = await api.get(`/agents/${agentId}/sessions/${first.sessionId}/runs`, { page: 2, page_size: 1 });
    assert.equal(page1.body.total, 2);
    assert.deepEqual([page1.body.data[0].id, page2.body.data[0].id], [second.runId, first.runId]);
  });

  it('a large output is abridged in the list (start of the text and its size) with a link that answers the whole value', async () => {
    const agentId = await createAgent(api, llmCanvas());
    const long = Array.from({ length: 1500 }, (_, i) => `word${i}`).join(' ');
    fake.behaviour.answer = () => ({ answer: long });
    const { sessionId } = await turn(agentId, 'write a lot');
    const run = (await api.get(`/agents/${agentId}/sessions/${sessionId}/runs`)).body.data[0];
    const llm = run.steps.find((s: any) => s.component_id === 'LLM:Answer');
    const content = llm.outputs.content;
    assert.equal(typeof content, 'object', 'the long content is abridged');
    assert.equal(content.size, Buffer.byteLength(JSON.stringify(long)));
    assert.ok(content.truncated.startsWith('word0 word1 ') && content.truncated.length < 1100);
    assert.match(content.full_value, new RegExp(`^/api/v1/agents/${agentId}/sessions/${sessionId}/runs/${run.id}/steps/${llm.index}/outputs/content$`));
    const full = await api.get(content.full_value.slice('/api/v1'.length));
    assert.equal(full.status, 200, JSON.stringify(full.body));
    assert.equal(full.body.data, long);
    const whole = await api.get(`/agents/${agentId}/sessions/${sessionId}/runs/${run.id}/steps/${llm.index}/outputs`);
    assert.equal(whole.body.data.content, long);
    assert.equal((await api.get(`/agents/${agentId}/sessions/${sessionId}/runs/${run.id}/steps/99/outputs`)).status, 404);
    assert.equal((await api.get(`/agents/${agentId}/sessions/${sessionId}/runs/${run.id}/steps/0/secrets`)).status, 400);
  });

  it('replay from the second LLM makes exactly one model call: the first LLM takes its recorded output', async () => {
    const agentId = await createAgent(api, twoLlmCanvas());
    const { sessionId, runId } = await turn(agentId, 'hello');
    // Were the first LLM asked again, its answer would differ.
    fake.behaviour.answer = (messages) => ({ answer: `Again: ${lastUserMessage(messages)}` });
    const before = modelCalls();
    const res = await postSse(api, `/agents/${agentId}/sessions/${sessionId}/runs/${runId}/replay`, { from_component: 'LLM:Polish' });
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.frames.at(-1), '[DONE]');
    assert.equal(modelCalls() - before, 1, 'only LLM:Polish called the model');
    const events = res.frames.filter((f) => f !== '[DONE]');
    assert.equal(streamedText(events), 'Again: Polish: Echo: hello');
    const draftDone = events.find((e) => e.event === 'node_finished' && e.data.component_id === 'LLM:Draft');
    assert.equal(draftDone.data.reused, true);
    assert.equal(draftDone.data.outputs.content, 'Echo: hello');
    const polishDone = events.find((e) => e.event === 'node_finished' && e.data.component_id === 'LLM:Polish');
    assert.equal(polishDone.data.reused, undefined);
    const replayId = events[0].message_id;
    assert.notEqual(replayId, runId);

    const runs = (await api.get(`/agents/${agentId}/sessions/${sessionId}/runs`)).body.data;
    assert.deepEqual(runs.map((r: any) => r.id), [replayId, runId]);
    assert.equal(runs[0].trigger, 'replay');
    assert.equal(runs[0].replay_of, runId);
    assert.equal(runs[0].from_component, 'LLM:Polish');
    assert.deepEqual(runs[0].steps.map((s: any) => [s.component_id, s.reused]), [
      ['begin', false],
      ['LLM:Draft', true],
      ['LLM:Polish', false],
      ['Message:Out', false],
    ]);
  });

  it("a replay's reference holds the chunks of the reused Retrieval: in message_end, the stored answer and the non-stream answer, and again in a replay of the replay", async () => {
    const ds = await datasetWithChunk(api, { name: `runs-ref-${Date.now()}` }, 'Granite cairns mark the summit trail.');
    const agentId = await createAgent(
      api,
      canvas([
        ['begin', 'Begin', {}, ['Retrieval:Find']],
        ['Retrieval:Find', 'Retrieval', { kb_ids: [ds.id], similarity_threshold: 0 }, ['LLM:Answer']],
        ['LLM:Answer', 'LLM', { prompts: [{ role: 'user', content: '{sys.query}' }] }, ['Message:Out']],
        ['Message:Out', 'Message', { content: ['{LLM:Answer@content}'] }, []],
      ]),
    );
    const recorded = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'what marks the summit trail?', stream: false });
    assert.equal(recorded.status, 200, JSON.stringify(recorded.body));
    const { session_id: sessionId, message_id: runId } = recorded.body.data;
    const chunkIds = (reference: any) => reference.chunks.map((c: any) => c.id);
    const recordedChunks = chunkIds(recorded.body.data.data.reference);
    assert.equal(recordedChunks.length, 1, JSON.stringify(recorded.body.data.data.reference));
    assert.match(recorded.body.data.data.reference.chunks[0].content, /Granite cairns/);

    const base = `/agents/${agentId}/sessions/${sessionId}/runs`;
    const res = await postSse(api, `${base}/${runId}/replay`, { from_component: 'LLM:Answer' });
    assert.equal(res.status, 200, res.raw);
    const events = res.frames.filter((f) => f !== '[DONE]');
    assert.equal(events.find((e) => e.event === 'node_finished' && e.data.component_id === 'Retrieval:Find').data.reused, true);
    assert.deepEqual(chunkIds(events.find((e) => e.event === 'message_end').data.reference), recordedChunks, 'the stream carries the reused chunks');
    assert.equal(events.some((e) => e.event === 'step_reference'), false, 'the record-only event never reaches the caller');
    const replayId = events[0].message_id;
    const stored = (await api.get(`/agents/${agentId}/sessions/${sessionId}`)).body.data.message.find((m: any) => m.role === 'assistant' && m.id === replayId);
    assert.ok(stored, 'the replay answer is stored');
    assert.deepEqual(chunkIds(stored.reference), recordedChunks, 'the stored answer carries the reused chunks');

    // The replay's own record keeps the reused step's chunks: replaying it from the Message (both earlier steps reused) keeps them again.
    const again = await api.post(`${base}/${replayId}/replay`, { from_component: 'Message:Out', stream: false });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual(chunkIds(again.body.data.data.reference), recordedChunks, 'the non-stream answer carries the reused chunks');
  });

  it('replay refuses an unknown run (404), a component that did not run (400), and a session with a running turn (409)', async () => {
    const agentId = await createAgent(api, twoLlmCanvas());
    const { sessionId, runId } = await turn(agentId, 'hello');
    const base = `/agents/${agentId}/sessions/${sessionId}/runs`;
    const unknown = await api.post(`${base}/${'0'.repeat(32)}/replay`, { from_component: 'LLM:Polish' });
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.message, /Run '0{32}' not found in session/);
    const missing = await api.post(`${base}/${runId}/replay`, { from_component: 'LLM:Nowhere' });
    assert.equal(missing.status, 400);
    assert.match(missing.body.message, /Component 'LLM:Nowhere' did not run in run '[0-9a-f]{32}' \(it ran: begin, LLM:Draft, LLM:Polish, Message:Out\)/);
    assert.equal((await api.post(`${base}/${runId}/replay`, {})).status, 400, 'from_component is required');

    fake.behaviour.ttftMs = 3000;
    const slow = api.post('/agents/chat/completions', { agent_id: agentId, query: 'slow', stream: false, session_id: sessionId });
    await eventually(async () => (await api.get(base)).body.data.some((r: any) => r.status === 'running'));
    const busy = await api.post(`${base}/${runId}/replay`, { from_component: 'LLM:Polish' });
    assert.equal(busy.status, 409);
    assert.match(busy.body.message, /still running/);
    assert.equal((await slow).status, 200);
  });

  it("the turn log (GET /agents/{id}/logs/{message_id}) lists an Agent's tool calls in RAGFlow's trace shape; {} for a turn without any", async () => {
    const dsl = canvas([
      ['begin', 'Begin', {}, ['Agent:Lead']],
      ['Agent:Lead', 'Agent', { sys_prompt: 'You lead.', prompts: [{ role: 'user', content: '{sys.query}' }], tools: [{ component_name: 'Agent', name: 'researcher', params: { sys_prompt: 'You research facts.', description: 'Finds facts.' } }] }, ['Message:M']],
      ['Message:M', 'Message', { content: ['{Agent:Lead@content}'] }, []],
    ]);
    const agentId = await createAgent(api, dsl);
    fake.behaviour.answer = (messages) => {
      const system = messages.find((m) => m.role === 'system')?.content ?? '';
      if (system === 'You research facts.') return { answer: 'Fact: 42' };
      const result = messages.find((m) => m.role === 'tool');
      if (result) return { answer: `Lead says: ${result.content}` };
      return { answer: '', tool_calls: [{ name: 'researcher', arguments: { user_prompt: 'the answer' } }] };
    };
    const { runId } = await turn(agentId, 'what is the answer?');
    const logs = await api.get(`/agents/${agentId}/logs/${runId}`);
    assert.equal(logs.status, 200, JSON.stringify(logs.body));
    assert.equal(logs.body.data.length, 1);
    const [entry] = logs.body.data;
    assert.equal(entry.component_id, 'Agent:Lead');
    assert.equal(entry.trace.length, 1);
    assert.equal(entry.trace[0].tool_name, 'researcher');
    assert.equal(entry.trace[0].path, 'Agent:Lead-->researcher');
    assert.deepEqual(entry.trace[0].arguments, { user_prompt: 'the answer' });
    assert.match(String(entry.trace[0].result), /Fact: 42/);
    assert.equal(typeof entry.trace[0].elapsed_time, 'number');

    fake.behaviour.answer = echoAnswer;
    const plain = await createAgent(api, llmCanvas());
    const other = await turn(plain, 'hi');
    assert.deepEqual((await api.get(`/agents/${plain}/logs/${other.runId}`)).body.data, {});
    const malformed = await api.get(`/agents/${plain}/logs/${'0'.repeat(300)}`);
    assert.equal(malformed.status, 404, 'a value that cannot be a message id is not found');
    assert.deepEqual((await api.get(`/agents/${plain}/logs/${runId}`)).body.data, {}, "another agent's turn is not this agent's log");
  });

  it("another tenant sees none of a session's runs, steps or logs, and cannot replay them (404)", async () => {
    const agentId = await createAgent(api, llmCanvas());
    const { sessionId, runId } = await turn(agentId, 'private');
    const { api: stranger } = await newUser('agent-runs-stranger');
    const base = `/agents/${agentId}/sessions/${sessionId}/runs`;
    for (const path of [base, `${base}/${runId}`, `${base}/${runId}/steps/0/outputs`, `/agents/${agentId}/logs/${runId}`]) {
      const res = await stranger.get(path);
      assert.equal(res.status, 404, `${path}: ${JSON.stringify(res.body)}`);
    }
    assert.equal((await stranger.post(`${base}/${runId}/replay`, { from_component: 'LLM:Answer' })).status, 404);
  });

  it('deleting a session deletes its runs', async () => {
    const agentId = await createAgent(api, llmCanvas());
    const { sessionId, runId } = await turn(agentId, 'bye');
    assert.equal((await api.delete(`/agents/${agentId}/sessions/${sessionId}`)).status, 200);
    const { store } = await (await harness()).backends();
    assert.equal(await store.agentRuns.byId(runId), undefined);
  });
});
