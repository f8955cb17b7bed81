/**
 * kill -9 soak: a real `cairn start` (its own Temporal dev server, embedded worker) under a mixed load
 * (document parses, chat turns, agent turns, memory messages; an instant fake OpenAI-compatible model in
 * this process), killed with SIGKILL at random moments and restarted at once, `--kills` times.
 * After each restart it checks that the installation is healthy (GET /system/healthz), that no process
 * of the killed Cairn is left 2 s after the kill (/proc: the CAIRN_CHILD_OF mark naming the dead pid), and
 * that nothing is lost or doubled (checks.ts). At the end every document must be DONE.
 * Writes the figures to stdout and to `--out` (Markdown); exits 1 when anything was wrong.
 *
 *   npx tsx bench/soak/run.ts [--kills 10] [--min-s 4] [--max-s 12] [--backlog 3] [--restart-timeout-s 300]
 *                             [--drain-timeout-s 600] [--out bench/results/soak-kill9.md] [--keep]
 *
 * Bounded under load: uploads wait while `--backlog` documents are still parsing (so the parse queue, and
 * the wait for it at the end, stay short however slow the machine is), 503s are waited out for their
 * Retry-After, a restart gets `--restart-timeout-s` and two more tries (each failure reported), and a
 * check that cannot reach Cairn is retried, then reported, instead of ending the soak.
 * `--keep` keeps the data directory (its path is printed) to inspect cairn.db afterwards.
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
import { checkDocuments, checkMemory, checkSessions, KINDS, Ledger, listDocuments, type Finding } from './checks.js';

const rootDir = path.resolve(new URL('../..', import.meta.url).pathname);
const kills = Number(argument('kills', '10'));
const minS = Number(argument('min-s', '4'));
const maxS = Number(argument('max-s', '12'));
const backlog = Number(argument('backlog', '3'));
const restartTimeoutMs = Number(argument('restart-timeout-s', '300')) * 1000;
const drainTimeoutMs = Number(argument('drain-timeout-s', '600')) * 1000;
const out = argument('out', path.join(rootDir, 'bench/results/soak-kill9.md'));
const keep = process.argv.includes('--keep');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MODEL = 'OpenAI-API-Compatible';
const MEMORY_SESSION_SIZE = 50;

// ---- Cairn as an operator runs it -------------------------------------------------------------------
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-soak-'));
const port = await freePort();
const temporalPort = await freePort();
const base = `http://127.0.0.1:${port}/api/v1`;
let cairn: ChildProcess;
let output = '';
const findingsAfterKill: Finding[] = [];

/** One `cairn start`, until healthz answers 200 and the admin key exists; throws with the log's tail. */
async function startOnce(): Promise<number> {
  const began = performance.now();
  const env: NodeJS.ProcessEnv = { ...process.env, ...LOOPBACK_MODELS_ENV, CAIRN_DATA_DIR: dataDir, PORT: String(port), TEMPORAL_PORT: String(temporalPort), TEMPORAL_UI_PORT: '0', LOG_LEVEL: 'warn', CAIRN_PARSE_PROCESSES: '1' };
  for (const k of ['TEMPORAL_ADDRESS', 'CAIRN_TASK_QUEUE', 'CAIRN_DATABASE_URL', 'CAIRN_BLOBS']) delete env[k];
  output = '';
  cairn = spawn(process.execPath, [path.join(rootDir, 'bin/cairn.js'), 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const keepTail = (b: Buffer) => (output = (output + b.toString()).slice(-20_000));
  cairn.stdout!.on('data', keepTail);
  cairn.stderr!.on('data', keepTail);
  const deadline = Date.now() + restartTimeoutMs;
  for (;;) {
    if (cairn.exitCode !== null || cairn.signalCode !== null) throw new Error(`cairn start exited (${cairn.exitCode ?? cairn.signalCode}):\n${output.slice(-3000)}`);
    if (Date.now() > deadline) {
      await stopCairn('SIGKILL');
      throw new Error(`cairn did not become healthy within ${restartTimeoutMs / 1000} s:\n${output.slice(-3000)}`);
    }
    const healthy = await fetch(`${base}/system/healthz`).then((r) => r.ok, () => false);
    if (healthy && fs.existsSync(path.join(dataDir, 'admin-api-key'))) return performance.now() - began;
    await sleep(100);
  }
}

/** Starts Cairn, trying up to three times: a failed start is a finding (the user would see it), not the end of the soak. */
async function startCairn(label: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce();
    } catch (err) {
      findingsAfterKill.push({ kind: 'process', problem: 'restart', detail: `${label}, try ${attempt}: ${String(err).slice(0, 600)}` });
      console.log(`  ${label}: start try ${attempt} failed: ${String(err).split('\n').slice(0, 3).join(' | ')}`);
      if (attempt === 3) throw err;
      await sleep(5000);
    }
  }
}

