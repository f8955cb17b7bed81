import assert from 'node:assert/strict';
import { callGate, lastUserMessage, startFakeOpenAI, type AnswerScript, type FakeMessage, type FakeOpenAI } from '../fakes/index.js';
import { harness } from './harness.js';
import { Api, eventually, newUser } from './client.js';
import { addModelServer } from './chat-helpers.js';
import { upload, waitForRun } from './documents-helpers.js';
import { Client, Connection } from '@temporalio/client';
import { workflowIds } from '../../src/engine/task-queues.js';
import { GRAPH_RERUN_SIGNAL } from '../../src/enrichment/graph/signals.js';
import { loadConfig } from '../../src/config.js';

const EMBED = 'fake-embed@fake@OpenAI-API-Compatible';
const GRAPH_CHUNK = 'Related content in Knowledge Graph';

/** The entities the fake "finds" in a text: each one whose name the text contains. */
const KNOWN: [string, string, string][] = [
  ['Ada Lovelace', 'person', 'A mathematician who wrote the first program.'],
  ['Charles Babbage', 'person', 'An inventor who designed the Analytical Engine.'],
  ['Analytical Engine', 'category', 'A mechanical general-purpose computer.'],
  ['London', 'geo', 'The city where they met.'],
  ['Royal Society', 'organization', 'A learned society in London.'],
  ['Acme Corporation', 'organization', 'A maker of anvils.'],
  ['Acme Corporatoin', 'organization', 'An anvil company (misspelt).'],
  ['Open AI', 'organization', 'A research lab.'],
  ['OpenAI', 'organization', 'A research lab that makes models.'],
  ['Road Runner', 'person', 'A fast bird.'],
];

const isExtraction = (m: FakeMessage[]) => m[0]?.content.startsWith('You build a knowledge graph from a text.') ?? false;
const textOf = (m: FakeMessage[]) => m[1]?.content ?? '';

