/**
 * kill -9 soak: a real `cairn start` (its own Temporal dev server, embedded worker) under a mixed load
 * (document parses, chat turns, agent turns, memory messages; an instant fake OpenAI-compatible model in
 * this process), killed with SIGKILL at random moments and restarted at once, `--kills` times.
 * After each restart it checks that the installation is healthy (GET /system/healthz), that no process
 * of the killed Cairn is left (/proc: the CAIRN_CHILD_OF mark naming the dead pid), and that nothing
 * acknowledged is lost or doubled: each chat/agent question answered with 200 is in its session once,
 * each memory message accepted is stored once, and each DONE document has each of its chunks once.
 * At the end every document must be DONE. Writes the figures to stdout and to `--out` (Markdown).
 *
 *   npx tsx bench/soak/run.ts [--kills 10] [--min-s 4] [--max-s 12] [--out bench/results/soak-kill9.md]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { argument, fetchAdmitted, percentile, LOOPBACK_MODELS_ENV } from '../common.js';
import { freePort } from '../../src/engine/dev-server.js';
import { startFakeOpenAI } from '../../test/fakes/index.js';
import { makePdf } from '../../test/fixtures/generate.js';
import { canvas } from '../../test/integration/agent-helpers.js';

const rootDir = path.resolve(new URL('../..', import.meta.url).pathname);
const kills = Number(argument('kills', '10'));
const minS = Number(argument('min-s', '4'));
const maxS = Number(argument('max-s', '12'));
const out = argument('out', path.join(rootDir, 'bench/results/soak-kill9.md'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MODEL = 'OpenAI-API-Compatible';

// ---- Cairn as an operator runs it -------------------------------------------------------------------
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-soak-'));
const port = await freePort();
const temporalPort = await freePort();
const base = `http://127.0.0.1:${port}/api/v1`;
let cairn: ChildProcess;
let output = '';

async function startCairn(): Promise<number> {
  const began = performance.now();
  const env: NodeJS.ProcessEnv = { ...process.env, ...LOOPBACK_MODELS_ENV, CAIRN_DATA_DIR: dataDir, PORT: String(port), TEMPORAL_PORT: String(temporalPort), TEMPORAL_UI_PORT: '0', LOG_LEVEL: 'warn', CAIRN_PARSE_PROCESSES: '1' };
  for (const k of ['TEMPORAL_ADDRESS', 'CAIRN_TASK_QUEUE', 'CAIRN_DATABASE_URL', 'CAIRN_BLOBS']) delete env[k];
  cairn = spawn(process.execPath, [path.join(rootDir, 'bin/cairn.js'), 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (b: Buffer) => (output = (output + b.toString()).slice(-20_000));
  cairn.stdout!.on('data', keep);
  cairn.stderr!.on('data', keep);
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (cairn.exitCode !== null) throw new Error(`cairn start exited (${cairn.exitCode}):\n${output.slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`cairn did not become healthy within 180 s:\n${output.slice(-3000)}`);
    const healthy = await fetch(`${base}/system/healthz`).then((r) => r.ok, () => false);
    if (healthy && fs.existsSync(path.join(dataDir, 'admin-api-key'))) return performance.now() - began;
    await sleep(100);
  }
}

async function killCairn(): Promise<number> {
  const pid = cairn.pid!;
  const exited = new Promise((r) => cairn.once('exit', r));
  cairn.kill('SIGKILL');
  await exited;
  return pid;
}

/** Processes still running whose mark names `pid` as their parent (parsers, embedding, the dev server). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const mark = fs.readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').find((e) => e.startsWith('CAIRN_CHILD_OF='));
      if (mark && mark.split(':')[1] === String(pid)) found.push(Number(name));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

// ---- API --------------------------------------------------------------------------------------------
let key = '';
let refused = 0;
async function call(method: string, route: string, body?: unknown, form?: FormData): Promise<any> {
  const headers: Record<string, string> = key ? { Authorization: key } : {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const { res, refused: r } = await fetchAdmitted(`${base}${route}`, { method, headers, body: form ?? (body === undefined ? undefined : JSON.stringify(body)) });
  refused += r;
  const json = (await res.json()) as { code: number; data: any; message?: string };
  if (json.code !== 0) throw new Error(`${method} ${route}: HTTP ${res.status} ${json.message}`);
  return json.data;
}

// ---- the load ---------------------------------------------------------------------------------------
const fake = await startFakeOpenAI({ dims: 64, answer: () => ({ answer: 'All fine on the trail.' }) });
setInterval(() => fake.clear(), 1000).unref();

const expected = { chat: new Map<string, string[]>(), agent: new Map<string, string[]>(), memory: [] as { session: string; text: string }[], docs: [] as string[] };
const counts = { parses: 0, chatTurns: 0, agentTurns: 0, memoryMessages: 0, failedDuringKill: 0 };
let running = true;

function paragraphs(n: number, count: number): Uint8Array {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(`Document ${n}, paragraph ${i}: the cairn on ridge ${n} marks crossing ${i}; walkers log the weather and the path.`);
  return Buffer.from(lines.join('\n\n'));
}

/** Runs `step` again and again until the soak ends; a step that fails (Cairn was killed under it) is counted, not retried. */
async function loop(step: (i: number) => Promise<void>) {
  for (let i = 0; running; i++) {
    try {
      await step(i);
    } catch {
      counts.failedDuringKill++;
      await sleep(500);
    }
  }
}

