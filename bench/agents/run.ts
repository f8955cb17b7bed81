/**
 * Agent run benchmark (prints numbers; not a timed test).
 *
 *   npx tsx bench/agents/run.ts [--streams 1,10,50] [--samples 20] [--clients 8] [--seconds 20] [--worker embedded|process]
 *
 * Starts its own Temporal dev server and Cairn in this process on a temporary data directory, with the
 * embedded worker by default (the default deployment: API, workflows and activities share one Node
 * process); `--worker process` runs them in a `cairn worker` child process instead (bench/ingest/worker.ts;
 * run events then reach the API through the SQLite log, polled). The two scripted OpenAI-compatible
 * models run in their own processes (bench/chat/fake-model.ts):
 *
 * - "timed": TTFT 200 ms, 10 ms per token, 40 tokens, so its own time is known: first token at 200 ms,
 *   the whole answer at 200 + 39 × 10 = 590 ms;
 * - "instant": TTFT 0, no delay between tokens, 5 tokens.
 *
 * 1. Overhead. Begin → Agent (no tools: one model call) → Message, streamed from
 *    POST /api/v1/agents/chat/completions, beside the same question through a chat assistant without
 *    datasets (POST /api/v1/chat/completions), both on the timed model and a new session per request.
 *    At each concurrency level, rounds of N concurrent requests: the model alone, then the chat, then the
 *    agent, so all three see the same load. "Added" is the client-observed time minus the model's
 *    scripted time (p50 / p95 of the differences); the model's measured time is shown beside it, so a
 *    fake that runs late under load is visible.
 * 2. Workflow history per run, read with the Temporal client (workflow id `agent-<agentId>-session-<sessionId>`;
 *    fetchHistory: the events and the activities scheduled; describe: the server's history size in bytes)
 *    for that canvas and for the six-component one. Each level of 1. and the throughput run also print
 *    where a run's time went, from the histories' timestamps (bench/agents/histories.ts).
 * 3. Throughput. The six-component canvas, Begin → LLM → Switch → LLM → VariableAggregator → Message
 *    (the Switch also names a second LLM that the run does not take), on the instant model; `clients`
 *    concurrent clients post non-stream turns for `seconds` seconds.
 */
import { apiCall as call, argument, percentile, timeStream, type StreamSample, LOOPBACK_MODELS_ENV } from '../common.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { pino } from 'pino';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../src/config.js';
import { startCairn, type Cairn } from '../../src/server.js';
import { startDevServer, type DevServer } from '../../src/engine/dev-server.js';
import { firstTokenSplit, runHistories, runHistory, taskCounts, timeSplit, type RunHistory } from './histories.js';
import { startBenchWorker, type BenchWorker } from '../ingest/worker.js';
import { tokensAnswer } from '../../test/fakes/index.js';
import { canvas } from '../../test/integration/agent-helpers.js';

const TIMED = { ttft: 200, token: 10, tokens: 40 };
const INSTANT = { ttft: 0, token: 0, tokens: 5 };
const SCRIPTED_TTFT = TIMED.ttft;
const SCRIPTED_TOTAL = TIMED.ttft + (TIMED.tokens - 1) * TIMED.token;
const SYSTEM = 'You are a benchmark.';
const HISTORY_RUNS = 5;
const ITERATION_ITEMS = Number(argument('items', '100'));
const ITERATION_RUNS = 3;

type Sample = StreamSample;

interface Timed extends Sample {
  sessionId?: string;
}

function startModel(spec: { ttft: number; token: number; tokens: number }): Promise<{ baseUrl: string; stop(): void }> {
  const script = new URL('../chat/fake-model.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--import', 'tsx', script, String(spec.ttft), String(spec.token), String(spec.tokens)], { stdio: ['ignore', 'pipe', 'inherit'] });
  return once(child.stdout!, 'data').then(([line]) => ({ baseUrl: (line as Buffer).toString().trim(), stop: () => child.kill() }));
}