/** Scripted answers for every prompt of the graph job: extraction (and its second pass), resolution, community reports. */
const graphAnswers: AnswerScript = (messages) => {
  const system = messages[0]?.content ?? '';
  if (isExtraction(messages)) {
    const text = textOf(messages);
    if (messages.length > 2) {
      // The general method's second pass: the Difference Engine was "missed" wherever Babbage is.
      return { answer: JSON.stringify({ entities: text.includes('Charles Babbage') ? [{ name: 'Difference Engine', type: 'category', description: 'An earlier machine.' }] : [], relations: [] }) };
    }
    if (text.includes('GARBLED')) return { answer: 'Sure! {"entities": [{"name": "Garbled Entity", "type": "category", "description": "half an answer"}, {"name": "Cut' };
    const present = KNOWN.filter(([name]) => text.includes(name));
    return {
      answer: JSON.stringify({
        entities: present.map(([name, type, description]) => ({ name, type, description })),
        relations: present.slice(1).map(([name], i) => ({ source: present[i]![0], target: name, description: `${present[i]![0]} is mentioned with ${name}`, weight: 2 })),
      }),
    };
  }
  if (system.includes('mean the same real-world entity')) {
    const pairs = lastUserMessage(messages).split('\n').filter((l) => /^\d+\./.test(l));
    return { answer: pairs.map((_, i) => `${i + 1}: yes`).join('\n') };
  }
  if (system.includes('report about a community')) {
    const names = [...lastUserMessage(messages).matchAll(/^- ([^(\n]+?) \(/gm)].map((m) => m[1]);
    return { answer: JSON.stringify({ title: `Community of ${names[0]}`, summary: `About ${names.join(', ')}.`, findings: [{ summary: 'They are linked', explanation: 'by the text' }], rating: 6 }) };
  }
  return { answer: 'ok' };
};

function extractionRequests(fake: FakeOpenAI, marker?: string): string[] {
  return fake.requests
    .filter((r) => r.path === '/v1/chat/completions' && Array.isArray(r.body?.messages) && isExtraction(r.body.messages) && r.body.messages.length === 2)
    .map((r) => r.body.messages[1].content as string)
    .filter((text) => !marker || text.includes(marker));
}

function chatRequests(fake: FakeOpenAI): number {
  return fake.requests.filter((r) => r.path === '/v1/chat/completions').length;
}

let seq = 0;

async function datasetWith(api: Api, texts: Record<string, string>, parserConfig: Record<string, unknown> = {}): Promise<string> {
  const ds = await api.post('/datasets', { name: `graph-${++seq}-${Date.now() % 100000}`, embedding_model: EMBED, parser_config: parserConfig });
  assert.equal(ds.status, 200, JSON.stringify(ds.body));
  const id: string = ds.body.data.id;
  const up = await upload(api, id, Object.entries(texts).map(([name, text]) => ({ name, bytes: Buffer.from(text) })));
  assert.equal(up.status, 200, JSON.stringify(up.body));
  const docs: { id: string }[] = up.body.data;
  const parse = await api.post(`/datasets/${id}/chunks`, { document_ids: docs.map((d) => d.id) });
  assert.equal(parse.status, 200, JSON.stringify(parse.body));
  for (const d of docs) assert.equal((await waitForRun(api, id, d.id)).run, 'DONE');
  return id;
}

async function graphTask(api: Api, datasetId: string): Promise<any> {
  const res = await api.get(`/datasets/${datasetId}/index`, { type: 'graph' });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

/** The steps the dataset's graph job waits on, as Temporal sees them: for the message of a wait that timed out. */
async function pendingSteps(datasetId: string): Promise<string> {
  const connection = await Connection.connect({ address: (await harness()).temporal.address });
  try {
    const { raw } = await new Client({ connection }).workflow.getHandle(workflowIds.datasetIndex('graph', datasetId)).describe();
    const at = (t?: { seconds?: unknown } | null) => (t?.seconds ? new Date(Number(t.seconds) * 1000).toISOString() : undefined);
    return JSON.stringify((raw.pendingActivities ?? []).map((a) => ({
      step: a.activityType?.name,
      attempt: a.attempt,
      started: at(a.lastStartedTime),
      heartbeat: at(a.lastHeartbeatTime),
      worker: a.lastWorkerIdentity,
      failure: a.lastFailure?.message,
    })));
  } finally {
    await connection.close();
  }
}

/** Waits until the dataset's graph task has ended (any status but running). */
async function waitGraph(api: Api, datasetId: string, timeoutMs = 60_000): Promise<any> {
  try {
    return await eventually(async () => {
      const task = await graphTask(api, datasetId);
      return task.status && task.status !== 'running' ? task : undefined;
    }, timeoutMs, 200);
  } catch (err) {
    const steps = await pendingSteps(datasetId).catch((e: Error) => `unknown (${e.message})`);
    throw new Error(`the graph task still runs after ${timeoutMs} ms; the job waits on ${steps}`, { cause: err });
  }
}

async function buildGraph(api: Api, datasetId: string): Promise<any> {
  const start = await api.post(`/datasets/${datasetId}/index?type=graph`);
  assert.equal(start.status, 200, JSON.stringify(start.body));
  assert.match(start.body.data.task_id, /^[0-9a-f]{32}$/);
  const task = await waitGraph(api, datasetId);
  assert.equal(task.id, start.body.data.task_id);
  return task;
}

const quickRetries = { retry_attempts: 2, retry_backoff_seconds: 0.2, retry_backoff_max_seconds: 1 };

describe('knowledge graph (POST|GET /datasets/{id}/index?type=graph, GET /datasets/{id}/graph, use_kg)', function () {
  this.timeout(180_000);
  let fake: FakeOpenAI;
  let api: Api;

  before(async () => {
    await harness();
    fake = await startFakeOpenAI({ answer: graphAnswers });
    api = (await newUser('graph')).api;
    await addModelServer(api, fake.baseUrl, { embedding: 'fake-embed' });
  });
  after(() => fake.close());

  describe('a built graph', () => {
    let ds: string;
    let built: any;

    before(async () => {
      ds = await datasetWith(api, {
        'babbage.txt': 'Ada Lovelace worked with Charles Babbage on the Analytical Engine.',
        'london.txt': 'Charles Babbage lived in London and spoke at the Royal Society.',
        'garbled.txt': 'A GARBLED page the model answers badly.',
      }, { graphrag: { use_graphrag: false, entity_types: ['person', 'category', 'geo', 'organization'], ...quickRetries } });
      fake.clear();
      built = await buildGraph(api, ds);
    });

    it('extracts each chunk once with the dataset\'s entity types, and the task reports done with its counts', () => {
      const asked = extractionRequests(fake);
      assert.equal(asked.length, 3, 'one call per chunk');
      const system = fake.requests.find((r) => r.path === '/v1/chat/completions')!.body.messages[0].content as string;
      assert.match(system, /Entity types: person, category, geo, organization\./);
      assert.equal(built.status, 'done', JSON.stringify(built));
      assert.equal(built.progress, 1);
      assert.equal(built.done, built.total);
      assert.equal(built.model_calls, 3);
      assert.equal(built.cached_calls, 0);
      assert.ok(built.tokens > 0);
      assert.ok(built.finish_time);
      assert.equal(built.message, 'Done: 6 entities, 4 relations, 0 community reports; 1 malformed answer(s), 0 unusable item(s) skipped', 'the garbled answer is counted, its readable entity kept');
    });

    it('GET /graph answers nodes by pagerank and the edges between them, RAGFlow\'s shape; knowledge_graph is the same', async () => {
      const res = await api.get(`/datasets/${ds}/graph`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const { graph, mind_map } = res.body.data;
      assert.deepEqual(mind_map, {});
      const names = graph.nodes.map((n: any) => n.entity_name).sort();
      assert.deepEqual(names, ['Ada Lovelace', 'Analytical Engine', 'Charles Babbage', 'Garbled Entity', 'London', 'Royal Society']);
      const babbage = graph.nodes.find((n: any) => n.entity_name === 'Charles Babbage');
      assert.deepEqual(Object.keys(babbage).sort(), ['community', 'description', 'entity_name', 'entity_type', 'id', 'pagerank', 'source_id']);
      assert.equal(babbage.id, 'Charles Babbage');
      assert.equal(babbage.entity_type, 'person');
      assert.equal(babbage.source_id.length, 2, 'found in two chunks');
      assert.equal(graph.nodes[0].entity_name, 'Charles Babbage', 'the best connected node ranks first');
      const ranks = graph.nodes.map((n: any) => n.pagerank);
      assert.deepEqual(ranks, [...ranks].sort((a: number, b: number) => b - a));
      const edge = graph.edges.find((e: any) => [e.source, e.target].sort().join('|') === 'Ada Lovelace|Charles Babbage');
      assert.ok(edge, JSON.stringify(graph.edges));
      assert.equal(edge.weight, 2);
      assert.match(edge.description, /is mentioned with/);
      assert.ok(graph.edges.every((e: any) => names.includes(e.source) && names.includes(e.target)));
      const old = await api.get(`/datasets/${ds}/knowledge_graph`);
      assert.deepEqual(old.body, res.body);
    });

    it('retrieval with use_kg puts the graph chunk on top; without it there is none', async () => {
      const question = 'What did Charles Babbage design?';
      const withKg = await api.post('/retrieval', { question, dataset_ids: [ds], use_kg: true, similarity_threshold: 0 });
      assert.equal(withKg.status, 200, JSON.stringify(withKg.body));
      const [first] = withKg.body.data.chunks;
      assert.equal(first.document_keyword, GRAPH_CHUNK);
      assert.equal(first.document_id, '');
      assert.equal(first.dataset_id, ds);
      assert.match(first.content, /---- Entities ----\n,Entity,Score,Description\n0,Charles Babbage,/);
      assert.match(first.content, /---- Relations ----/);
      const plain = await api.post('/retrieval', { question, dataset_ids: [ds], similarity_threshold: 0 });
      assert.ok(plain.body.data.chunks.every((c: any) => c.document_keyword !== GRAPH_CHUNK));
      assert.equal(withKg.body.data.chunks.length, plain.body.data.chunks.length + 1);
      const dify = await api.post('/dify/retrieval', { knowledge_id: ds, query: question, use_kg: true, retrieval_setting: { top_k: 5, score_threshold: 0 } });
      assert.equal(dify.status, 200, JSON.stringify(dify.body));
      assert.equal(dify.body.records[0].title, GRAPH_CHUNK);
      const unrelated = await api.post('/retrieval', { question: 'zebra xylophone', dataset_ids: [ds], use_kg: true, similarity_threshold: 0 });
      assert.ok(unrelated.body.data.chunks.every((c: any) => c.document_keyword !== GRAPH_CHUNK), 'no entity matches: no graph chunk');
    });

    it('a chat with prompt_config.use_kg gives the model the graph chunk', async () => {
      const chat = await api.post('/chats', { name: `kg-chat-${Date.now()}`, dataset_ids: [ds], prompt_config: { use_kg: true } });
      assert.equal(chat.status, 200, JSON.stringify(chat.body));
      assert.equal(chat.body.data.prompt_config.use_kg, true);
      fake.clear();
      const answer = await api.post(`/chats/${chat.body.data.id}/completions`, { question: 'Who is Ada Lovelace?', stream: false });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const prompt = fake.requests.find((r) => r.path === '/v1/chat/completions')!.body.messages[0].content as string;
      assert.match(prompt, /---- Entities ----[\s\S]*Ada Lovelace/);
    });

    it('running it again makes no model call: every answer comes from the cache', async () => {
      fake.clear();
      const again = await buildGraph(api, ds);
      assert.equal(again.status, 'done');
      assert.equal(chatRequests(fake), 0);
      assert.equal(again.model_calls, 0);
      assert.equal(again.cached_calls, 3);
      assert.equal((await api.get(`/datasets/${ds}/graph`)).body.data.graph.nodes.length, 6);
    });

    it('DELETE /graph removes the graph and its task; a new build after it asks the model nothing', async () => {
      const del = await api.delete(`/datasets/${ds}/graph`);
      assert.equal(del.status, 200, JSON.stringify(del.body));
      assert.deepEqual((await api.get(`/datasets/${ds}/graph`)).body.data, { graph: {}, mind_map: {} });
      assert.deepEqual(await graphTask(api, ds), {});
      const retrieval = await api.post('/retrieval', { question: 'Charles Babbage', dataset_ids: [ds], use_kg: true, similarity_threshold: 0 });
      assert.ok(retrieval.body.data.chunks.every((c: any) => c.document_keyword !== GRAPH_CHUNK));
      fake.clear();
      const rebuilt = await buildGraph(api, ds);
      assert.equal(rebuilt.status, 'done');
      assert.equal(chatRequests(fake), 0);
      assert.equal((await api.get(`/datasets/${ds}/graph`)).body.data.graph.nodes.length, 6);
    });

    it("another tenant's dataset graph is not found", async () => {
      const other = (await newUser('graph-other')).api;
      assert.equal((await other.get(`/datasets/${ds}/graph`)).status, 404);
      assert.equal((await other.delete(`/datasets/${ds}/knowledge_graph`)).status, 404);
    });
  });

  it('general method, resolution and communities: a second pass per chunk, near-duplicates merged, communities reported and retrieved', async () => {
    const ds = await datasetWith(api, {
      'acme.txt': 'Road Runner outran the Acme Corporation again.',
      'acme2.txt': 'The Acme Corporatoin sold anvils to Road Runner.',
      'labs.txt': 'Open AI and OpenAI are written two ways; Charles Babbage would not mind.',
    }, { graphrag: { use_graphrag: false, method: 'general', resolution: true, community: true, ...quickRetries } });
    fake.clear();
    const task = await buildGraph(api, ds);
    assert.equal(task.status, 'done', JSON.stringify(task));
    const calls = fake.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body.messages);
    assert.equal(calls.filter((m: any[]) => isExtraction(m) && m.length === 4).length, 3, 'one second pass per chunk');
    const resolution = calls.filter((m: any[]) => m[0].content.includes('same real-world entity'));
    assert.equal(resolution.length, 1);
    assert.match(resolution[0]![1].content, /1\. "Acme Corporation" \(organization[^\n]*\/ "Acme Corporatoin"/);
    assert.doesNotMatch(resolution[0]![1].content, /Open AI/, 'the same letters are merged by rule, without asking');
    const { graph } = (await api.get(`/datasets/${ds}/graph`)).body.data;
    const names = graph.nodes.map((n: any) => n.entity_name);
    assert.equal(names.filter((n: string) => n.startsWith('Acme')).length, 1);
    assert.equal(names.filter((n: string) => n === 'Open AI' || n === 'OpenAI').length, 1);
    assert.ok(names.includes('Difference Engine'), 'found by the second pass');
    const acme = graph.nodes.find((n: any) => n.entity_name.startsWith('Acme'));
    assert.equal(acme.source_id.length, 2, 'the merged node keeps both chunks');
    assert.ok(graph.nodes.some((n: any) => n.community !== null));
    assert.ok(task.message.includes('community reports'));
    const reports = calls.filter((m: any[]) => m[0].content.includes('report about a community')).length;
    assert.ok(reports >= 1);
    assert.match(task.message, new RegExp(`, ${reports} community reports`));
    const retrieval = await api.post('/retrieval', { question: 'Who sold anvils to Road Runner?', dataset_ids: [ds], use_kg: true, similarity_threshold: 0 });
    const first = retrieval.body.data.chunks[0];
    assert.equal(first.document_keyword, GRAPH_CHUNK);
    assert.match(first.content, /---- Community Report ----\n# 1\. Community of /);
  });

  it('a parse with graphrag.use_graphrag on starts the dataset\'s graph job by itself', async () => {
    const ds = await datasetWith(api, { 'auto.txt': 'Ada Lovelace wrote notes in London.' }, { graphrag: { use_graphrag: true, ...quickRetries } });
    const task = await waitGraph(api, ds);
    assert.equal(task.status, 'done', JSON.stringify(task));
    const { graph } = (await api.get(`/datasets/${ds}/graph`)).body.data;
    assert.deepEqual(graph.nodes.map((n: any) => n.entity_name).sort(), ['Ada Lovelace', 'London']);
  });

  it('a graph turned on with a chat model that does not exist fails its task with the reason, not silently', async () => {
    const ds = await datasetWith(api, { 'nomodel.txt': 'Ada Lovelace.' }, { llm_id: 'missing-model@nowhere@OpenAI-API-Compatible', graphrag: { use_graphrag: true } });
    const task = await waitGraph(api, ds);
    assert.equal(task.status, 'failed', JSON.stringify(task));
    assert.match(task.message, /^the knowledge graph needs a chat model \(parser_config\.llm_id or the tenant's default chat model\): .*missing-model/);
  });

  it('a parse that finishes while the graph job runs makes it run once more under the same task, with the new chunks', async () => {
    // The first pass's model call is held open until the second parse has finished: no race with the parse's speed.
    const gate = callGate((messages) => isExtraction(messages) && textOf(messages).includes('RERUN-1'));
    fake.behaviour.gate = gate;
    const connection = await Connection.connect({ address: (await harness()).temporal.address });
    try {
      const ds = await datasetWith(api, { 'first.txt': 'RERUN-1: Ada Lovelace lived in London.' }, { graphrag: { use_graphrag: true, ...quickRetries } });
      const job = new Client({ connection }).workflow.getHandle(workflowIds.datasetIndex('graph', ds));
      await eventually(async () => gate.held === 1, 30_000, 100);
      const running = await graphTask(api, ds);
      assert.equal(running.status, 'running', JSON.stringify(running));
      const up = await upload(api, ds, [{ name: 'second.txt', bytes: Buffer.from('RERUN-2: Charles Babbage joined the Royal Society.') }]);
      await api.post(`/datasets/${ds}/chunks`, { document_ids: [up.body.data[0].id] });
      assert.equal((await waitForRun(api, ds, up.body.data[0].id)).run, 'DONE');
      // The parse asks the running job for another pass in its last step, after the document is DONE.
      const rerunAsked = async () => (await job.fetchHistory()).events?.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === GRAPH_RERUN_SIGNAL);
      await eventually(rerunAsked, 30_000, 200);
      assert.equal((await graphTask(api, ds)).status, 'running', 'the first pass is still waiting on the model');
      gate.release();
      const task = await waitGraph(api, ds);
      assert.equal(task.status, 'done', JSON.stringify(task));
      assert.equal(task.id, running.id, 'one task for both passes');
      const { graph } = (await api.get(`/datasets/${ds}/graph`)).body.data;
      assert.deepEqual(graph.nodes.map((n: any) => n.entity_name).sort(), ['Ada Lovelace', 'Charles Babbage', 'London', 'Royal Society']);
      assert.equal(extractionRequests(fake, 'RERUN-1').length, 1, 'the first chunk was answered from the cache in the second pass');
      const started = (await job.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
      assert.ok(started?.continuedExecutionRunId, 'the last run continues the first (continue-as-new)');
    } finally {
      gate.release();
      fake.behaviour.gate = undefined;
      await connection.close();
    }
  });

  it('progress is visible while it runs, and a cancel stops it, keeping the previous graph', async () => {
    const ds = await datasetWith(api, Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`slow${i}.txt`, `SLOW-${i}: Ada Lovelace met Charles Babbage in London.`])), { graphrag: quickRetries });
    // The model answers the first document's call and holds the others open, so the job is still running at the cancel.
    const gate = callGate((messages) => isExtraction(messages) && !textOf(messages).includes('SLOW-0:'));
    fake.behaviour.gate = gate;
    try {
      const start = await api.post(`/datasets/${ds}/index?type=graph`);
      assert.equal(start.status, 200, JSON.stringify(start.body));
      const running = await eventually(async () => {
        const t = await graphTask(api, ds);
        return t.status === 'running' && t.done > 0 ? t : undefined;
      }, 20_000, 100);
      assert.match(running.progress_msg, /extracting entities and relations from 6 chunks/);
      assert.equal(running.done, 1);
      assert.equal(running.total, 6 + 2, 'the chunks, then the merge and the ranking');
      const again = await api.post(`/datasets/${ds}/index?type=graph`);
      assert.equal(again.status, 400);
      assert.match(again.body.message, /A Graph Task is already running/);
      // The slots' calls reach the model one by one: wait for the last of them rather than count at one instant.
      await eventually(async () => gate.held === 4, 20_000, 50).catch(() => undefined);
      assert.equal(gate.held, 4, 'every slot waits on the model');
      const cancel = api.delete(`/datasets/${ds}/index?type=graph&wipe=false`);
      // The cancel reaches the step with its next heartbeat and aborts the model calls it has open.
      await eventually(async () => gate.held === 0, 30_000, 50).catch(() => assert.fail(`${gate.held} model calls still open 30 s after the cancel`));
      const cancelled = await cancel;
      assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
      const task = await graphTask(api, ds);
      assert.equal(task.status, 'cancelled');
      assert.deepEqual((await api.get(`/datasets/${ds}/graph`)).body.data.graph, {}, 'nothing was published');
    } finally {
      gate.release();
      fake.behaviour.gate = undefined;
    }
  });

  it('a model that keeps failing fails the task with its reason after the retries; the previous graph stays', async () => {
    const ds = await datasetWith(api, { 'fail.txt': 'FAILTEST: Ada Lovelace in London.' }, { graphrag: quickRetries });
    await buildGraph(api, ds);
    const before = (await api.get(`/datasets/${ds}/graph`)).body.data;
    // New text, so the job has calls the cache cannot answer.
    const up = await upload(api, ds, [{ name: 'fail2.txt', bytes: Buffer.from('FAILTEST-2: Charles Babbage at the Royal Society.') }]);
    await api.post(`/datasets/${ds}/chunks`, { document_ids: [up.body.data[0].id] });
    await waitForRun(api, ds, up.body.data[0].id);
    fake.clear();
    fake.behaviour.failure = { status: 500, message: 'the model melted', path: '/v1/chat/completions' };
    try {
      const task = await buildGraph(api, ds);
      assert.equal(task.status, 'failed');
      assert.equal(task.progress, -1);
      assert.match(task.progress_msg, /the model melted/);
      assert.equal(chatRequests(fake), 2, 'retry_attempts: 2');
    } finally {
      fake.behaviour.failure = undefined;
    }
    assert.deepEqual((await api.get(`/datasets/${ds}/graph`)).body.data, before);
  });

  it('a worker killed mid-job resumes: no answered call is asked again', async () => {
    const h = await harness();
    // One chunk per call: chunks of ~290 tokens, and calls of at most 512.
    const paragraph = (i: number) => `KILLTEST paragraph ${i}: Ada Lovelace wrote to Charles Babbage. ${Array.from({ length: 90 }, (_, j) => `word${j} filler`).join(' ')}`;
    const ds = await datasetWith(api, { 'kill.txt': Array.from({ length: 40 }, (_, i) => paragraph(i)).join('\n') }, {
      chunk_token_num: 300,
      graphrag: { batch_chunk_token_size: 512, retry_attempts: 3, retry_backoff_seconds: 0.2, retry_backoff_max_seconds: 1 },
    });
    const chunks = (await api.get(`/datasets/${ds}/documents`)).body.data.docs[0].chunk_count;
    assert.ok(chunks >= 30, `${chunks} chunks`);
    fake.clear();
    // From the tenth extraction on, the model holds its answers: the worker dies with those calls open.
    let extractions = 0;
    const gate = callGate((messages) => isExtraction(messages) && textOf(messages).includes('KILLTEST') && ++extractions >= 10);
    fake.behaviour.gate = gate;
    try {
      const start = await api.post(`/datasets/${ds}/index?type=graph`);
      assert.equal(start.status, 200, JSON.stringify(start.body));
      // Every slot is waiting on a held call: each earlier answer was stored before its slot asked again.
      const slots = loadConfig().enrichConcurrency;
      await eventually(async () => gate.held === slots, 30_000, 50);
      const beforeKill = extractionRequests(fake, 'KILLTEST');
      assert.equal(beforeKill.length, 9 + slots);
      const finished = beforeKill.slice(0, 9);
      await h.killWorker();
      // The new worker's calls are answered at once.
      gate.release();
      const task = await waitGraph(api, ds, 120_000);
      assert.equal(task.status, 'done', JSON.stringify(task));
      const asked = extractionRequests(fake, 'KILLTEST');
      const times = new Map<string, number>();
      for (const text of asked) times.set(text, (times.get(text) ?? 0) + 1);
      assert.equal(times.size, chunks, 'every chunk was asked about');
      for (const text of finished) assert.equal(times.get(text), 1, 'an answered call is never asked again');
      const repeated = [...times.values()].filter((n) => n > 1).length;
      assert.ok(repeated <= beforeKill.length - finished.length, `${repeated} calls repeated; only the ${beforeKill.length - finished.length} open at the kill may be`);
      assert.ok(task.cached_calls >= finished.length, `${task.cached_calls} cached calls`);
      assert.equal((await api.get(`/datasets/${ds}/graph`)).body.data.graph.nodes.length, 2);
    } finally {
      gate.release();
      fake.behaviour.gate = undefined;
    }
  });
});
