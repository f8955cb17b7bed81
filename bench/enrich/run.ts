/**
 * Enrichment benchmark (prints numbers; not a timed test): model calls, tokens and wall time per 100
 * chunks of each of the three enrichment jobs, over an instant fake model (Cairn's own cost) and over the
 * built-in chat model (SmolLM2-135M on the CPU).
 *
 *   npx tsx bench/enrich/run.ts [--models fake,builtin] [--chunks 100] [--builtin-chunks 20]
 *                               [--keywords 5] [--questions 2] [--timeout 30]
 *
 * The jobs run as users run them: a real `cairn start` (bench/cairn-server.ts: its own process, Temporal
 * dev server and data directory, the embedded worker as `make run` has it) over HTTP, one document of
 * `--chunks` chunks (bench/enrich/corpus.ts: SciFact paragraphs of 70–120 tokens, one chunk each):
 *
 * 1. keywords + questions: the dataset's parser_config has auto_keywords / auto_questions; the document is
 *    parsed (POST /datasets/{id}/chunks). The job is the parse workflow's `enrichChunks` step: its time
 *    (activity started → completed) and counts (its result) are read from the workflow's history.
 * 2. graph (defaults: method light, no resolution, no communities): POST /datasets/{id}/index?type=graph,
 *    polled every 50 ms until done; calls and tokens from the task (GET …/index?type=graph); wall time
 *    from the POST to the poll that saw it done. It runs before RAPTOR, which would add its summaries to
 *    the chunks the graph reads.
 * 3. RAPTOR (scope file), the same with type=raptor: with RAGFlow's defaults, then with
 *    clustering_threshold 0.5 (see TIGHTER_THRESHOLD).
 * Then each job again over the same chunks (a re-parse, then the same runs), every answer from the
 * enrichment cache (no model call): Cairn's cost alone; over the fake model, the graph once more with
 * `resolution` and `community` on (the extraction cached, the new calls made).

 * Why a real Cairn rather than the activities called directly: the jobs are durable Temporal workflows
 * whose steps pass work files, heartbeat and report progress; that bookkeeping is part of what a user
 * pays, and bench/ingest measures the parse pipeline the same way.
 *
 * The fake chat model is the shared fake OpenAI server (test/fakes) with answers of the real shapes
 * (bench/enrich/answers.ts); it runs in this process, which only polls while Cairn works in its own. It
 * declares the built-in model's context (3,072 prompt tokens), so both models get the same calls. Both
 * runs embed with the tenant's default, the built-in embedding model, so RAPTOR clusters real vectors
 * and embedding its summaries, part of the job, is real work. The built-in run uses SmolLM2-135M, the
 * tenant's default chat model when no provider is configured; it is slow (seconds per call on two
 * cores), hence its smaller document; its per-100 figures are scaled linearly.
 */
import { argument, apiCall } from '../common.js';
import { startBenchCairn, sleep, type BenchCairn } from '../cairn-server.js';
import { fetchParseHistories, fetchWorkflowRun, type ActivityRun } from '../ingest/histories.js';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/fakes/index.js';
import { enrichmentAnswers } from './answers.js';
import { CHUNK_TOKEN_NUM, corpusName, documentText } from './corpus.js';
import os from 'node:os';

type ModelKind = 'fake' | 'builtin';

interface Row {
  model: ModelKind;
  job: string;
  chunks: number;
  calls: number;
  cached: number;
  tokens: number;
  seconds: number;
  /** What the job built, in its own words. */
  built: string;
}

interface Task {
  id: string;
  status: string;
  progress_msg: string;
  message?: string;
  model_calls: number;
  cached_calls: number;
  tokens: number;
}

const FAKE_CHAT = 'bench-chat@bench@OpenAI-API-Compatible';
/**
 * RAPTOR's default clustering_threshold (0.3) keeps 100 SciFact paragraphs in one cluster with the
 * built-in embeddings (every paragraph is that similar to their mean): one summary call. A tighter
 * threshold gives a real tree (20 clusters at level 1 here); both are measured.
 */
const DEFAULT_THRESHOLD = 0.3;
const TIGHTER_THRESHOLD = 0.5;

