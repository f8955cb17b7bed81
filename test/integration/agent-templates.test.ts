import assert from 'node:assert/strict';
import { lastUserMessage, toolRoundTrip, startFakeOpenAI, type AnswerScript, type FakeMessage, type FakeOpenAI } from '../fakes/index.js';
import type { Api } from './client.js';
import { parsedDataset, userWithModel } from './chat-helpers.js';
import { runStream, streamedText } from './agent-helpers.js';
import { validateDsl } from '../../src/agents/validate.js';

const TEMPLATE_IDS = ['assistant_with_memory', 'batch_summarizer', 'customer_service', 'dataset_chatbot', 'feedback_dispatcher', 'interactive_planner', 'refine_writer'];

const DOCS = {
  'cairns.txt': 'A cairn is a human-made pile of stones. Hikers use cairns to mark trails across bare rock and above the tree line.',
  'kettle-manual.txt': 'Kettle K2 manual. The kettle switches itself off when the water boils. To descale the kettle, fill it with equal parts water and white vinegar, bring it to the boil, then rinse it twice with clean water.',
  'returns-policy.txt': 'Returns policy. You may return any item within 30 days of delivery for a full refund. Refunds are paid to the original payment method within 5 business days.',
};

const systemOf = (messages: FakeMessage[]) => messages.find((m) => m.role === 'system')?.content ?? '';

/** The `[ID:n]` of the passage that contains `needle` in a formalized retrieval result ("ID: n" blocks). */
function citationOf(passages: string, needle: string): string | undefined {
  const block = passages.split(/\n(?=ID: \d+\n)/).find((b) => b.includes(needle));
  const id = block ? /ID: (\d+)/.exec(block)?.[1] : undefined;
  return id === undefined ? undefined : `[ID:${id}]`;
}

/** The reference chunk a `[ID:n]` citation names. */
function cited(reference: any, answer: string): any {
  const id = /\[ID:(\d+)\]/.exec(answer)?.[1];
  assert.ok(id !== undefined, `the answer cites a passage: ${answer}`);
  return reference.chunks[Number(id)];
}

const finishedIds = (events: any[]) => events.filter((e) => e.event === 'node_finished').map((e) => e.data.component_id);