await startCairn();
key = `Bearer ${fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim()}`;
await call('POST', `/providers/${MODEL}/instances`, { instance_name: 'soak', base_url: fake.baseUrl, model_info: [{ model_name: 'soak-chat', model_type: 'chat' }, { model_name: 'soak-embed', model_type: 'embedding' }] });
await call('PATCH', '/models/default', { model_type: 'chat', model_id: `soak-chat@soak@${MODEL}` });
const dataset = (await call('POST', '/datasets', { name: 'soak', embedding_model: `soak-embed@soak@${MODEL}` })).id as string;
const chat = (await call('POST', '/chats', { name: 'soak', prompt_config: { system: 'Answer briefly.', parameters: [] } })).id as string;
const agent = (await call('POST', '/agents', { title: 'soak agent', dsl: agentCanvas() })).id as string;
const memory = (await call('POST', '/memories', { name: 'soak', memory_type: ['raw'], embd_id: `soak-embed@soak@${MODEL}`, llm_id: `soak-chat@soak@${MODEL}` })).id as string;
const pdf = await makePdf({ pages: 60, paragraphsPerPage: 6 });

const loads = [
  loop(async (i) => {
    const form = new FormData();
    const name = i % 3 === 0 ? `book-${i}.pdf` : `notes-${i}.txt`;
    form.append('file', new Blob([new Uint8Array(i % 3 === 0 ? pdf : paragraphs(i, 60))]), name);
    const [doc] = (await call('POST', `/datasets/${dataset}/documents`, undefined, form)) as { id: string }[];
    expected.docs.push(doc!.id);
    await call('POST', `/datasets/${dataset}/chunks`, { document_ids: [doc!.id] });
    counts.parses++;
    await sleep(1500);
  }),
  loop(async (i) => {
    const session = (await call('POST', `/chats/${chat}/sessions`, { name: `s${i}` })).id as string;
    for (let t = 0; t < 3 && running; t++) {
      const question = `chat question ${i}.${t}`;
      await call('POST', `/chats/${chat}/completions`, { question, session_id: session, stream: false });
      expected.chat.set(session, [...(expected.chat.get(session) ?? []), question]);
      counts.chatTurns++;
    }
  }),
  loop(async (i) => {
    const session = (await call('POST', `/agents/${agent}/sessions`, {})).id as string;
    for (let t = 0; t < 3 && running; t++) {
      const question = `agent question ${i}.${t}`;
      await call('POST', `/agents/${agent}/completions`, { question, session_id: session, stream: false });
      expected.agent.set(session, [...(expected.agent.get(session) ?? []), question]);
      counts.agentTurns++;
    }
  }),
  loop(async (i) => {
    const session = `m${Math.floor(i / 50)}`;
    const text = `memory message ${i}`;
    await call('POST', '/messages', { memory_id: [memory], agent_id: 'soak', session_id: session, user_input: text, agent_response: 'noted' });
    expected.memory.push({ session, text });
    counts.memoryMessages++;
    await sleep(200);
  }),
];