/** The built-in chat model's prompt budget (4,096 context − 1,024 for the answer): the fake declares the same. */
const BUILTIN_PROMPT_BUDGET = 3072;

const jobTimeoutMs = () => Number(argument('timeout', '30')) * 60_000;

class Bench {
  constructor(readonly cairn: BenchCairn) {}

  call(path: string, method = 'GET', body?: unknown) {
    return apiCall(`${this.cairn.api}${path}`, method, body, this.cairn.key).then((r) => r.json.data);
  }

  async upload(datasetId: string, name: string, text: string): Promise<string> {
    const form = new FormData();
    form.append('file', new Blob([text]), name);
    const res = await fetch(`${this.cairn.api}/datasets/${datasetId}/documents`, { method: 'POST', headers: { Authorization: this.cairn.key }, body: form });
    const json = (await res.json()) as { code: number; data: { id: string }[]; message?: string };
    if (json.code !== 0) throw new Error(`upload: ${json.message}`);
    return json.data[0]!.id;
  }

  /** Parses the document and waits for DONE; the document row at the end. */
  async parse(datasetId: string, documentId: string): Promise<{ chunk_count: number; progress_msg: string }> {
    await this.call(`/datasets/${datasetId}/chunks`, 'POST', { document_ids: [documentId] });
    const deadline = Date.now() + jobTimeoutMs();
    for (;;) {
      const doc = (await this.call(`/datasets/${datasetId}/documents?id=${documentId}`)).docs[0];
      if (doc.run === 'DONE') return doc;
      if (doc.run === 'FAIL' || doc.run === 'CANCEL') throw new Error(`parse ended ${doc.run}: ${doc.progress_msg}`);
      if (Date.now() > deadline) throw new Error(`parse not done within ${jobTimeoutMs() / 60_000} min: ${doc.progress_msg}`);
      await sleep(200);
    }
  }

  /** Starts a dataset job and polls it every 50 ms until it ends; the task and the client-observed seconds. */
  async datasetJob(datasetId: string, type: 'raptor' | 'graph'): Promise<{ task: Task; seconds: number }> {
    const start = performance.now();
    const started = (await this.call(`/datasets/${datasetId}/index?type=${type}`, 'POST')) as { task_id: string };
    const deadline = Date.now() + jobTimeoutMs();
    for (;;) {
      const task = (await this.call(`/datasets/${datasetId}/index?type=${type}`)) as Task;
      if (task.id === started.task_id && task.status !== 'running') {
        const seconds = (performance.now() - start) / 1000;
        if (task.status !== 'done') throw new Error(`${type} ended ${task.status}: ${task.message ?? task.progress_msg}`);
        return { task, seconds };
      }
      if (Date.now() > deadline) throw new Error(`${type} not done within ${jobTimeoutMs() / 60_000} min: ${task.progress_msg}`);
      await sleep(50);
    }
  }
}

/**
 * Where a dataset job's time went, from its workflow's history: per activity type, how many ran and their
 * summed run time (started → closed), and their summed wait in the task queue (scheduled → started).
 */
async function stepBreakdown(cairn: BenchCairn, type: 'raptor' | 'graph', datasetId: string): Promise<string> {
  // The task row says done just before the workflow's last step closes it.
  let run = await fetchWorkflowRun(cairn.temporalAddress, 'default', `dataset-${type}-${datasetId}`);
  for (let i = 0; run.status === 'open' && i < 50; i++) {
    await sleep(100);
    run = await fetchWorkflowRun(cairn.temporalAddress, 'default', `dataset-${type}-${datasetId}`);
  }
  const byType = new Map<string, { count: number; ms: number }>();
  let waitMs = 0;
  for (const a of run.activities) {
    const t = byType.get(a.type) ?? { count: 0, ms: 0 };
    t.count++;
    t.ms += a.closed - a.started;
    byType.set(a.type, t);
    waitMs += a.started - a.scheduled;
  }
  const steps = [...byType].map(([name, t]) => `${name} ${t.count}× ${(t.ms / 1000).toFixed(2)} s`).join(', ');
  return `workflow ${((run.end - run.start) / 1000).toFixed(2)} s: ${steps}; queue wait ${(waitMs / 1000).toFixed(2)} s`;
}

