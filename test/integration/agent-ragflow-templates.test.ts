import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { lastUserMessage, startFakeOpenAI, type FakeMessage, type FakeOpenAI } from '../fakes/index.js';
import type { Api } from './client.js';
import { parsedDataset, userWithModel } from './chat-helpers.js';
import { createAgent, fixture, runStream, streamedText } from './agent-helpers.js';
import { externalComponentError } from '../../src/agents/external.js';

/** RAGFlow's agent-canvas templates (test/fixtures/agents/README.md): the 15 at commit b1b8cd6. */
const TEMPLATES = [
  'cajal_scientific_paper_agent',
  'customer_feedback_dispatcher',
  'data_analysis_beginner_assistant',
  'deep_research',
  'market_seo_article_writer',
  'photo_text_translator',
  'reflective_academic_paper_generator',
  'seo_article_writer',
  'smart_customer_service_specialist',
  'stock_market_research_assistant',
  'text2sql_data_expert',
  'trip_planner',
  'user_interaction',
  'web_search_assistant',
  'your_starter_dataset_chatbot',
];

const WEB_TOOLS = ['TavilySearch', 'TavilyExtract', 'Google', 'Bing', 'DuckDuckGo', 'Wikipedia'];

/**
 * The template with what only a test may set (fixtures README): every `llm_id` names the fake model and
 * every `kb_ids` the test's dataset, at any depth (components, tools, sub-agents' tools).
 */
function wired(name: string, modelId: string, datasetId: string): Record<string, any> {
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (!v || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    if ('llm_id' in o) o.llm_id = modelId;
    if ('kb_ids' in o) o.kb_ids = [datasetId];
    Object.values(o).forEach(visit);
  };
  const dsl = fixture(name);
  visit(dsl.components);
  return dsl;
}

/** Tool results after the last user message: what the tools said in this Agent's loop. */
const toolResults = (messages: FakeMessage[]) => messages.slice(messages.map((m) => m.role).lastIndexOf('user') + 1).filter((m) => m.role === 'tool');