// ---- checks -----------------------------------------------------------------------------------------
const problems: string[] = [];
const occurrences = (list: string[], value: string) => list.filter((v) => v === value).length;

async function checkSessions(kind: 'chats' | 'agents', owner: string, sessions: Map<string, string[]>) {
  for (const [session, questions] of sessions) {
    const [found] = (await call('GET', `/${kind}/${owner}/sessions?id=${session}`)) as { messages: { role: string; content: string }[] }[];
    const asked = (found?.messages ?? []).filter((m) => m.role === 'user').map((m) => m.content);
    for (const q of questions) if (occurrences(asked, q) !== 1) problems.push(`${kind} session ${session}: "${q}" stored ${occurrences(asked, q)} times`);
  }
}

async function checkMemory() {
  const bySession = new Map<string, string[]>();
  for (const m of expected.memory) bySession.set(m.session, [...(bySession.get(m.session) ?? []), m.text]);
  for (const [session, texts] of bySession) {
    const stored = (await call('GET', `/messages?memory_id=${memory}&session_id=${session}&limit=100`)) as any;
    const list = (Array.isArray(stored) ? stored : (stored.messages ?? stored.message_list ?? [])) as { user_input?: string; content?: string }[];
    const seen = list.map((m) => m.user_input ?? m.content ?? '');
    for (const t of texts) {
      // "memory message 1" must not count "memory message 12".
      const n = seen.filter((s) => s.includes(t) && !/\d/.test(s.charAt(s.indexOf(t) + t.length))).length;
      if (n !== 1) problems.push(`memory session ${session}: "${t}" stored ${n} times`);
    }
  }
}

async function documents(): Promise<{ id: string; name: string; run: string; chunk_count: number; progress_msg?: string }[]> {
  const all: any[] = [];
  for (let page = 1; ; page++) {
    const docs = (await call('GET', `/datasets/${dataset}/documents?page=${page}&page_size=100`)).docs as any[];
    all.push(...docs);
    if (docs.length < 100) return all;
  }
}

async function checkDocuments(final: boolean): Promise<Record<string, number>> {
  const docs = await documents();
  const byRun: Record<string, number> = {};
  for (const doc of docs) {
    byRun[doc.run] = (byRun[doc.run] ?? 0) + 1;
    if (final && doc.run !== 'DONE') problems.push(`document ${doc.name} ended ${doc.run}: ${doc.progress_msg ?? ''}`.slice(0, 300));
    if (doc.run !== 'DONE') continue;
    const texts: string[] = [];
    let total = -1;
    for (let page = 1; texts.length !== total; page++) {
      const chunks = await call('GET', `/datasets/${dataset}/documents/${doc.id}/chunks?page=${page}&page_size=100`);
      total = chunks.total;
      if (chunks.chunks.length === 0) break;
      texts.push(...(chunks.chunks as { content: string }[]).map((c) => c.content));
    }
    if (total !== doc.chunk_count || texts.length !== total || new Set(texts).size !== texts.length) problems.push(`document ${doc.name}: chunk_count ${doc.chunk_count}, listed ${total}, read ${texts.length}, distinct ${new Set(texts).size}`);
  }
  for (const id of expected.docs) if (!docs.some((d) => d.id === id)) problems.push(`document ${id} (upload acknowledged) is missing`);
  return byRun;
}

