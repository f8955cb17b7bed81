import assert from 'node:assert/strict';
import { fixedAnswer, startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import { newUser, type Api } from './client.js';
import { userWithModel } from './chat-helpers.js';
import { canvas, createAgent, llmCanvas } from './agent-helpers.js';
import { harness } from './harness.js';
import { agentAttachmentKey } from '../../src/services/blob-keys.js';

/** Uploads files to an agent as multipart/form-data (field `file`, repeated). */
async function upload(api: Api, agentId: string, files: { name: string; type: string; body: string }[]) {
  const form = new FormData();
  for (const f of files) form.append('file', new Blob([f.body], { type: f.type }), f.name);
  return api.request('POST', `/agents/${agentId}/upload`, { raw: form });
}

describe('agent editor routes: reset, input form, component debug, uploads and sys.files, prompts, tags, rerun', function () {
  this.timeout(120_000);
  let fake: FakeOpenAI;
  let api: Api;
  let stranger: Api;
  let ownerId: string;

  before(async () => {
    fake = await startFakeOpenAI();
    ({ api, userId: ownerId } = await userWithModel('agent-canvas', fake.baseUrl));
    ({ api: stranger } = await newUser('agent-canvas-stranger'));
  });
  beforeEach(() => {
    fake.clear();
    fake.behaviour = { ...fake.behaviour, answer: fixedAnswer('ok'), ttftMs: 0, tokenDelayMs: 0, failure: undefined };
  });
  after(() => fake.close());

  const chatRequests = () => fake.requests.filter((r) => r.path === '/v1/chat/completions');

  it('an uploaded TXT reaches the canvas as sys.files text, so the model receives the file content', async () => {
    const agentId = await createAgent(api, llmCanvas({ prompts: [{ role: 'user', content: 'Files: {sys.files} Question: {sys.query}' }] }));
    const up = await upload(api, agentId, [{ name: 'notes.txt', type: 'text/plain', body: 'The cairn marks the trail to Skagastolstind.' }]);
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const info = up.body.data;
    assert.equal(info.name, 'notes.txt');
    assert.equal(info.extension, 'txt');
    assert.equal(info.mime_type, 'text/plain');
    assert.equal(info.size, 44);
    assert.equal(typeof info.created_at, 'number');
    assert.equal(info.preview_url, `/api/v1/agents/attachments/${info.id}/preview`);
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'Where?', stream: false, files: [info] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const prompt = JSON.stringify(chatRequests().at(-1)!.body.messages);
    assert.match(prompt, /The cairn marks the trail to Skagastolstind\./);
  });

  it('several files upload at once (a list back), and preview, download and download?id= return the bytes with their type', async () => {
    const agentId = await createAgent(api, llmCanvas());
    const up = await upload(api, agentId, [
      { name: 'a.txt', type: 'text/plain', body: 'alpha' },
      { name: 'b.md', type: 'application/octet-stream', body: '# beta' },
    ]);
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.equal(up.body.data.length, 2);
    const [a, b] = up.body.data;
    const preview = await api.get(`/agents/attachments/${a.id}/preview`);
    assert.equal(preview.status, 200);
    assert.equal(preview.body, 'alpha');
    assert.match(preview.headers.get('content-type')!, /^text\/plain/);
    assert.match(preview.headers.get('content-disposition')!, /^inline/);
    const download = await api.get(`/agents/attachments/${b.id}/download`);
    assert.equal(download.body, '# beta');
    assert.match(download.headers.get('content-disposition')!, /^attachment; filename="?b\.md"?/);
    const byId = await api.get('/agents/download', { id: a.id });
    assert.equal(byId.status, 200);
    assert.equal(byId.body, 'alpha');
  });

  it("another tenant cannot upload to, read, or attach an agent's files: 404s that say nothing", async () => {
    const agentId = await createAgent(api, llmCanvas());
    const { body } = await upload(api, agentId, [{ name: 'secret.txt', type: 'text/plain', body: 'top secret' }]);
    const id = body.data.id;
    assert.equal((await upload(stranger, agentId, [{ name: 'x.txt', type: 'text/plain', body: 'x' }])).status, 404);
    for (const path of [`/agents/attachments/${id}/preview`, `/agents/attachments/${id}/download`]) {
      const res = await stranger.get(path);
      assert.equal(res.status, 404);
      assert.doesNotMatch(JSON.stringify(res.body), /secret/);
    }
    assert.equal((await stranger.get('/agents/download', { id })).status, 404);
    const strangerAgent = await createAgent(stranger, llmCanvas());
    const turn = await stranger.post('/agents/chat/completions', { agent_id: strangerAgent, query: 'q', stream: false, files: [{ id }] });
    assert.equal(turn.status, 404);
    assert.match(turn.body.message, /File '.*' not found/);
    assert.equal(chatRequests().length, 0, 'no model call for a refused turn');
  });

  it("deleting an agent deletes the bytes of its uploaded files; a stranger's delete leaves them", async () => {
    const agentId = await createAgent(api, llmCanvas());
    const { body } = await upload(api, agentId, [{ name: 'gone.txt', type: 'text/plain', body: 'to be deleted' }]);
    const { blobs } = await (await harness()).backends();
    const key = agentAttachmentKey(ownerId, body.data.id);
    assert.equal((await stranger.delete(`/agents/${agentId}`)).status, 404);
    assert.ok(await blobs.get(key), 'a refused delete leaves the file');
    assert.equal((await api.delete(`/agents/${agentId}`)).status, 200);
    assert.equal(await blobs.get(key), undefined, 'the stored bytes are gone with the agent');
    assert.equal((await api.get(`/agents/attachments/${body.data.id}/preview`)).status, 404);
  });

  it('a completion naming a file that was never uploaded, or a file that is not an object or id, is a 4xx', async () => {
    const agentId = await createAgent(api, llmCanvas());
    assert.equal((await api.post('/agents/chat/completions', { agent_id: agentId, query: 'q', stream: false, files: [{ id: '0'.repeat(32) }] })).status, 404);
    assert.equal((await api.post('/agents/chat/completions', { agent_id: agentId, query: 'q', stream: false, files: [42] })).status, 400);
    const noFile = await api.request('POST', `/agents/${agentId}/upload`, { raw: new FormData() });
    assert.equal(noFile.status, 400);
  });

  it("reset clears the DSL's run state and returns it", async () => {
    const dsl = { ...llmCanvas(), history: [['user', 'hi'], ['assistant', 'hello']], path: ['begin', 'LLM:Answer'], globals: { 'sys.query': 'hi', 'sys.conversation_turns': 3, 'sys.files': ['x'], 'env.city': 'Oslo' }, variables: { city: { type: 'string', value: 'Bergen' } } };
    const agentId = await createAgent(api, dsl);
    const res = await api.post(`/agents/${agentId}/reset`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const out = res.body.data;
    assert.deepEqual(out.history, []);
    assert.deepEqual(out.path, []);
    assert.equal(out.globals['sys.query'], '');
    assert.equal(out.globals['sys.conversation_turns'], 0);
    assert.deepEqual(out.globals['sys.files'], []);
    assert.equal(out.globals['env.city'], 'Bergen');
    assert.ok(out.components['LLM:Answer'], 'components stay');
    const saved = (await api.get(`/agents/${agentId}`)).body.data.dsl;
    assert.deepEqual(saved.history, []);
    assert.equal((await stranger.post(`/agents/${agentId}/reset`)).status, 404);
  });

  it("a component's input form lists what it reads, RAGFlow's shape; a missing component is a 404", async () => {
    const dsl = canvas([
      ['begin', 'Begin', { mode: 'task', inputs: { city: { name: 'City', type: 'line' } } }, ['LLM:Answer']],
      ['LLM:Answer', 'LLM', { sys_prompt: 'You help with {begin@city}.', prompts: [{ role: 'user', content: '{sys.query}' }] }, ['Categorize:Kind']],
      ['Categorize:Kind', 'Categorize', { category_description: { a: { to: ['Message:A'] } } }, ['Message:A']],
      ['Message:A', 'Message', { content: ['a'] }, []],
    ]);
    const agentId = await createAgent(api, dsl);
    const llm = await api.get(`/agents/${agentId}/components/LLM:Answer/input-form`);
    assert.equal(llm.status, 200, JSON.stringify(llm.body));
    assert.deepEqual(llm.body.data, { 'begin@city': { type: 'line', name: 'node begin@city' }, 'sys.query': { type: 'line', name: 'sys.query' } });
    assert.deepEqual((await api.get(`/agents/${agentId}/components/begin/input-form`)).body.data, { city: { name: 'City', type: 'line' } });
    assert.deepEqual((await api.get(`/agents/${agentId}/components/Categorize:Kind/input-form`)).body.data, { query: { type: 'line', name: 'Query' } });
    const missing = await api.get(`/agents/${agentId}/components/LLM:Nope/input-form`);
    assert.equal(missing.status, 404);
    assert.match(missing.body.message, /Component 'LLM:Nope' not found/);
    assert.equal((await stranger.get(`/agents/${agentId}/components/LLM:Answer/input-form`)).status, 404);
  });

  it('debug runs one LLM component as a workflow with the given inputs and returns its outputs', async () => {
    fake.behaviour.answer = fixedAnswer('Bring a map.');
    const dsl = canvas([
      ['begin', 'Begin', { mode: 'task', inputs: { city: { name: 'City', type: 'line' } } }, ['LLM:Answer']],
      ['LLM:Answer', 'LLM', { sys_prompt: 'You help with {begin@city}.', prompts: [{ role: 'user', content: '{sys.query}' }] }, ['Message:Out']],
      ['Message:Out', 'Message', { content: ['{LLM:Answer@content}'] }, []],
    ]);
    const agentId = await createAgent(api, dsl);
    const res = await api.post(`/agents/${agentId}/components/LLM:Answer/debug`, { params: { 'begin@city': { value: 'Tromso' }, 'sys.query': { value: 'What to pack?' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.content, 'Bring a map.');
    assert.equal(typeof res.body.data._elapsed_time, 'number');
    const messages = chatRequests().at(-1)!.body.messages;
    assert.equal(messages[0].content, 'You help with Tromso.');
    assert.equal(messages.at(-1).content, 'What to pack?');
    // A pure component runs too: the Message renders its template with the given value.
    const msg = await api.post(`/agents/${agentId}/components/Message:Out/debug`, { params: { 'LLM:Answer@content': { value: 'Hello there' } } });
    assert.equal(msg.body.data.content, 'Hello there');
  });

  it('debug refuses a missing component (404), an input the component does not take (400), a missing params (400), and strangers (404)', async () => {
    const agentId = await createAgent(api, llmCanvas());
    const missing = await api.post(`/agents/${agentId}/components/LLM:Nope/debug`, { params: {} });
    assert.equal(missing.status, 404);
    const unknown = await api.post(`/agents/${agentId}/components/LLM:Answer/debug`, { params: { colour: { value: 'red' } } });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.message, /takes no input 'colour'/);
    assert.equal((await api.post(`/agents/${agentId}/components/LLM:Answer/debug`, {})).status, 400);
    assert.equal((await stranger.post(`/agents/${agentId}/components/LLM:Answer/debug`, { params: {} })).status, 404);
    assert.equal(chatRequests().length, 0);
  });

  it("prompts answers RAGFlow's keys with Cairn's texts", async () => {
    const res = await api.get('/agents/prompts');
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body.data).sort(), ['citation_guidelines', 'plan_generation', 'reflection', 'task_analysis']);
    for (const text of Object.values(res.body.data)) assert.ok(typeof text === 'string' && text.length > 50);
  });

  it('tags: set on an agent, returned with it, counted per tenant, and filter the agent list', async () => {
    const { api: owner } = await newUser('agent-tags');
    const a = await createAgent(owner, llmCanvas());
    const b = await createAgent(owner, llmCanvas());
    const set = await owner.put(`/agents/${a}/tags`, { tags: ['support', 'ml', 'ML', ' '] });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.data, true);
    await owner.put(`/agents/${b}/tags`, { tags: 'support,ml-ops' });
    assert.equal((await owner.get(`/agents/${a}`)).body.data.tags, 'support,ml');
    assert.deepEqual((await owner.get('/agents/tags')).body.data, [{ tag: 'support', count: 2 }, { tag: 'ml', count: 1 }, { tag: 'ml-ops', count: 1 }]);
    const ml = (await owner.get('/agents', { tags: 'ml' })).body.data;
    assert.deepEqual(ml.canvas.map((c: { id: string }) => c.id), [a], "'ml' does not match 'ml-ops'");
    assert.equal((await owner.get('/agents', { tags: 'support' })).body.data.total, 2);
    assert.deepEqual((await stranger.get('/agents/tags')).body.data, [], "another tenant sees none of them");
    const denied = await stranger.put(`/agents/${a}/tags`, { tags: ['x'] });
    assert.equal(denied.status, 404);
    assert.equal(denied.body.message, 'Agent not found or no permission.');
    assert.equal((await owner.put(`/agents/${a}/tags`, { tags: 7 })).status, 400);
  });

  it('rerun: an unknown or foreign ingestion log is "Document not found.", and id, dsl, component_id are required', async () => {
    const res = await api.post('/agents/rerun', { id: `${'0'.repeat(32)}-1`, dsl: { components: { 'Parser:A': {} } }, component_id: 'Parser:A' });
    assert.equal(res.status, 404);
    assert.equal(res.body.message, 'Document not found.');
    assert.equal((await api.post('/agents/rerun', { id: 'x', dsl: {} })).status, 400);
  });
});
