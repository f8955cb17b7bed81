import assert from 'node:assert/strict';
import { Api, eventually, newUser } from './client.js';
import { upload, waitForRun } from './documents-helpers.js';

/*
 * The three enrichment jobs end to end on the built-in chat model (SmolLM2-135M, real, on the CPU), for a
 * tenant that configured no provider: its default chat and embedding models are the built-in ones. A
 * 135M model writes weak keywords, questions, summaries and graphs, so the test asserts what must hold
 * whatever it writes: every job ends done, having asked the model, with its counts, and what it built
 * has the right shape and is served (a chunk's keywords and questions, RAPTOR summaries in retrieval,
 * the graph). What the model produced is printed. About a minute on an idle 2-core machine (three on a
 * busy one): the graph's one call takes most of it, as the model repeats itself up to the answer limit.
 */

/** Two lines, each its own chunk (chunk_token_num 24 holds one line, not two). */
const TEXT = [
  'Ada Lovelace wrote the first computer program for the Analytical Engine in London in 1843.',
  'Charles Babbage designed the Analytical Engine, a mechanical computer, at Cambridge University.',
].join('\n');

interface Task {
  id: string;
  status: string;
  progress: number;
  progress_msg: string;
  message?: string;
  done: number;
  total: number;
  model_calls: number;
  cached_calls: number;
  tokens: number;
  create_time: number;
  finish_time: number;
}

async function finishedTask(api: Api, ds: string, type: 'raptor' | 'graph'): Promise<Task> {
  return eventually(async () => {
    const res = await api.get(`/datasets/${ds}/index`, { type });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const task = res.body.data as Task;
    return task.status && task.status !== 'running' ? task : undefined;
  }, 300_000, 250);
}

function assertCounted(task: Task, type: string) {
  assert.equal(task.status, 'done', `${type}: ${task.message ?? task.progress_msg}`);
  assert.equal(task.progress, 1);
  assert.ok(task.model_calls >= 1, `${type} asked the model: ${JSON.stringify(task)}`);
  assert.ok(task.tokens > 0, `${type} counted its tokens: ${JSON.stringify(task)}`);
}