// ---- the soak ---------------------------------------------------------------------------------------
const restarts: number[] = [];
const orphansLeft: number[] = [];
const began = performance.now();
for (let k = 1; k <= kills; k++) {
  await sleep((minS + Math.random() * (maxS - minS)) * 1000);
  const dead = await killCairn();
  await sleep(2000);
  const orphans = childrenOf(dead);
  orphansLeft.push(orphans.length);
  if (orphans.length) problems.push(`kill ${k}: ${orphans.length} process(es) of the killed Cairn still ran 2 s later: ${orphans.join(', ')}`);
  const restartMs = await startCairn();
  restarts.push(restartMs);
  const healthz = await fetch(`${base}/system/healthz`);
  if (!healthz.ok) problems.push(`kill ${k}: healthz ${healthz.status}`);
  await checkSessions('chats', chat, expected.chat);
  await checkSessions('agents', agent, expected.agent);
  await checkMemory();
  const runs = await checkDocuments(false);
  console.log(`kill ${k}/${kills}: restart ${(restartMs / 1000).toFixed(1)} s, orphans ${orphans.length}, documents ${JSON.stringify(runs)}, chat ${counts.chatTurns}, agent ${counts.agentTurns}, memory ${counts.memoryMessages}, problems ${problems.length}`);
}
running = false;
await Promise.all(loads);
// Parsing caught up: every document DONE once.
const drainDeadline = Date.now() + 600_000;
while (Date.now() < drainDeadline && (await documents()).some((d) => d.run === 'RUNNING' || d.run === 'UNSTART')) await sleep(1000);
await checkSessions('chats', chat, expected.chat);
await checkSessions('agents', agent, expected.agent);
await checkMemory();
const finalRuns = await checkDocuments(true);
const minutes = (performance.now() - began) / 60_000;

const report = [
  `# kill -9 soak (${new Date().toISOString().slice(0, 10)})`,
  '',
  `Command: \`npx tsx bench/soak/run.ts --kills ${kills} --min-s ${minS} --max-s ${maxS}\` (${os.cpus().length} CPUs, shared machine; instant fake model; CAIRN_PARSE_PROCESSES=1)`,
  '',
  `| figure | value |`,
  `|---|---|`,
  `| kills (SIGKILL of \`cairn start\`, restarted at once) | ${kills} |`,
  `| soak duration | ${minutes.toFixed(1)} min |`,
  `| restart to healthy, p50 / max | ${(percentile(restarts, 50) / 1000).toFixed(1)} s / ${(Math.max(...restarts) / 1000).toFixed(1)} s |`,
  `| processes of the killed Cairn running 2 s after each kill | ${orphansLeft.join(', ')} |`,
  `| parses started / documents at the end | ${counts.parses} / ${JSON.stringify(finalRuns)} |`,
  `| chat turns / agent turns / memory messages acknowledged | ${counts.chatTurns} / ${counts.agentTurns} / ${counts.memoryMessages} |`,
  `| requests cut by a kill (not acknowledged, not checked) | ${counts.failedDuringKill} |`,
  `| 503s waited out (Retry-After) | ${refused} |`,
  `| problems (lost, doubled, unhealthy, orphans, not DONE) | ${problems.length} |`,
  '',
  ...(problems.length ? ['Problems:', '', ...problems.slice(0, 50).map((p) => `- ${p}`)] : []),
];
console.log(report.join('\n'));
fs.writeFileSync(out, report.join('\n') + '\n');
cairn!.kill('SIGTERM');
await new Promise((r) => cairn.once('exit', r));
await fake.close();
fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(problems.length ? 1 : 0);

function agentCanvas() {
  return canvas([
    ['begin', 'Begin', { mode: 'conversational', prologue: '' }, ['Agent:Answer']],
    ['Agent:Answer', 'Agent', { sys_prompt: 'Answer briefly.', prompts: [{ role: 'user', content: '{sys.query}' }], tools: [], max_rounds: 1 }, ['Message:Out']],
    ['Message:Out', 'Message', { content: ['{Agent:Answer@content}'] }, []],
  ]);
}
