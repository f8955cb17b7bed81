/**
 * Workflow CPU per agent turn, with and without the SDK's per-promise stack-trace hook and its per-call
 * deadlock watchdog (prints numbers; not a timed test).
 *
 *   npx tsx bench/agents/workflow-cpu.ts [--replays 200] [--rounds 3] [--canvas-kb 0] [--first-task] [--history FILE]
 *
 * Replays a recorded agent turn (test/fixtures/histories/agent-run-v1-done.json: Begin → LLM → Message) through
 * the SDK's replay worker, on Cairn's workflow bundle, `replays` times per measurement, taking each of the
 * settings in CONFIGS in turn for `rounds` rounds, each measurement in a process of its own
 * (after a warm-up of 10 replays there). CPU time is the process's (every thread), so it is the cost of
 * running the turn's workflow code and the SDK around it, without a server or network, and it holds under
 * other load better than wall time. docs/operations.md, "Workflow stack traces" and "Workflow deadlock detection".
 *
 * `--history` replays another recorded turn instead (record-agent-run.ts writes one from the current code; the
 * default fixture was recorded before multitask strategies, so it replays their older path).
 * `--first-task` replays only the turn's first workflow task (the history up to its first activity's start):
 * the workflow's creation and the walk up to that activity, which is all the workflow side a caller's first
 * token waits for; the rest of a turn's CPU comes after the model has answered.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { argument, percentile } from '../common.js';
import { workflowBundlePath } from '../../src/engine/bundle-workflows.js';
import { installRuntimeOnce } from '../../src/engine/worker.js';
import { setProcessSetting } from '../../src/config-schema.js';

const rootDir = path.resolve(new URL('../..', import.meta.url).pathname);
const replays = Number(argument('replays', '200'));
const rounds = Number(argument('rounds', '3'));
const canvasKb = Number(argument('canvas-kb', '0'));
const firstTask = process.argv.includes('--first-task');
const historyFile = path.resolve(argument('history', path.join(rootDir, 'test/fixtures/histories/agent-run-v1-done.json')));
const recorded = withCanvasOf(JSON.parse(fs.readFileSync(historyFile, 'utf8')), canvasKb);
const history = historyFromJSON(firstTask ? untilFirstActivity(recorded) : recorded);

/** The history up to (not including) the start of its first activity: the first workflow task and its commands. */
function untilFirstActivity<T extends { events: Record<string, unknown>[] }>(json: T): T {
  const end = json.events.findIndex((e) => e.activityTaskStartedEventAttributes);
  return { ...json, events: json.events.slice(0, end) };
}

/**
 * The recorded turn with its canvas grown to about `kb` KB (0: as recorded) by components no path reaches, each an
 * LLM with a 1 KB system prompt: real canvases (RAGFlow's templates: 10–30 KB) travel whole in the turn's input
 * and in its end (agentFinishTurn), and the walk and the commands stay those of the recorded turn.
 */
function withCanvasOf(json: { events: { workflowExecutionStartedEventAttributes?: { input: { payloads: { data: string }[] } } }[] }, kb: number) {
  if (!kb) return json;
  const payload = json.events[0]!.workflowExecutionStartedEventAttributes!.input.payloads[0]!;
  const input = JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));
  const prompt = 'Answer as the support desk would, citing the knowledge base; é ü → ✓. '.repeat(15);
  for (let i = 0; JSON.stringify(input).length < kb * 1024; i++) {
    input.canvas.components[`pad:${i}`] = { obj: { component_name: 'LLM', params: { sys_prompt: prompt, prompts: [{ role: 'user', content: '{sys.query}' }] } }, downstream: [], upstream: [] };
  }
  payload.data = Buffer.from(JSON.stringify(input)).toString('base64');
  return json;
}

async function* copies(count: number) {
  for (let i = 0; i < count; i++) yield { workflowId: `turn-${i}`, history };
}