describe('agent templates: listed, created in one call, each runs end to end with a chat model and datasets', function () {
  this.timeout(120_000);
  let fake: FakeOpenAI;
  let api: Api;
  let datasetId: string;
  let seq = 0;

  before(async () => {
    fake = await startFakeOpenAI();
    ({ api } = await userWithModel('agent-templates', fake.baseUrl));
    datasetId = (await parsedDataset(api, `templates-${Date.now()}`, DOCS)).id;
  });
  beforeEach(() => {
    fake.behaviour = { ...fake.behaviour, ttftMs: 0, tokenDelayMs: 0, failure: undefined };
    fake.clear();
  });
  after(() => fake.close());

  const chatRequests = () => fake.requests.filter((r) => r.path === '/v1/chat/completions');

  /** One call: POST /agents with template_id (and the test dataset for every Retrieval). */
  async function fromTemplate(templateId: string, withDataset = true): Promise<string> {
    const res = await api.post('/agents', { template_id: templateId, title: `${templateId}-${process.pid}-${++seq}`, ...(withDataset ? { dataset_ids: [datasetId] } : {}) });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data.id;
  }

  it('GET /agents/templates lists the seven agent templates in RAGFlow\'s format (then the pipelines\'); every DSL passes validateDsl, names each component in its graph and leaves kb_ids empty', async () => {
    const res = await api.get('/agents/templates');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const templates: any[] = res.body.data.filter((t: any) => t.canvas_category === 'agent_canvas');
    assert.deepEqual(templates.map((t) => t.id), TEMPLATE_IDS);
    assert.deepEqual(res.body.data.filter((t: any) => t.canvas_category === 'dataflow_canvas').map((t: any) => t.id), ['general']);
    for (const t of templates) {
      assert.ok(t.title.en && t.title.de && t.title.zh, `${t.id}: titles`);
      assert.ok(t.description.en && t.description.de && t.description.zh, `${t.id}: descriptions`);
      assert.equal(typeof t.canvas_type, 'string');
      assert.doesNotThrow(() => validateDsl(t.dsl), `${t.id} validates`);
      const nodes = new Map<string, any>(t.dsl.graph.nodes.map((n: any) => [n.id, n]));
      for (const [id, c] of Object.entries<any>(t.dsl.components)) {
        const node = nodes.get(id);
        assert.ok(node?.data?.name, `${t.id}: component ${id} has a named graph node`);
        assert.equal(node.data.label, c.obj.component_name);
        for (const down of c.downstream) {
          assert.ok(t.dsl.graph.edges.some((e: any) => e.source === id && e.target === down), `${t.id}: edge ${id} → ${down}`);
        }
        const retrievals = [c.obj.component_name === 'Retrieval' ? c.obj.params : undefined, ...(c.obj.params.tools ?? []).map((tool: any) => tool.params)].filter(Boolean);
        for (const r of retrievals) assert.deepEqual(r.kb_ids, [], `${t.id}: ${id} leaves the datasets to the user`);
      }
    }
  });

  it('POST /agents with template_id creates the agent in one call: the English title (made unique when taken) and dataset_ids in every Retrieval, editor forms included', async () => {
    const first = await api.post('/agents', { template_id: 'customer_service', dataset_ids: [datasetId] });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const second = await api.post('/agents', { template_id: 'customer_service' });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(first.body.data.title, 'Customer service specialist');
    assert.equal(second.body.data.title, 'Customer service specialist(1)');
    assert.equal(first.body.data.canvas_type, 'Customer Support');
    assert.match(first.body.data.description, /support assistant/);

    const dsl = first.body.data.dsl;
    for (const id of ['Retrieval:ProductDocs', 'Retrieval:PolicyDocs']) {
      assert.deepEqual(dsl.components[id].obj.params.kb_ids, [datasetId]);
      assert.deepEqual(dsl.graph.nodes.find((n: any) => n.id === id).data.form.kb_ids, [datasetId]);
    }
    assert.deepEqual(second.body.data.dsl.components['Retrieval:ProductDocs'].obj.params.kb_ids, [], 'without dataset_ids the datasets stay to be chosen');

    const chatbot = await api.post('/agents', { template_id: 'dataset_chatbot', title: `chatbot-${process.pid}`, dataset_ids: [datasetId] });
    assert.equal(chatbot.body.data.title, `chatbot-${process.pid}`);
    assert.deepEqual(chatbot.body.data.dsl.components['Agent:DatasetAnswerer'].obj.params.tools[0].params.kb_ids, [datasetId], 'an Agent\'s Retrieval tool too');
    assert.deepEqual(chatbot.body.data.dsl.graph.nodes.find((n: any) => n.id === 'Agent:DatasetAnswerer').data.form.tools[0].params.kb_ids, [datasetId]);

    const unknown = await api.post('/agents', { template_id: 'nope' });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.message, /No agent template 'nope'/);
    const both = await api.post('/agents', { template_id: 'dataset_chatbot', dsl: { components: {} } });
    assert.equal(both.status, 400);
    assert.match(both.body.message, /either dsl or template_id/);
    const missing = await api.post('/agents', { template_id: 'dataset_chatbot', dataset_ids: ['0'.repeat(32)] });
    assert.equal(missing.status, 404);
    const neither = await api.post('/agents', { title: 'no dsl' });
    assert.equal(neither.status, 400);
    assert.equal(neither.body.message, 'No DSL data in request.');
  });

  it('dataset chatbot: the agent searches the dataset, its prompt asks for [ID:n] citations, and the cited passage is in the answer\'s reference', async () => {
    const agentId = await fromTemplate('dataset_chatbot');
    fake.behaviour.answer = toolRoundTrip('search_my_dateset', (q) => ({ query: q }), (result) => {
      const cite = citationOf(result, 'mark trails');
      return cite ? `Hikers use cairns to mark trails ${cite}.` : 'I cannot find this in the datasets.';
    });
    const { events } = await runStream(api, { agent_id: agentId, query: 'what do hikers use cairns for' });
    const answer = streamedText(events);
    assert.match(answer, /^Hikers use cairns to mark trails \[ID:\d+\]\.$/);
    const reference = events.find((e) => e.event === 'message_end').data.reference;
    assert.equal(cited(reference, answer).document_name, 'cairns.txt');
    const first = chatRequests()[0]!.body;
    assert.match(first.messages[0].content, /\[ID:n\]/, 'the system prompt asks for citations');
    assert.equal(first.tools[0].function.name, 'search_my_dateset');
  });

  it('feedback dispatcher (task mode): praise stops at the first Categorize, a complaint is routed to a team; the VariableAggregator joins both paths into one ticket', async () => {
    const agentId = await fromTemplate('feedback_dispatcher', false);
    const classify: AnswerScript = (messages) => {
      const feedback = lastUserMessage(messages);
      if (systemOf(messages).includes('Complaint')) return { answer: /thank|great/i.test(feedback) ? 'Praise' : 'Complaint' };
      if (/late|arrived|parcel/i.test(feedback)) return { answer: 'Shipping team' };
      return { answer: /charged|refund/i.test(feedback) ? 'Billing team' : 'Product team' };
    };
    fake.behaviour.answer = classify;
    const ask = async (feedback: string) => {
      const res = await api.post('/agents/chat/completions', { agent_id: agentId, stream: false, inputs: { feedback: { value: feedback } } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data.data.content as string;
    };
    assert.equal(await ask('Thank you, great quality!'), 'Routed to: Praise\n\nCustomer feedback:\nThank you, great quality!');
    assert.equal(chatRequests().length, 1, 'praise needs one classification');
    assert.match(await ask('My parcel arrived two weeks late.'), /^Routed to: Shipping team\n/);
    assert.match(await ask('I was charged twice for one order.'), /^Routed to: Billing team\n/);
    assert.match(await ask('The lid broke on the first day.'), /^Routed to: Product team\n/);
  });

  it('interactive planner: the plan pauses the run with user_inputs; the answer to the pause resumes it, and the researcher follows plan and feedback with cited passages', async () => {
    const agentId = await fromTemplate('interactive_planner');
    const research = toolRoundTrip('search_my_dateset', { query: 'descale kettle vinegar' }, (result) => {
      const cite = citationOf(result, 'vinegar');
      return cite ? `Fill it with water and white vinegar, boil, then rinse twice ${cite}.` : 'Nothing found.';
    });
    fake.behaviour.answer = (messages, model, request) =>
      systemOf(messages).includes('You plan how') ? { answer: 'Question: How do I descale my kettle?\n1. Search the manual for "descale".' } : research(messages, model, request);
    const session = (await api.post(`/agents/${agentId}/sessions`, {})).body.data;

    const first = await runStream(api, { agent_id: agentId, session_id: session.id, query: 'how do I descale my kettle' });
    const pause = first.events.find((e) => e.event === 'user_inputs');
    assert.ok(pause, 'the first call ends with user_inputs');
    assert.deepEqual(Object.keys(pause.data.inputs), ['feedback']);
    assert.match(pause.data.tips, /Here is my plan:\n\nQuestion: How do I descale my kettle\?\n1\. Search the manual/);
    assert.ok(!first.events.some((e) => e.event === 'workflow_finished'));
    assert.equal(chatRequests().length, 1, 'nothing is searched before the approval');

    const second = await runStream(api, { agent_id: agentId, session_id: session.id, query: '', inputs: { feedback: { value: 'ok, keep it short' } } });
    const answer = streamedText(second.events);
    assert.match(answer, /^Fill it with water and white vinegar, boil, then rinse twice \[ID:\d+\]\.$/);
    const reference = second.events.find((e) => e.event === 'message_end').data.reference;
    assert.equal(cited(reference, answer).document_name, 'kettle-manual.txt');
    const researcherPrompt = lastUserMessage(chatRequests()[1]!.body.messages);
    assert.match(researcherPrompt, /Approved plan:\nQuestion: How do I descale my kettle\?[\s\S]*User feedback on the plan:\nok, keep it short/);
  });

  it('customer service: Categorize picks the branch; only that branch\'s Retrieval and specialist run, and the VariableAggregator passes its answer to the Message', async () => {
    const agentId = await fromTemplate('customer_service');
    fake.behaviour.answer = (messages) => {
      const system = systemOf(messages);
      const user = lastUserMessage(messages);
      if (system.includes('Policy or order question')) return { answer: /return|refund|order/i.test(user) ? 'Policy or order question' : /kettle/i.test(user) ? 'Product question' : 'Small talk' };
      if (system.includes('order and policy specialist')) {
        const cite = citationOf(user, '30 days');
        return { answer: cite ? `You can return any item within 30 days of delivery ${cite}.` : 'I do not know.' };
      }
      if (system.includes('product specialist')) return { answer: 'Product answer.' };
      return { answer: 'Hello! Ask me about a product, an order or a policy.' };
    };

    const policy = await runStream(api, { agent_id: agentId, query: 'How many days do I have to return an item?' });
    const answer = streamedText(policy.events);
    assert.match(answer, /^You can return any item within 30 days of delivery \[ID:\d+\]\.$/);
    const reference = policy.events.find((e) => e.event === 'message_end').data.reference;
    assert.equal(cited(reference, answer).document_name, 'returns-policy.txt');
    const ran = finishedIds(policy.events);
    for (const id of ['Categorize:Intent', 'Retrieval:PolicyDocs', 'Agent:PolicyExpert', 'VariableAggregator:Reply', 'Message:Reply']) assert.ok(ran.includes(id), `${id} ran`);
    for (const id of ['Retrieval:ProductDocs', 'Agent:ProductExpert', 'Agent:Concierge']) assert.ok(!ran.includes(id), `${id} did not run`);

    const chat = await runStream(api, { agent_id: agentId, query: 'hello there' });
    assert.equal(streamedText(chat.events), 'Hello! Ask me about a product, an order or a policy.');
    assert.ok(!finishedIds(chat.events).some((id: string) => id.startsWith('Retrieval:')), 'small talk searches nothing');
  });

  it('batch summariser: the Iteration runs the summariser once per text, each pass sees only its own text, and the Message returns the summaries as a list in input order', async () => {
    const agentId = await fromTemplate('batch_summarizer', false);
    fake.behaviour.answer = (messages) => ({ answer: `Summary of ${lastUserMessage(messages).replace(/^Text:\n/, '').split(' ')[0]}` });
    const texts = ['Alpha text about mountains.', 'Bravo text about rivers.', 'Charlie text about cairns.'];
    const { events } = await runStream(api, { agent_id: agentId, inputs: { texts: { value: texts } } });
    assert.deepEqual(JSON.parse(streamedText(events)), ['Summary of Alpha', 'Summary of Bravo', 'Summary of Charlie']);
    assert.deepEqual(chatRequests().map((r) => lastUserMessage(r.body.messages)), texts.map((t) => `Text:\n${t}`));
    const iteration = events.find((e) => e.event === 'node_finished' && e.data.component_id === 'Iteration:EachText');
    assert.deepEqual(iteration.data.outputs.summaries, ['Summary of Alpha', 'Summary of Bravo', 'Summary of Charlie']);
  });

  /** Writer: "Draft n" (n = previous draft + 1); reviewer: APPROVED from draft `approveAt` on, REVISE before. */
  function writerScript(approveAt: number): AnswerScript {
    return (messages) => {
      const user = lastUserMessage(messages);
      if (systemOf(messages).includes('You review a draft')) {
        const n = Number(/Draft:\nDraft (\d+)/.exec(user)?.[1]);
        return { answer: n >= approveAt ? 'APPROVED' : `REVISE: mention the opening hours (draft ${n})` };
      }
      const previous = /Previous draft \(empty in the first round\):\n(.*)/.exec(user)?.[1] ?? '';
      return { answer: `Draft ${previous ? Number(/Draft (\d+)/.exec(previous)![1]) + 1 : 1}` };
    };
  }

  it('refine-until-good writer: the Loop ends as soon as the reviewer approves; each round revises the previous draft with the review, kept in the loop variables', async () => {
    const agentId = await fromTemplate('refine_writer', false);
    fake.behaviour.answer = writerScript(2);
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'A note for the museum door', stream: false, return_trace: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.data.content, 'Draft 2');
    const prompts = chatRequests().map((r) => lastUserMessage(r.body.messages));
    assert.equal(prompts.length, 4, 'two rounds of writer and reviewer');
    assert.match(prompts[2]!, /Previous draft \(empty in the first round\):\nDraft 1\n\nReviewer notes \(empty in the first round\):\nREVISE: mention the opening hours \(draft 1\)/);
  });

  it('refine-until-good writer: without approval the Loop stops after maximum_loop_count (3) rounds with the last draft', async () => {
    const agentId = await fromTemplate('refine_writer', false);
    fake.behaviour.answer = writerScript(99);
    const res = await api.post('/agents/chat/completions', { agent_id: agentId, query: 'A note for the museum door', stream: false });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.data.content, 'Draft 3');
    assert.equal(chatRequests().length, 6);
  });
});