describe('enrichment on the built-in chat model, no provider configured: keywords, questions, RAPTOR and the graph', function () {
  this.timeout(420_000);
  let api: Api;
  let ds: string;
  let doc: string;
  let raptor: Task;
  let graph: Task;
  const produced: string[] = [];

  before(async function () {
    this.timeout(420_000);
    ({ api } = await newUser('enrich-builtin'));
    const res = await api.post('/datasets', {
      name: `enrich-builtin-${Date.now() % 100000}`,
      parser_config: {
        chunk_token_num: 24,
        delimiter: '\n',
        auto_keywords: 2,
        auto_questions: 1,
        raptor: { use_raptor: true },
        graphrag: { use_graphrag: true },
      },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    ds = res.body.data.id;
    doc = (await upload(api, ds, [{ name: 'engines.txt', bytes: Buffer.from(TEXT) }])).body.data[0].id;
    assert.equal((await api.post(`/datasets/${ds}/chunks`, { document_ids: [doc] })).status, 200);
    const parsed = await waitForRun(api, ds, doc, undefined, 200_000);
    assert.equal(parsed.run, 'DONE', parsed.progress_msg);
    produced.push(`parse: ${parsed.progress_msg}`);
    // The finished parse starts both dataset jobs (use_raptor, use_graphrag).
    [raptor, graph] = await Promise.all([finishedTask(api, ds, 'raptor'), finishedTask(api, ds, 'graph')]);
  });

  after(() => {
    if (produced.length) console.log(`      SmolLM2-135M produced:\n${produced.map((p) => `        ${p}`).join('\n')}`);
  });

  it('the tenant default is the built-in chat model (nothing configured)', async () => {
    assert.equal((await api.get('/models/default')).body.data.chat_model, 'SmolLM2-135M-Instruct@Builtin');
  });

  it('parse ends DONE with generated keywords and questions on the chunks, within auto_keywords / auto_questions', async () => {
    const res = await api.get(`/datasets/${ds}/documents/${doc}/chunks`, { page_size: 100 });
    assert.equal(res.status, 200);
    const chunks = (res.body.data.chunks as { content: string; important_keywords: string[]; questions: string[]; raptor_kwd?: string }[]).filter((c) => c.raptor_kwd === undefined);
    assert.equal(chunks.length, 2);
    for (const c of chunks) {
      assert.ok(Array.isArray(c.important_keywords) && c.important_keywords.length <= 2, JSON.stringify(c));
      assert.ok(Array.isArray(c.questions) && c.questions.length <= 1, JSON.stringify(c));
      produced.push(`chunk "${c.content.slice(0, 30)}…": keywords ${JSON.stringify(c.important_keywords)}, questions ${JSON.stringify(c.questions)}`);
    }
    // The model answered: something usable came back for the two chunks (four answers).
    assert.ok(chunks.some((c) => c.important_keywords.length + c.questions.length > 0), 'no chunk got a keyword or a question');
  });

  it('RAPTOR runs after the parse to done, its summaries marked and found by retrieval', async () => {
    assertCounted(raptor, 'raptor');
    const m = /^done: (\d+) summaries in (\d+) levels?$/.exec(raptor.progress_msg);
    assert.ok(m, raptor.progress_msg);
    produced.push(`RAPTOR: ${raptor.progress_msg}; ${raptor.model_calls} calls, ${raptor.tokens} tokens, ${raptor.finish_time - raptor.create_time} s`);
    // Two chunks make one cluster: one summary (a blank answer would give none; the model writes text).
    assert.equal(Number(m[1]), 1);
    const listed = (await api.get(`/datasets/${ds}/documents/${doc}/chunks`, { page_size: 100 })).body.data.chunks as { content: string; raptor_kwd?: string; raptor_layer?: number }[];
    const summary = listed.find((c) => c.raptor_kwd === 'raptor');
    assert.ok(summary && summary.content.trim(), JSON.stringify(listed.map((c) => c.raptor_kwd)));
    assert.equal(summary.raptor_layer, 1);
    produced.push(`RAPTOR summary: ${JSON.stringify(summary.content.slice(0, 200))}`);
    const found = await api.post('/retrieval', { dataset_ids: [ds], question: summary.content.slice(0, 200), similarity_threshold: 0 });
    assert.equal(found.status, 200, JSON.stringify(found.body));
    const hit = (found.body.data.chunks as { content: string; raptor_kwd?: string; raptor_layer?: number }[]).find((c) => c.raptor_kwd === 'raptor');
    assert.ok(hit, 'retrieval returns the summary');
    assert.equal(hit.raptor_layer, 1);
  });

  it('the graph job runs after the parse to done; GET /graph answers RAGFlow\'s shape with what the model found', async () => {
    assertCounted(graph, 'graph');
    assert.match(graph.message ?? graph.progress_msg, /^Done: \d+ entities, \d+ relations/);
    const res = await api.get(`/datasets/${ds}/graph`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { graph: view, mind_map: mindMap } = res.body.data;
    assert.deepEqual(mindMap, {});
    assert.equal(view.directed, false);
    assert.equal(view.multigraph, false);
    assert.ok(Array.isArray(view.nodes) && Array.isArray(view.edges));
    const ids = new Set(view.nodes.map((n: { id: string }) => n.id));
    for (const n of view.nodes) {
      assert.equal(typeof n.entity_name, 'string');
      assert.ok(n.entity_name.length > 0);
      assert.equal(typeof n.entity_type, 'string');
      assert.equal(typeof n.pagerank, 'number');
      assert.ok(Array.isArray(n.source_id) && n.source_id.length > 0, JSON.stringify(n));
    }
    for (const e of view.edges) assert.ok(ids.has(e.source) && ids.has(e.target) && e.weight > 0, JSON.stringify(e));
    produced.push(`graph: ${graph.message ?? graph.progress_msg}; ${graph.model_calls} calls, ${graph.tokens} tokens, ${graph.finish_time - graph.create_time} s; nodes ${JSON.stringify(view.nodes.slice(0, 8).map((n: { id: string; entity_type: string }) => `${n.id} (${n.entity_type})`))}`);
  });
});