async function startOwnCairn(separateWorker: boolean): Promise<{ url: string; temporalAddress: string; namespace: string; stop(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-agents-'));
  const base = loadConfig({ ...process.env, ...LOOPBACK_MODELS_ENV, CAIRN_DATA_DIR: dataDir });
  const temporal: DevServer = await startDevServer({ rootDir: base.rootDir, dbFile: path.join(dataDir, 'temporal.db'), port: 0 });
  const cairn: Cairn = await startCairn({ ...base, port: 0, temporalAddress: temporal.address, embeddedWorker: !separateWorker }, { log: pino({ level: 'warn' }) });
  const worker: BenchWorker | undefined = separateWorker
    ? await startBenchWorker(base, temporal.address, LOOPBACK_MODELS_ENV).catch(async (err) => {
        await cairn.stop();
        await temporal.stop();
        throw err;
      })
    : undefined;
  return {
    url: cairn.url,
    temporalAddress: temporal.address,
    namespace: base.temporalNamespace,
    async stop() {
      await worker?.stop();
      await cairn.stop();
      await temporal.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const INSTANT_MODEL = 'bench-instant@instant@OpenAI-API-Compatible';

/** Begin → Agent (no tools) → Message on the tenant's default (timed) model. */
function agentCanvas() {
  return canvas([
    ['begin', 'Begin', { mode: 'conversational', prologue: '' }, ['Agent:Answer']],
    ['Agent:Answer', 'Agent', { sys_prompt: SYSTEM, prompts: [{ role: 'user', content: '{sys.query}' }], tools: [], max_rounds: 1 }, ['Message:Out']],
    ['Message:Out', 'Message', { content: ['{Agent:Answer@content}'] }, []],
  ]);
}

/** Six components on a run's path: Begin → LLM → Switch → LLM → VariableAggregator → Message, on the instant model. */
function sixCanvas() {
  const llm = (content: string) => ({ llm_id: INSTANT_MODEL, sys_prompt: SYSTEM, prompts: [{ role: 'user', content }] });
  return canvas([
    ['begin', 'Begin', { mode: 'conversational', prologue: '' }, ['LLM:Classify']],
    ['LLM:Classify', 'LLM', llm('Classify: {sys.query}'), ['Switch:Route']],
    [
      'Switch:Route',
      'Switch',
      { conditions: [{ logical_operator: 'and', items: [{ cpn_id: 'LLM:Classify@content', operator: 'contains', value: 'tok0' }], to: ['LLM:Answer'] }], end_cpn_ids: ['LLM:Fallback'] },
      ['LLM:Answer', 'LLM:Fallback'],
    ],
    ['LLM:Answer', 'LLM', llm('{sys.query} ({LLM:Classify@content})'), ['VariableAggregator:Join']],
    ['LLM:Fallback', 'LLM', llm('Apologise: {sys.query}'), ['VariableAggregator:Join']],
    ['VariableAggregator:Join', 'VariableAggregator', { groups: [{ group_name: 'answer', variables: [{ value: 'LLM:Answer@content' }, { value: 'LLM:Fallback@content' }] }] }, ['Message:Out']],
    ['Message:Out', 'Message', { content: ['{VariableAggregator:Join@answer}'] }, []],
  ]);
}

/** A new user with an API key, both fakes as models (timed = default chat model), a chat assistant and the two agents. */
async function setUp(cairnUrl: string, timedUrl: string, instantUrl: string) {
  const api = `${cairnUrl}/api/v1`;
  const email = `bench-${process.pid}-${Date.now()}@example.com`;
  const { res } = await call(`${api}/users`, 'POST', { email, nickname: 'bench', password: 'bench-pass' });
  const token = await call(`${api}/system/tokens`, 'POST', {}, res.headers.get('authorization')!);
  const key = `Bearer ${token.json.data.token}`;
  await call(`${api}/providers/OpenAI-API-Compatible/instances`, 'POST', { instance_name: 'bench', base_url: timedUrl, model_info: [{ model_name: 'bench-chat', model_type: 'chat' }] }, key);
  await call(`${api}/providers/OpenAI-API-Compatible/instances`, 'POST', { instance_name: 'instant', base_url: instantUrl, model_info: [{ model_name: 'bench-instant', model_type: 'chat' }] }, key);
  await call(`${api}/models/default`, 'PATCH', { model_type: 'chat', model_id: 'bench-chat@bench@OpenAI-API-Compatible' }, key);
  const chat = await call(`${api}/chats`, 'POST', { name: 'bench', prompt_config: { system: SYSTEM, parameters: [] } }, key);
  const agent = await call(`${api}/agents`, 'POST', { title: 'bench agent', dsl: agentCanvas() }, key);
  const six = await call(`${api}/agents`, 'POST', { title: 'bench six', dsl: sixCanvas() }, key);
  return { key, chatId: chat.json.data.id as string, agentId: agent.json.data.id as string, sixId: six.json.data.id as string };
}

/** Rounds of `streams` concurrent requests per kind, the kinds taking turns so all see the same machine load. */
async function measure<K extends string>(streams: number, samples: number, kinds: Record<K, () => Promise<Timed>>): Promise<Record<K, Timed[]>> {
  const out = Object.fromEntries(Object.keys(kinds).map((k) => [k, [] as Timed[]])) as Record<K, Timed[]>;
  for (let done = 0; done < samples; done += streams) {
    for (const k of Object.keys(kinds) as K[]) out[k].push(...(await Promise.all(Array.from({ length: streams }, kinds[k]))));
  }
  return out;
}

const levels = argument('streams', '1,10,50').split(',').map(Number);
const samples = Number(argument('samples', '20'));
const clients = Number(argument('clients', '8'));
const seconds = Number(argument('seconds', '20'));
const workerMode = argument('worker', 'embedded');
if (workerMode !== 'embedded' && workerMode !== 'process') throw new Error('--worker is embedded or process');

const began = performance.now();
const [timed, instant] = await Promise.all([startModel(TIMED), startModel(INSTANT)]);
const own = await startOwnCairn(workerMode === 'process');
const connection = await Connection.connect({ address: own.temporalAddress });
const temporal = new Client({ connection, namespace: own.namespace });
try {
  const { key, chatId, agentId, sixId } = await setUp(own.url, timed.baseUrl, instant.baseUrl);
  const fullAnswer = tokensAnswer(TIMED.tokens)([], '').answer;
  const instantAnswer = tokensAnswer(INSTANT.tokens)([], '').answer;

  const model = () =>
    timeStream(`${timed.baseUrl}/chat/completions`, {}, { model: 'bench-chat', stream: true, messages: [{ role: 'user', content: 'go' }] }, (f) => ({ first: f.includes('"content":"'), last: f === 'data: [DONE]' }));
  const chat = () =>
    timeStream(`${own.url}/api/v1/chat/completions`, { Authorization: key }, { chat_id: chatId, stream: true, messages: [{ role: 'user', content: 'go' }] }, (f) => {
      if (f.includes('"final":true') && !f.includes(`"answer":"${fullAnswer}"`)) throw new Error('the chat did not return the whole answer');
      return { first: f.startsWith('data:{"code":0') && !f.includes('"answer":""'), last: f === 'data:{"code":0,"message":"","data":true}' };
    });
  const agent = async (): Promise<Timed> => {
    let sessionId: string | undefined;
    let whole = false;
    const sample = await timeStream(`${own.url}/api/v1/agents/chat/completions`, { Authorization: key }, { agent_id: agentId, stream: true, query: 'go' }, (f) => {
      if (f.startsWith('data:{"code":')) throw new Error(`the agent run failed: ${f}`);
      sessionId ??= /"session_id":"([^"]+)"/.exec(f)?.[1];
      if (f.startsWith('data:{"event":"workflow_finished"')) whole = f.includes(`"content":"${fullAnswer}"`);
      return { first: f.startsWith('data:{"event":"message"') && !f.includes('"content":""'), last: f === 'data:[DONE]' };
    });
    if (!whole) throw new Error('the agent did not return the whole answer');
    return { ...sample, sessionId };
  };
  const sixRun = async (): Promise<string> => {
    const { json } = await call(`${own.url}/api/v1/agents/chat/completions`, 'POST', { agent_id: sixId, stream: false, query: 'go' }, key);
    if (json.data?.data?.content !== instantAnswer) throw new Error(`the six-component run answered ${JSON.stringify(json.data?.data?.content)}`);
    return json.data.session_id as string;
  };
  await model();
  await chat();
  await agent();
  await sixRun();

  // 1. Overhead over the timed model.
  console.log(`timed model: TTFT ${TIMED.ttft} ms, ${TIMED.token} ms/token, ${TIMED.tokens} tokens (scripted: first token ${SCRIPTED_TTFT} ms, whole answer ${SCRIPTED_TOTAL} ms); at least ${samples} streams per cell; ${workerMode === 'process' ? 'worker in its own process' : 'embedded worker'}; ${os.availableParallelism()} CPUs, load ${os.loadavg()[0]!.toFixed(2)}`);
  console.log('Begin → Agent (no tools) → Message vs a chat assistant without datasets; added = client time − scripted model time; ms, p50 / p95');
  console.log('refused: 503s from admission control, waited out for their Retry-After (times are of the admitted request), chat / agent');
  console.log('streams | model TTFT   | chat +TTFT   | agent +TTFT  | model total  | chat +total  | agent +total | refused');
  console.log('------- | ------------ | ------------ | ------------ | ------------ | ------------ | ------------ | -------');
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const pair = (xs: number[]) => `${percentile(xs, 50).toFixed(0).padStart(5)} /${percentile(xs, 95).toFixed(0).padStart(5)}`;
  const splits: string[] = [];
  for (const streams of levels) {
    // The event loop of this process: the API, and with the embedded worker the worker's side of every
    // workflow task (activations pass through it to the workflow thread and back) and the activities.
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    const m = await measure(streams, samples, { model, chat, agent });
    loop.disable();
    // The histogram holds whole timer intervals: what is beyond the 5 ms timer is the delay.
    const delay = (q: number) => Math.max(0, loop.percentile(q) / 1e6 - 5).toFixed(0);
    const added = (xs: Sample[], k: 'ttft' | 'total') => xs.map((s) => s[k] - (k === 'ttft' ? SCRIPTED_TTFT : SCRIPTED_TOTAL));
    const cells = [
      pair(m.model.map((s) => s.ttft)),
      pair(added(m.chat, 'ttft')),
      pair(added(m.agent, 'ttft')),
      pair(m.model.map((s) => s.total)),
      pair(added(m.chat, 'total')),
      pair(added(m.agent, 'total')),
      `${sum(m.chat.map((s) => s.refused))} / ${sum(m.agent.map((s) => s.refused))}`,
    ];
    console.log(`${String(streams).padStart(7)} | ${cells.join(' | ')}`);
    const runs = await runHistories(temporal, agentId, m.agent.map((s) => s.sessionId!));
    splits.push(`${String(streams).padStart(7)} | ${timeSplit(runs)}; ${firstTokenSplit(m.agent, runs, SCRIPTED_TTFT)}; this process's event-loop delay p50 ${delay(50)} / p99 ${delay(99)} ms`);
  }
  console.log('agent runs in their workflow histories, p50 per run (the model call is inside activity run):');
  for (const line of splits) console.log(line);

  // 2. Workflow history per run.
  const histories = async (label: string, ofAgent: string, run: () => Promise<string | undefined>) => {
    const runs: RunHistory[] = [];
    for (let i = 0; i < HISTORY_RUNS; i++) runs.push(await runHistory(temporal, ofAgent, (await run())!));
    const range = (xs: number[]) => (Math.min(...xs) === Math.max(...xs) ? String(xs[0]) : `${Math.min(...xs)}–${Math.max(...xs)}`);
    console.log(`${label.padEnd(42)} | ${range(runs.map((r) => r.events)).padStart(6)} | ${range(runs.map((r) => r.bytes)).padStart(11)} | ${taskCounts(runs[0]!)}`);
  };
  console.log();
  console.log(`workflow history per run (${HISTORY_RUNS} runs each; Temporal describe + fetchHistory)`);
  console.log('canvas                                     | events | bytes       | workflow tasks, activities, local activities');
  console.log('------------------------------------------ | ------ | ----------- | ----------');
  await histories('Begin → Agent → Message (stream)', agentId, async () => (await agent()).sessionId);
  await histories('six components, instant model (non-stream)', sixId, sixRun);

  // 3. Runs per second, six components, instant model.
  const latencies: number[] = [];
  const sixSessions: string[] = [];
  let failures = 0;
  const stopAt = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < stopAt) {
        const start = performance.now();
        try {
          sixSessions.push(await sixRun());
          latencies.push(performance.now() - start);
        } catch (err) {
          failures++;
          if (failures === 1) console.error(`a run failed: ${(err as Error).message}`);
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  console.log();
  console.log(`six-component canvas (Begin → LLM → Switch → LLM → VariableAggregator → Message), instant model, non-stream, ${clients} concurrent clients for ${seconds} s`);
  console.log(`runs: ${latencies.length} in ${elapsed.toFixed(1)} s = ${(latencies.length / elapsed).toFixed(1)} runs/s; latency p50 ${percentile(latencies, 50).toFixed(0)} ms, p95 ${percentile(latencies, 95).toFixed(0)} ms; failures ${failures}`);
  console.log(`in their workflow histories (${Math.min(40, sixSessions.length)} runs), p50 per run: ${timeSplit(await runHistories(temporal, sixId, sixSessions.slice(-40)))}`);

  // 4. The batch summariser template (Iteration) over 100 items, instant model.
  const templates = (await call(`${own.url}/api/v1/agents/templates`, 'GET', undefined, key)).json.data as { id: string; dsl: any }[];
  const batch = structuredClone(templates.find((t) => t.id === 'batch_summarizer')!.dsl);
  for (const c of Object.values(batch.components) as any[]) if ('llm_id' in c.obj.params) c.obj.params.llm_id = INSTANT_MODEL;
  const batchId = (await call(`${own.url}/api/v1/agents`, 'POST', { title: 'bench batch', dsl: batch }, key)).json.data.id as string;
  const items = Array.from({ length: ITERATION_ITEMS }, (_, i) => `Text number ${i}: a short paragraph to summarise.`);
  const batchSessions: string[] = [];
  const batchTimes: number[] = [];
  for (let i = 0; i < ITERATION_RUNS; i++) {
    const start = performance.now();
    const res = await call(`${own.url}/api/v1/agents/chat/completions`, 'POST', { agent_id: batchId, stream: false, inputs: { texts: { value: items } } }, key);
    batchTimes.push(performance.now() - start);
    batchSessions.push(res.json.data.session_id);
    const summaries = JSON.parse(res.json.data.data.content) as unknown[];
    if (summaries.length !== ITERATION_ITEMS) throw new Error(`the batch run returned ${summaries.length} summaries`);
  }
  const batchHistory = await runHistory(temporal, batchId, batchSessions.at(-1)!);
  console.log();
  console.log(`Iteration template (batch summariser) over ${ITERATION_ITEMS} items, instant model, ${ITERATION_RUNS} runs one after another`);
  console.log(`runs/s ${(1000 / percentile(batchTimes, 50)).toFixed(2)}; per run p50 ${percentile(batchTimes, 50).toFixed(0)} ms (${(percentile(batchTimes, 50) / ITERATION_ITEMS).toFixed(1)} ms per item); history ${batchHistory.events} events, ${batchHistory.bytes} bytes (${batchHistory.activities.length} activities)`);
  console.log(`(whole benchmark ${((performance.now() - began) / 1000).toFixed(0)} s)`);
} finally {
  await connection.close();
  await own.stop();
  timed.stop();
  instant.stop();
}