/** The enrichChunks step of the latest parse: its run time and counts, from the workflow history. */
async function enrichStep(cairn: BenchCairn, parses: number): Promise<ActivityRun & { result: { progress: { model_calls: number; cached_calls: number; tokens: number } } }> {
  const runs = await fetchParseHistories(cairn.temporalAddress, 'default', parses);
  const latest = runs.sort((a, b) => b.start - a.start)[0];
  const step = latest?.activities.find((a) => a.type === 'enrichChunks' && a.status === 'completed');
  const progress = (step?.result as { progress?: unknown } | undefined)?.progress;
  if (!step || !progress) throw new Error('the parse history has no completed enrichChunks step with its counts');
  return step as never;
}

async function runModel(model: ModelKind, chunks: number, settings: { keywords: number; questions: number }): Promise<Row[]> {
  let fake: FakeOpenAI | undefined;
  const cairn = await startBenchCairn(`enrich-${model}`, { CAIRN_EMBEDDED_WORKER: 'true' });
  const rows: Row[] = [];
  try {
    const bench = new Bench(cairn);
    const parserConfig: Record<string, unknown> = {
      chunk_token_num: CHUNK_TOKEN_NUM,
      delimiter: '\n',
      auto_keywords: settings.keywords,
      auto_questions: settings.questions,
    };
    if (model === 'fake') {
      fake = await startFakeOpenAI({ answer: enrichmentAnswers });
      // The fake records every request; forget them as they come.
      setInterval(() => fake!.clear(), 1000).unref();
      await bench.call('/providers/OpenAI-API-Compatible/instances', 'POST', {
        instance_name: 'bench',
        base_url: fake.baseUrl,
        model_info: [{ model_name: 'bench-chat', model_type: 'chat', max_tokens: BUILTIN_PROMPT_BUDGET }],
      });
      parserConfig.llm_id = FAKE_CHAT;
    }
    let parses = 0;

    // Warm-up: the first parse loads the workflow code, the embedding model and the chat model. Its two
    // paragraphs come after the measured ones: no answer of the warm-up is cached for the measured run.
    const paragraphs = documentText(chunks + 2).split('\n');
    const warm = await bench.call('/datasets', 'POST', { name: 'warm-up', parser_config: parserConfig });
    await bench.parse(warm.id, await bench.upload(warm.id, 'warm-up.txt', paragraphs.slice(chunks).join('\n')));
    parses++;

    const ds = await bench.call('/datasets', 'POST', { name: 'enrich-bench', parser_config: parserConfig });
    const docId = await bench.upload(ds.id, 'paragraphs.txt', paragraphs.slice(0, chunks).join('\n'));
    const row = (job: string, r: Omit<Row, 'model' | 'job' | 'chunks'>) => {
      rows.push({ model, job, chunks, ...r });
      console.log(`  ${job}: ${r.seconds.toFixed(2)} s, ${r.calls} calls (${r.cached} cached), ${r.tokens} tokens; ${r.built}`);
    };
    const steps = async (type: 'raptor' | 'graph') => console.log(`    ${await stepBreakdown(cairn, type, ds.id)}`);

    for (const pass of ['first run', 're-run, cached'] as const) {
      console.log(`[${model}] ${pass}`);
      const doc = await bench.parse(ds.id, docId);
      parses++;
      if (doc.chunk_count !== chunks) throw new Error(`the document parsed into ${doc.chunk_count} chunks, not ${chunks}`);
      const step = await enrichStep(cairn, parses);
      const p = step.result.progress;
      const sample = (await bench.call(`/datasets/${ds.id}/documents/${docId}/chunks?page_size=1`)).chunks[0];
      row(`keywords + questions, ${pass}`, {
        calls: p.model_calls, cached: p.cached_calls, tokens: p.tokens, seconds: (step.closed - step.started) / 1000,
        built: `e.g. keywords ${JSON.stringify(sample?.important_keywords ?? [])}, questions ${JSON.stringify(sample?.questions ?? [])}`.slice(0, 300),
      });

      // The graph before RAPTOR: it reads every chunk listed with the document, RAPTOR's summaries (scope file) included.
      const graph = await bench.datasetJob(ds.id, 'graph');
      const view = await bench.call(`/datasets/${ds.id}/graph`);
      row(`graph, ${pass}`, {
        calls: graph.task.model_calls, cached: graph.task.cached_calls, tokens: graph.task.tokens, seconds: graph.seconds,
        built: `${graph.task.message ?? graph.task.progress_msg} (GET /graph: ${view.graph?.nodes?.length ?? 0} nodes, ${view.graph?.edges?.length ?? 0} edges)`,
      });
      await steps('graph');
      if (model === 'fake' && pass !== 'first run') {
        await bench.call(`/datasets/${ds.id}`, 'PUT', { parser_config: { ...parserConfig, graphrag: { resolution: true, community: true } } });
        const more = await bench.datasetJob(ds.id, 'graph');
        row('graph + resolution + communities (extraction cached)', { calls: more.task.model_calls, cached: more.task.cached_calls, tokens: more.task.tokens, seconds: more.seconds, built: more.task.message ?? more.task.progress_msg });
        await steps('graph');
      }

      for (const threshold of [DEFAULT_THRESHOLD, TIGHTER_THRESHOLD]) {
        // A PUT merges parser_config: the threshold is always given.
        await bench.call(`/datasets/${ds.id}`, 'PUT', { parser_config: { ...parserConfig, raptor: { clustering_threshold: threshold } } });
        const raptor = await bench.datasetJob(ds.id, 'raptor');
        const label = threshold === DEFAULT_THRESHOLD ? 'RAPTOR' : `RAPTOR, clustering_threshold ${threshold}`;
        row(`${label}, ${pass}`, { calls: raptor.task.model_calls, cached: raptor.task.cached_calls, tokens: raptor.task.tokens, seconds: raptor.seconds, built: raptor.task.progress_msg });
        await steps('raptor');
      }
    }

    return rows;
  } catch (err) {
    console.error(`[${model}] failed; Cairn's last output:\n${cairn.lastOutput()}`);
    throw err;
  } finally {
    await cairn.stop();
    await fake?.close();
  }
}