/** Stops this Cairn (SIGKILL after 60 s if `signal` was gentler); returns its pid. */
async function stopCairn(signal: NodeJS.Signals): Promise<number> {
  // This process, not whichever `cairn` is current when the timer fires: a restart replaces it.
  const proc = cairn;
  if (proc.exitCode === null && proc.signalCode === null) {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    await exited;
    clearTimeout(timer);
  }
  return proc.pid!;
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
  const text = await res.text();
  let json: { code: number; data: any; message?: string };
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${method} ${route}: HTTP ${res.status} ${text.slice(0, 200)}`);
  }
  if (json.code !== 0) throw new Error(`${method} ${route}: HTTP ${res.status} ${json.message}`);
  return json.data;
}

// ---- the load ---------------------------------------------------------------------------------------
const fake = await startFakeOpenAI({ dims: 64, answer: () => ({ answer: 'All fine on the trail.' }) });
setInterval(() => fake.clear(), 1000).unref();

const ledger = new Ledger();
let running = true;

function paragraphs(n: number, count: number): Uint8Array {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(`Document ${n}, paragraph ${i}: the cairn on ridge ${n} marks crossing ${i}; walkers log the weather and the path.`);
  return Buffer.from(lines.join('\n\n'));
}

/** Runs `step` again and again until the soak ends; a step cut by a kill is not retried (the ledger counts it sent, not acknowledged). */
async function loop(step: (i: number) => Promise<void>) {
  for (let i = 0; running; i++) {
    try {
      await step(i);
    } catch {
      await sleep(500);
    }
  }
}

/**
 * Starts parsing `doc` as a user would: asking again when the request was cut by a kill, until Cairn
 * acknowledges it or says the document is already being parsed (the cut request had reached it).
 */
async function startParse(dataset: string, doc: string) {
  const giveUpAt = Date.now() + restartTimeoutMs * 3;
  for (;;) {
    try {
      await call('POST', `/datasets/${dataset}/chunks`, { document_ids: [doc] });
      return;
    } catch (err) {
      if (/already being parsed/.test(String(err)) || Date.now() > giveUpAt) return;
      await sleep(1000);
    }
  }
}

async function unfinishedDocuments(dataset: string): Promise<number> {
  return (await listDocuments(call, dataset)).filter((d) => d.run === 'RUNNING' || d.run === 'UNSTART').length;
}

await startCairn('first start');
key = `Bearer ${fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim()}`;
await call('POST', `/providers/${MODEL}/instances`, { instance_name: 'soak', base_url: fake.baseUrl, model_info: [{ model_name: 'soak-chat', model_type: 'chat' }, { model_name: 'soak-embed', model_type: 'embedding' }] });
await call('PATCH', '/models/default', { model_type: 'chat', model_id: `soak-chat@soak@${MODEL}` });
const dataset = (await call('POST', '/datasets', { name: 'soak', embedding_model: `soak-embed@soak@${MODEL}` })).id as string;
const chat = (await call('POST', '/chats', { name: 'soak', prompt_config: { system: 'Answer briefly.', parameters: [] } })).id as string;
const agent = (await call('POST', '/agents', { title: 'soak agent', dsl: agentCanvas() })).id as string;
const memory = (await call('POST', '/memories', { name: 'soak', memory_type: ['raw'], embd_id: `soak-embed@soak@${MODEL}`, llm_id: `soak-chat@soak@${MODEL}` })).id as string;
const pdf = await makePdf({ pages: 60, paragraphsPerPage: 6 });
const memorySessions: string[] = [];

const loads = [
  loop(async (i) => {
    while (running && (await unfinishedDocuments(dataset)) >= backlog) await sleep(1000);
    if (!running) return;
    const form = new FormData();
    const name = i % 3 === 0 ? `book-${i}.pdf` : `notes-${i}.txt`;
    form.append('file', new Blob([new Uint8Array(i % 3 === 0 ? pdf : paragraphs(i, 60))]), name);
    const [doc] = await ledger.request('document', () => call('POST', `/datasets/${dataset}/documents`, undefined, form) as Promise<{ id: string }[]>, ([d]) => ledger.documents.set(d!.id, name));
    await startParse(dataset, doc!.id);
  }),
  ...(['chat', 'agent'] as const).map((kind) =>
    loop(async (i) => {
      const session = (await call('POST', kind === 'chat' ? `/chats/${chat}/sessions` : `/agents/${agent}/sessions`, kind === 'chat' ? { name: `s${i}` } : {})).id as string;
      for (let t = 0; t < 3 && running; t++) {
        const question = `${kind} question ${i}.${t}`;
        await ledger.request(kind, () => call('POST', `/${kind}s/${kind === 'chat' ? chat : agent}/completions`, { question, session_id: session, stream: false }), () => {
          ledger[kind].set(session, [...(ledger[kind].get(session) ?? []), question]);
        });
      }
    }),
  ),
  loop(async (i) => {
    const session = `m${Math.floor(i / MEMORY_SESSION_SIZE)}`;
    if (!memorySessions.includes(session)) memorySessions.push(session);
    const text = `memory message ${i}`;
    await ledger.request('memory', () => call('POST', '/messages', { memory_id: [memory], agent_id: 'soak', session_id: session, user_input: text, agent_response: 'noted' }), () => {
      ledger.memory.set(session, [...(ledger.memory.get(session) ?? []), text]);
    });
    await sleep(200);
  }),
];

// ---- checks -----------------------------------------------------------------------------------------
/** One look at everything; a check that cannot reach Cairn is tried again, then reported as unhealthy. */
async function checkAll(final: boolean): Promise<{ findings: Finding[]; byRun: Record<string, number> }> {
  for (let attempt = 1; ; attempt++) {
    try {
      const findings = [
        ...(await checkSessions(call, 'chat', chat, ledger)),
        ...(await checkSessions(call, 'agent', agent, ledger)),
        ...(await checkMemory(call, memory, ledger, memorySessions)),
      ];
      const docs = await checkDocuments(call, dataset, ledger, final);
      return { findings: [...findings, ...docs.findings], byRun: docs.byRun };
    } catch (err) {
      if (attempt === 3) return { findings: [{ kind: 'health', problem: 'unhealthy', detail: `the checks failed 3 times: ${String(err).slice(0, 300)}` }], byRun: {} };
      await sleep(5000);
    }
  }
}

// ---- the soak ---------------------------------------------------------------------------------------
const restarts: number[] = [];
const orphansLeft: number[] = [];
const loadAtKill: number[] = [];
const seen = new Map<string, Finding>();
const reported = new Set<string>();
const began = performance.now();
for (let k = 1; k <= kills; k++) {
  await sleep((minS + Math.random() * (maxS - minS)) * 1000);
  loadAtKill.push(os.loadavg()[0]!);
  const dead = await stopCairn('SIGKILL');
  await sleep(2000);
  const orphans = childrenOf(dead);
  orphansLeft.push(orphans.length);
  if (orphans.length) findingsAfterKill.push({ kind: 'process', problem: 'orphan', detail: `kill ${k}: ${orphans.length} process(es) of the killed Cairn still ran 2 s later: ${orphans.join(', ')}` });
  const restartMs = await startCairn(`kill ${k}`);
  restarts.push(restartMs);
  const healthz = await fetch(`${base}/system/healthz`).then((r) => r.status, () => 0);
  if (healthz !== 200) findingsAfterKill.push({ kind: 'health', problem: 'unhealthy', detail: `kill ${k}: healthz ${healthz}` });
  const { findings, byRun } = await checkAll(false);
  for (const f of findings) if (!seen.has(f.detail)) {
    seen.set(f.detail, f);
    console.log(`  ${f.kind} ${f.problem}: ${f.detail}`);
  }
  const acked = KINDS.map((kind) => `${kind} ${ledger.acknowledged[kind]}/${ledger.sent[kind]}`).join(', ');
  for (const [reason, n] of ledger.refused) if (!reported.has(reason)) {
    reported.add(reason);
    console.log(`  error answer (${n} so far): ${reason}`);
  }
  console.log(`kill ${k}/${kills}: restart ${(restartMs / 1000).toFixed(1)} s, orphans ${orphans.length}, healthz ${healthz}, documents ${JSON.stringify(byRun)}, acknowledged/sent ${acked}, findings ${findings.length}, load ${loadAtKill.at(-1)!.toFixed(2)}`);
}
running = false;
await Promise.all(loads);
// Parsing catches up: every document DONE once.
const drainBegan = performance.now();
const drainDeadline = Date.now() + drainTimeoutMs;
while (Date.now() < drainDeadline && (await unfinishedDocuments(dataset)) > 0) await sleep(1000);
const drainS = (performance.now() - drainBegan) / 1000;
const final = await checkAll(true);
const minutes = (performance.now() - began) / 60_000;
const loadAtEnd = os.loadavg();
const lastPid = await stopCairn('SIGTERM');
await sleep(2000);
const leftAtStop = childrenOf(lastPid);
if (leftAtStop.length) final.findings.push({ kind: 'process', problem: 'orphan', detail: `after a clean stop: ${leftAtStop.length} process(es) still ran 2 s later: ${leftAtStop.join(', ')}` });

// ---- report -----------------------------------------------------------------------------------------
const count = (kind: string, problem: string) => final.findings.filter((f) => f.kind === kind && f.problem === problem).length;
const transient = [...seen.values()].filter((f) => !final.findings.some((g) => g.detail === f.detail));
const problems = [...findingsAfterKill, ...final.findings];
const report = [
  `# kill -9 soak (${new Date().toISOString().slice(0, 10)})`,
  '',
  `Command: \`npx tsx bench/soak/run.ts --kills ${kills} --min-s ${minS} --max-s ${maxS} --backlog ${backlog}\` (${os.cpus().length} CPUs shared with other engineers; instant fake model; CAIRN_PARSE_PROCESSES=1)`,
  '',
  `| figure | value |`,
  `|---|---|`,
  `| kills (SIGKILL of \`cairn start\`, restarted at once) | ${kills} |`,
  `| soak duration (with the wait for parsing at the end: ${drainS.toFixed(0)} s) | ${minutes.toFixed(1)} min |`,
  `| load average (1 min) at the kills, min / max; at the end (1 / 5 / 15 min) | ${Math.min(...loadAtKill).toFixed(2)} / ${Math.max(...loadAtKill).toFixed(2)}; ${loadAtEnd.map((l) => l.toFixed(2)).join(' / ')} (${os.cpus().length} CPUs) |`,
  `| restart to healthy, p50 / max | ${(percentile(restarts, 50) / 1000).toFixed(1)} s / ${(Math.max(...restarts) / 1000).toFixed(1)} s |`,
  `| restart per kill | ${restarts.map((r) => (r / 1000).toFixed(1)).join(', ')} s |`,
  `| failed starts (retried) | ${findingsAfterKill.filter((f) => f.problem === 'restart').length} |`,
  `| healthz 200 after each restart | ${findingsAfterKill.some((f) => f.problem === 'unhealthy') ? 'no' : `yes (${kills} of ${kills})`} |`,
  `| processes of the killed Cairn running 2 s after each kill | ${orphansLeft.join(', ')} |`,
  `| processes left 2 s after the final clean stop | ${leftAtStop.length} |`,
  `| documents at the end | ${JSON.stringify(final.byRun)} |`,
  `| 503s waited out (Retry-After) | ${refused} |`,
  '',
  '| kind | sent | acknowledged | no answer (cut by a kill) | error answer | lost (final check) | doubled (final check) | not sent (connection refused while Cairn was down) |',
  '|---|---|---|---|---|---|---|---|',
  ...KINDS.map((kind) => `| ${kind === 'document' ? 'document uploads' : `${kind} ${kind === 'memory' ? 'messages' : 'turns'}`} | ${ledger.sent[kind]} | ${ledger.acknowledged[kind]} | ${ledger.cut[kind]} | ${ledger.sent[kind] - ledger.acknowledged[kind] - ledger.cut[kind]} | ${count(kind, 'lost')} | ${count(kind, 'doubled')} | ${ledger.down[kind]} |`),
  '',
  ...(ledger.refused.size ? ['Error answers (a request Cairn answered with an error; around a kill, one whose work was under way):', '', ...[...ledger.refused].map(([reason, n]) => `- ${n} × ${reason}`), ''] : []),
  `Documents with a wrong chunk list: ${count('document', 'chunks')}. Findings after some kill that were gone at the end: ${transient.length}.`,
  `Problems (lost, doubled, unhealthy, failed starts, orphans, not DONE): ${problems.length}.`,
  '',
  ...(problems.length ? ['Problems:', '', ...problems.slice(0, 50).map((p) => `- ${p.kind} ${p.problem}: ${p.detail.replace(/\n/g, ' ')}`), ''] : []),
  ...(transient.length ? ['Gone by the end:', '', ...transient.slice(0, 20).map((p) => `- ${p.kind} ${p.problem}: ${p.detail}`), ''] : []),
];
console.log(report.join('\n'));
fs.writeFileSync(out, report.join('\n') + '\n');
await fake.close();
if (keep) console.log(`data dir kept: ${dataDir}`);
else fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(problems.length ? 1 : 0);

function agentCanvas() {
  return canvas([
    ['begin', 'Begin', { mode: 'conversational', prologue: '' }, ['Agent:Answer']],
    ['Agent:Answer', 'Agent', { sys_prompt: 'Answer briefly.', prompts: [{ role: 'user', content: '{sys.query}' }], tools: [], max_rounds: 1 }, ['Message:Out']],
    ['Message:Out', 'Message', { content: ['{Agent:Answer@content}'] }, []],
  ]);
}