describe("RAGFlow's agent templates: every one imports unchanged; CodeExec runs as an Agent tool; outside-service tools and components fail naming what to use instead", function () {
  this.timeout(120_000);
  let fake: FakeOpenAI;
  let api: Api;
  let modelId: string;
  let datasetId: string;

  before(async () => {
    fake = await startFakeOpenAI();
    ({ api, modelId } = await userWithModel('agent-ragflow-templates', fake.baseUrl));
    datasetId = (await parsedDataset(api, `ragflow-templates-${Date.now()}`, { 'cairns.txt': 'A cairn is a human-made pile of stones. Hikers use cairns to mark trails above the tree line.' })).id;
  });
  beforeEach(() => fake.clear());
  after(() => fake.close());

  it('the fixtures are exactly the agent canvases of RAGFlow\'s templates', () => {
    const dir = path.join(import.meta.dirname, '..', 'fixtures', 'agents');
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, '')).sort(), TEMPLATES);
  });

  it('POST /agents accepts every template as shipped, and stores its components unchanged', async () => {
    for (const name of TEMPLATES) {
      const dsl = fixture(name);
      const res = await api.post('/agents', { title: `${name}-${process.pid}`, dsl });
      assert.equal(res.status, 200, `${name}: ${JSON.stringify(res.body)}`);
      const stored = await api.get(`/agents/${res.body.data.id}`);
      assert.equal(stored.status, 200, JSON.stringify(stored.body));
      assert.deepEqual(stored.body.data.dsl.components, dsl.components, `${name}: components stored as given`);
    }
  });

  it("data_analysis_beginner_assistant: the model's CodeExec call (execute_code) runs its Python in the sandbox, and the value it computed reaches the answer", async () => {
    const script = 'def main():\n    sales = [1250, 980, 1430, 1115]\n    print("quarters:", len(sales))\n    return {"total": sum(sales)}\n';
    fake.behaviour.answer = (messages, _model, request) => {
      const results = toolResults(messages);
      if (results.length) return { answer: `The total is ${JSON.parse(results[0]!.content).result.total} (${JSON.parse(results[0]!.content).stdout.trim()}).` };
      assert.deepEqual(request?.tools.map((t) => t.name), ['execute_code'], 'the Agent offers RAGFlow\'s execute_code');
      return { answer: '', tool_calls: [{ name: 'execute_code', arguments: { lang: 'python', script } }] };
    };
    const agentId = await createAgent(api, wired('data_analysis_beginner_assistant', modelId, datasetId));
    const { events } = await runStream(api, { agent_id: agentId, query: 'What were the total sales over the four quarters?' });
    assert.equal(streamedText(events), 'The total is 4775 (quarters: 4).');
    const finished = events.find((e) => e.event === 'tool_finished');
    assert.ok(finished, 'the tool call is reported');
    assert.equal(finished.data.component_id, 'Agent:SillyStatesRun');
    assert.equal(finished.data.path, 'Agent:SillyStatesRun-->execute_code');
    assert.equal(finished.data.tool_type, 'CodeExec');
    assert.deepEqual(finished.data.arguments, { lang: 'python', script });
    assert.equal(finished.data.error, null);
    assert.match(finished.data.result, /"total":4775/);
    const agentDone = events.find((e) => e.event === 'node_finished' && e.data.component_id === 'Agent:SillyStatesRun');
    assert.deepEqual(agentDone.data.tool_calls.map((t: any) => [t.tool_name, JSON.parse(t.result)]), [['execute_code', { result: { total: 4775 }, stdout: 'quarters: 4\n' }]], "the whole result is in the Agent's tool_calls");
    assert.ok(events.some((e) => e.event === 'workflow_finished'));
  });

  it("web_search_assistant: each web tool (Bing, Google, DuckDuckGo, Wikipedia, Tavily) answers the model that it needs an outside service and to use a Retrieval tool over your datasets instead; the run still finishes", async () => {
    fake.behaviour.answer = (messages, _model, request) => {
      const offered = request?.tools.map((t) => t.name) ?? [];
      const results = toolResults(messages);
      if (offered.includes('Bing') && !results.length) return { answer: '', tool_calls: offered.map((name) => ({ name, arguments: { query: 'what is a cairn' } })) };
      if (results.length) return { answer: `Web search failed: ${results.map((r) => r.content).join(' / ')}` };
      const question = lastUserMessage(messages);
      if (question.includes('Web search result:')) return { answer: `Final. ${question.split('Web search result:\n')[1]!.split('\n')[0]}` };
      return { answer: 'What is a cairn?' };
    };
    const agentId = await createAgent(api, wired('web_search_assistant', modelId, datasetId));
    const { events } = await runStream(api, { agent_id: agentId, query: 'cairn?' });
    const finished = events.filter((e) => e.event === 'tool_finished');
    assert.deepEqual(finished.map((e) => e.data.tool_name).sort(), [...WEB_TOOLS].sort());
    for (const e of finished) {
      assert.equal(e.data.error, externalComponentError(e.data.tool_type), `${e.data.tool_name}: the error`);
      assert.match(e.data.error, new RegExp(`^${e.data.tool_type} needs .*, an outside service Cairn does not provide; use `));
    }
    assert.match(finished.find((e) => e.data.tool_name === 'Bing').data.error, /^Bing needs the Bing web search API, .*; use a Retrieval tool over your datasets instead$/);
    const toolMessages = fake.requests.flatMap((r) => (r.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool').map((m) => m.content));
    for (const name of WEB_TOOLS) assert.ok(toolMessages.includes(`Error: ${externalComponentError(name)}`), `the model read ${name}'s error`);
    const text = streamedText(events);
    assert.match(text, /^Final\. Web search failed: Error: TavilySearch needs/);
    assert.ok(events.some((e) => e.event === 'workflow_finished'), 'the run finished');
    assert.ok(!events.some((e) => e.data?.code === 500), 'without an error frame');
  });

  it('stock_market_research_assistant: a stock the first Agent finds goes to the YahooFinance component, which fails the run naming what is missing and to use an Invoke component instead; "Not Found" ends with its Message', async () => {
    fake.behaviour.answer = (messages) => ({ answer: lastUserMessage(messages).includes('Acme') ? 'ACME' : 'Not Found' });
    const agentId = await createAgent(api, wired('stock_market_research_assistant', modelId, datasetId));
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'How is Acme doing?', stream: false });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.ok(res.body.message.startsWith(`Component 'YahooFinance:QuickAdsDig' (YahooFinance`) && res.body.message.endsWith(`) failed: ${externalComponentError('YahooFinance')}`), res.body.message);
    assert.equal(res.body.data.component_id, 'YahooFinance:QuickAdsDig');
    assert.match(res.body.message, /YahooFinance needs the Yahoo Finance API, an outside service Cairn does not provide; use an Invoke component/);
    const other = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'Tell me a joke', stream: false });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.equal(other.body.data.data.content, 'Your query is not supported.');
  });

  it("text2sql_data_expert: the ExeSQL component fails the run naming what is missing (an SQL database server) and that Cairn has nothing local for it", async () => {
    fake.behaviour.answer = () => ({ answer: 'SELECT COUNT(*) FROM trails;' });
    const agentId = await createAgent(api, wired('text2sql_data_expert', modelId, datasetId));
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'How many trails are there?', stream: false });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.ok(res.body.message.startsWith(`Component 'ExeSQL:TiredShirtsPull' (ExeSQL`) && res.body.message.endsWith(`) failed: ${externalComponentError('ExeSQL')}`), res.body.message);
    assert.equal(res.body.data.component_id, 'ExeSQL:TiredShirtsPull');
    assert.match(res.body.message, /ExeSQL needs an SQL database server, an outside service Cairn does not provide; Cairn has nothing local that does this/);
  });

  it('photo_text_translator: a photo attached to the turn reaches the model as an image beside the question (visual_files_var sys.files)', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
    const agentId = await createAgent(api, wired('photo_text_translator', modelId, datasetId));
    const form = new FormData();
    form.append('file', new Blob([png], { type: 'image/png' }), 'menu.png');
    const up = await api.request('POST', `/agents/${agentId}/upload`, { raw: form });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    fake.behaviour.answer = () => ({ answer: 'Soup of the day.' });
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'Translate the menu into English', stream: false, files: [up.body.data] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.data.data.content, /Soup of the day\./);
    const sent = fake.requests.find((r) => r.path === '/v1/chat/completions')!.body.messages as { role: string; content: unknown }[];
    const user = sent.filter((m) => m.role === 'user').at(-1)!;
    assert.ok(Array.isArray(user.content), 'the question goes as content parts with the image');
    const parts = user.content as { type: string; text?: string; image_url?: { url: string } }[];
    assert.match(parts[0]!.text!, /Translate the menu into English/);
    assert.deepEqual(parts.slice(1), [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } }]);
  });
});