const per100 = (value: number, chunks: number) => (value * 100) / chunks;

function printTable(rows: Row[]) {
  const n = (x: number) => Math.round(x).toLocaleString('en');
  console.log('\n| model | job | chunks | calls (cached) | tokens | wall s | calls / 100 chunks | tokens / 100 chunks | wall s / 100 chunks | tokens/s |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const model = r.model === 'fake' ? 'instant fake' : 'built-in SmolLM2-135M';
    const rate = r.calls > 0 ? n(r.tokens / r.seconds) : '–';
    console.log(`| ${model} | ${r.job} | ${r.chunks} | ${r.calls} (${r.cached}) | ${n(r.tokens)} | ${r.seconds.toFixed(2)} | ${n(per100(r.calls, r.chunks))} | ${n(per100(r.tokens, r.chunks))} | ${per100(r.seconds, r.chunks).toFixed(2)} | ${rate} |`);
  }
  console.log('\nPer 100 chunks = measured × 100 / chunks. Keywords, questions and graph extraction grow with the chunks; RAPTOR makes one call per cluster, and how many clusters the chunks form is not linear in their number.');
}

async function main() {
  const models = argument('models', 'fake,builtin').split(',').map((m) => m.trim()) as ModelKind[];
  for (const m of models) if (m !== 'fake' && m !== 'builtin') throw new Error(`--models: unknown model ${m} (fake, builtin)`);
  const settings = { keywords: Number(argument('keywords', '5')), questions: Number(argument('questions', '2')) };
  const chunksOf = (m: ModelKind) => Number(m === 'fake' ? argument('chunks', '100') : argument('builtin-chunks', '20'));
  console.log(`bench/enrich: ${corpusName()}, one document, chunks of 70–120 tokens; auto_keywords ${settings.keywords}, auto_questions ${settings.questions}; ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const rows: Row[] = [];
  for (const m of models) {
    const started = performance.now();
    rows.push(...(await runModel(m, chunksOf(m), settings)));
    console.log(`[${m}] ${((performance.now() - started) / 1000).toFixed(0)} s in all (Cairn start, warm-up, every job)`);
  }
  printTable(rows);
  console.log(`\nload average at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
