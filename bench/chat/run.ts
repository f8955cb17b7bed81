/**
 * Chat streaming overhead benchmark (prints numbers; not a timed test).
 *
 *   npx tsx bench/chat/run.ts [--streams 1,10,50] [--samples 20] [--url http://127.0.0.1:9380]
 *
 * A scripted OpenAI-compatible model (TTFT 300 ms, 15 ms per token, 150 tokens; its own process)
 * answers a chat assistant without datasets. For each concurrency level the model is first streamed directly (its own
 * timings), then through Cairn's POST /api/v1/chat/completions (SSE, cumulative frames, a new session
 * per request: session write, model call, answer stored). "Added" is Cairn minus the model at the same
 * percentile: the time Cairn adds to the first answer token and to the whole answer.
 *
 * Without --url it starts its own Cairn in this process (a Temporal dev server, no worker: chat needs
 * none) on a temporary data directory. With --url it registers a new user on that Cairn (registration
 * must be open) and the Cairn must reach this machine's 127.0.0.1.
 */
import { argument, percentile, timeStream, type StreamSample, LOOPBACK_MODELS_ENV } from '../common.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { startCairn, type Cairn } from '../../src/server.js';
import { startDevServer, type DevServer } from '../../src/engine/dev-server.js';
import { tokensAnswer } from '../../test/fakes/index.js';

const TTFT_MS = 300;
const TOKEN_MS = 15;
const TOKENS = 150;

type Sample = StreamSample;

/** Rounds of `streams` concurrent requests, the model alone and through Cairn taking turns so both see the same machine load. */
async function measure(streams: number, samples: number, direct: () => Promise<Sample>, cairn: () => Promise<Sample>) {
  const out = { direct: [] as Sample[], cairn: [] as Sample[] };
  const batch = (run: () => Promise<Sample>) => Promise.all(Array.from({ length: streams }, run));
  for (let done = 0; done < samples; done += streams) {
    out.direct.push(...(await batch(direct)));
    out.cairn.push(...(await batch(cairn)));
  }
  return out;
}

async function startModel(): Promise<{ baseUrl: string; stop(): void }> {
  const script = new URL('./fake-model.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--import', 'tsx', script, String(TTFT_MS), String(TOKEN_MS), String(TOKENS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { baseUrl: line.toString().trim(), stop: () => child.kill() };
}

async function startOwnCairn(): Promise<{ url: string; stop(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-chat-'));
  const base = loadConfig({ ...process.env, ...LOOPBACK_MODELS_ENV, CAIRN_DATA_DIR: dataDir });
  const temporal: DevServer = await startDevServer({ rootDir: base.rootDir, dbFile: path.join(dataDir, 'temporal.db'), port: 0 });
  const cairn: Cairn = await startCairn({ ...base, port: 0, temporalAddress: temporal.address, embeddedWorker: false }, { log: pino({ level: 'warn' }) });
  return {
    url: cairn.url,
    async stop() {
      await cairn.stop();
      await temporal.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function call(url: string, method: string, body: unknown, auth?: string) {
  const res = await fetch(url, { method, headers: { 'Content-Type': 'application/json', ...(auth ? { Authorization: auth } : {}) }, body: JSON.stringify(body) });
  const json = (await res.json()) as { code: number; data: any; message?: string };
  if (json.code !== 0) throw new Error(`${method} ${url}: ${json.message}`);
  return { json, res };
}

/** A new user with an API key, the fake as its default chat model, and a chat assistant without datasets. */
async function setUp(cairnUrl: string, modelBaseUrl: string): Promise<{ key: string; chatId: string }> {
  const api = `${cairnUrl}/api/v1`;
  const email = `bench-${process.pid}-${Date.now()}@example.com`;
  const { res } = await call(`${api}/users`, 'POST', { email, nickname: 'bench', password: 'bench-pass' });
  const token = await call(`${api}/system/tokens`, 'POST', {}, res.headers.get('authorization')!);
  const key = `Bearer ${token.json.data.token}`;
  await call(`${api}/providers/OpenAI-API-Compatible/instances`, 'POST', { instance_name: 'bench', base_url: modelBaseUrl, model_info: [{ model_name: 'bench-chat', model_type: 'chat' }] }, key);
  await call(`${api}/models/default`, 'PATCH', { model_type: 'chat', model_id: 'bench-chat@bench@OpenAI-API-Compatible' }, key);
  const chat = await call(`${api}/chats`, 'POST', { name: 'bench', prompt_config: { system: 'You are a benchmark.', parameters: [] } }, key);
  return { key, chatId: chat.json.data.id };
}

const levels = argument('streams', '1,10,50').split(',').map(Number);
const samples = Number(argument('samples', '20'));
const fake = await startModel();
const own = process.argv.includes('--url') ? undefined : await startOwnCairn();
const cairnUrl = own?.url ?? argument('url', '');
try {
  const { key, chatId } = await setUp(cairnUrl, fake.baseUrl);
  const model = () =>
    timeStream(`${fake.baseUrl}/chat/completions`, {}, { model: 'bench-chat', stream: true, messages: [{ role: 'user', content: 'go' }] }, (f) => ({
      first: f.includes('"content":"'),
      last: f === 'data: [DONE]',
    }));
  const fullAnswer = tokensAnswer(TOKENS)([], '').answer;
  const cairn = () =>
    timeStream(
      `${cairnUrl}/api/v1/chat/completions`,
      { Authorization: key },
      { chat_id: chatId, stream: true, messages: [{ role: 'user', content: 'go' }] },
      (f) => {
        if (f.includes('"final":true') && !f.includes(`"answer":"${fullAnswer}"`)) throw new Error('Cairn did not return the whole answer');
        return { first: f.startsWith('data:{"code":0') && !f.includes('"answer":""'), last: f === 'data:{"code":0,"message":"","data":true}' };
      },
    );
  await model();
  await cairn();

  console.log(`model: TTFT ${TTFT_MS} ms, ${TOKEN_MS} ms/token, ${TOKENS} tokens; at least ${samples} streams per cell; ${os.availableParallelism()} CPUs, load ${os.loadavg()[0]!.toFixed(2)}`);
  console.log('ms, p50 / p95');
  console.log('streams | model TTFT  | Cairn TTFT  | added TTFT  | model total | Cairn total | added total');
  console.log('------- | ----------- | ----------- | ----------- | ----------- | ----------- | -----------');
  const pair = (a: number, b: number) => `${a.toFixed(0).padStart(5)} /${b.toFixed(0).padStart(5)}`;
  for (const streams of levels) {
    const { direct, cairn: through } = await measure(streams, samples, model, cairn);
    const p = (xs: Sample[], key: keyof Sample, q: number) => percentile(xs.map((s) => s[key]), q);
    const cells = (['ttft', 'total'] as const).flatMap((k) => [
      pair(p(direct, k, 50), p(direct, k, 95)),
      pair(p(through, k, 50), p(through, k, 95)),
      pair(p(through, k, 50) - p(direct, k, 50), p(through, k, 95) - p(direct, k, 95)),
    ]);
    console.log(`${String(streams).padStart(7)} | ${cells.join(' | ')}`);
  }
} finally {
  await own?.stop();
  fake.stop();
}
