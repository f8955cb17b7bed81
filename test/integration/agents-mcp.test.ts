import assert from 'node:assert/strict';
import { startFakeOpenAI, toolRoundTrip, type FakeOpenAI } from '../fakes/index.js';
import { newUser, type Api } from './client.js';
import { addModelServer, userWithModel } from './chat-helpers.js';
import { canvas, createAgent } from './agent-helpers.js';

describe('agents: tools of an MCP server configured for the tenant', function () {
  this.timeout(120_000);
  let fake: FakeOpenAI;
  let api: Api;
  let serverId: string;

  before(async () => {
    fake = await startFakeOpenAI();
    ({ api } = await userWithModel('mcp-tools', fake.baseUrl));
    await api.post('/datasets', { name: `mcp-visible-${Date.now()}` });
    // Cairn is an MCP server itself: the tenant registers it, with its API key as the credential.
    const res = await api.post('/mcp/servers', { name: 'cairn itself', url: new URL('/mcp', api.url).toString(), headers: { Authorization: `Bearer ${api.key}` } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    serverId = res.body.data.id;
  });
  after(() => fake.close());

  it('the server is listed without its header values, and test lists its tools', async () => {
    const list = (await api.get('/mcp/servers')).body.data;
    const mine = list.mcp_servers.find((s: any) => s.id === serverId);
    assert.deepEqual(mine.header_names, ['Authorization']);
    assert.ok(!JSON.stringify(list).includes(api.key!), 'the key is never shown');
    const tools = await api.post(`/mcp/servers/${serverId}/test`);
    assert.equal(tools.status, 200, JSON.stringify(tools.body));
    assert.deepEqual(tools.body.data.tools.map((t: any) => t.name).sort(), ['list_chat_assistants', 'list_datasets', 'retrieve']);
  });

  it("an Agent offers the chosen MCP tools to the model and answers from the tool's result", async () => {
    const dsl = canvas([
      ['begin', 'Begin', {}, ['Agent:A']],
      ['Agent:A', 'Agent', { sys_prompt: 'Use tools.', prompts: [{ role: 'user', content: '{sys.query}' }], mcp: [{ mcp_id: serverId, tools: { list_datasets: {} } }] }, ['Message:M']],
      ['Message:M', 'Message', { content: ['{Agent:A@content}'] }, []],
    ]);
    const agentId = await createAgent(api, dsl);
    fake.behaviour.answer = toolRoundTrip('list_datasets', {}, (result) => (result.includes('mcp-visible-') ? 'You have the dataset.' : `Unexpected: ${result.slice(0, 200)}`));
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'which datasets do I have?', stream: false });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.data.content, 'You have the dataset.');
    const offered = fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-2)!.body.tools.map((t: any) => t.function.name);
    assert.deepEqual(offered, ['list_datasets'], 'only the chosen tool is offered');
  });

  it("another tenant can neither see the server nor use it in an agent", async () => {
    const other = await newUser('mcp-other');
    assert.equal((await other.api.get(`/mcp/servers/${serverId}`)).status, 404);
    assert.equal((await other.api.post(`/mcp/servers/${serverId}/test`)).status, 404);
    assert.equal((await other.api.delete(`/mcp/servers/${serverId}`)).status, 404);
    await addModelServer(other.api, fake.baseUrl);
    const dsl = canvas([
      ['begin', 'Begin', {}, ['Agent:A']],
      ['Agent:A', 'Agent', { mcp: [{ mcp_id: serverId, tools: {} }] }, []],
    ]);
    const agentId = await createAgent(other.api, dsl);
    const res = await other.api.post('/agents/chat/completions', { agent_id: agentId, query: 'x', stream: false });
    assert.equal(res.status, 400);
    assert.match(res.body.message, new RegExp(`MCP server '${serverId}' not found`));
  });
});