/** The workflow-thread settings compared (each patched into @temporalio/worker; docs/operations.md). */
const CONFIGS = {
  'stack traces on (CAIRN_WORKFLOW_STACK_TRACES=true)': { CAIRN_WORKFLOW_STACK_TRACES: 'true', CAIRN_WORKFLOW_DEADLOCK_DETECTION: 'false' },
  'deadlock detection on (the defaults)': { CAIRN_WORKFLOW_STACK_TRACES: 'false', CAIRN_WORKFLOW_DEADLOCK_DETECTION: 'true' },
  'both on (the SDK unpatched)': { CAIRN_WORKFLOW_STACK_TRACES: 'true', CAIRN_WORKFLOW_DEADLOCK_DETECTION: 'true' },
  'both off (CAIRN_WORKFLOW_DEADLOCK_DETECTION=false)': { CAIRN_WORKFLOW_STACK_TRACES: 'false', CAIRN_WORKFLOW_DEADLOCK_DETECTION: 'false' },
} as const;
type ConfigName = keyof typeof CONFIGS;

/** CPU ms and wall ms per replayed turn. */
async function measure(count: number): Promise<{ cpu: number; wall: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: workflowBundlePath(rootDir) } }, copies(count))) {
    if (result.error) throw result.error;
  }
  const cpu = process.cpuUsage(cpu0);
  return { cpu: (cpu.user + cpu.system) / 1000 / count, wall: (performance.now() - t0) / count };
}

/** One measurement in a process of its own: the SDK's threads read the settings once per process. */
function measureInChild(config: ConfigName): { cpu: number; wall: number } {
  const args = ['--child', config, '--replays', String(replays), '--canvas-kb', String(canvasKb), '--history', historyFile, ...(firstTask ? ['--first-task'] : [])];
  const out = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').pop()!);
}

const child = argument('child', '') as ConfigName | '';
if (child) {
  for (const [name, value] of Object.entries(CONFIGS[child])) setProcessSetting(name as keyof (typeof CONFIGS)[ConfigName], value);
  installRuntimeOnce();
  await measure(10); // warm-up: the bundle read and compiled once
  console.log(JSON.stringify(await measure(replays)));
  process.exit(0);
}

const names = Object.keys(CONFIGS) as ConfigName[];
const results = Object.fromEntries(names.map((n) => [n, { cpu: [] as number[], wall: [] as number[] }])) as Record<ConfigName, { cpu: number[]; wall: number[] }>;
for (let r = 0; r < rounds; r++) {
  for (const name of names) {
    const m = measureInChild(name);
    results[name].cpu.push(m.cpu);
    results[name].wall.push(m.wall);
  }
}
const fmt = (v: number) => v.toFixed(2).padStart(6);
const width = Math.max(...names.map((n) => n.length));
console.log(`agent turn ${path.basename(historyFile)}${firstTask ? ', its first workflow task only,' : ''} (canvas ${canvasKb ? `grown to ${canvasKb} KB` : 'as recorded, 1 KB'}) replayed ${replays}× per measurement, ${rounds} rounds; ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}`);
console.log(`${'workflow thread settings'.padEnd(width)} | CPU ms per turn, median (min) | wall ms per turn, median`);
for (const name of names) {
  const m = results[name];
  console.log(`${name.padEnd(width)} | ${fmt(percentile(m.cpu, 50))} (${fmt(Math.min(...m.cpu))})               | ${fmt(percentile(m.wall, 50))}`);
}
const unpatched = percentile(results['both on (the SDK unpatched)'].cpu, 50);
for (const label of ['deadlock detection on (the defaults)', 'both off (CAIRN_WORKFLOW_DEADLOCK_DETECTION=false)'] as const) {
  console.log(`${label} saves ${((1 - percentile(results[label].cpu, 50) / unpatched) * 100).toFixed(0)}% of a turn's workflow CPU against the SDK unpatched`);
}
