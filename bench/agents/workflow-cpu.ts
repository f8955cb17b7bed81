/**
 * Workflow CPU per agent turn, with and without the SDK's per-promise stack-trace hook (prints numbers; not
 * a timed test).
 *
 *   npx tsx bench/agents/workflow-cpu.ts [--replays 200] [--rounds 3]
 *
 * Replays a recorded agent turn (test/fixtures/histories/agent-run-v1-done.json: Begin → LLM → Message) through
 * the SDK's replay worker, on Cairn's workflow bundle, `replays` times per measurement, alternating
 * CAIRN_WORKFLOW_STACK_TRACES=true and false for `rounds` rounds, each measurement in a process of its own
 * (after a warm-up of 10 replays there). CPU time is the process's (every thread), so it is the cost of
 * running the turn's workflow code and the SDK around it, without a server or network, and it holds under
 * other load better than wall time. docs/operations.md, "Workflow stack traces".
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
const history = historyFromJSON(JSON.parse(fs.readFileSync(path.join(rootDir, 'test/fixtures/histories/agent-run-v1-done.json'), 'utf8')));

async function* copies(count: number) {
  for (let i = 0; i < count; i++) yield { workflowId: `turn-${i}`, history };
}

/** CPU ms and wall ms per replayed turn. */
async function measure(stackTraces: boolean, count: number): Promise<{ cpu: number; wall: number }> {
  setProcessSetting('CAIRN_WORKFLOW_STACK_TRACES', String(stackTraces));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: workflowBundlePath(rootDir) } }, copies(count))) {
    if (result.error) throw result.error;
  }
  const cpu = process.cpuUsage(cpu0);
  return { cpu: (cpu.user + cpu.system) / 1000 / count, wall: (performance.now() - t0) / count };
}

/** One measurement in a process of its own: the SDK's threads read the setting once per process. */
function measureInChild(stackTraces: boolean): { cpu: number; wall: number } {
  const out = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', String(stackTraces), '--replays', String(replays)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').pop()!);
}

const child = argument('child', '');
if (child) {
  installRuntimeOnce();
  await measure(child === 'true', 10); // warm-up: the bundle read and compiled once
  console.log(JSON.stringify(await measure(child === 'true', replays)));
  process.exit(0);
}

const results: Record<'on' | 'off', { cpu: number[]; wall: number[] }> = { on: { cpu: [], wall: [] }, off: { cpu: [], wall: [] } };
for (let r = 0; r < rounds; r++) {
  for (const on of [true, false]) {
    const m = measureInChild(on);
    results[on ? 'on' : 'off'].cpu.push(m.cpu);
    results[on ? 'on' : 'off'].wall.push(m.wall);
  }
}
const fmt = (v: number) => v.toFixed(2).padStart(6);
console.log(`agent turn replayed ${replays}× per measurement, ${rounds} rounds; ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}`);
console.log('stack-trace hook                      | CPU ms per turn, median (min) | wall ms per turn, median');
for (const key of ['on', 'off'] as const) {
  const m = results[key];
  console.log(`${key === 'on' ? 'on  (CAIRN_WORKFLOW_STACK_TRACES=true)' : 'off (the default)                    '} | ${fmt(percentile(m.cpu, 50))} (${fmt(Math.min(...m.cpu))})               | ${fmt(percentile(m.wall, 50))}`);
}
const saved = 1 - percentile(results.off.cpu, 50) / percentile(results.on.cpu, 50);
console.log(`off saves ${(saved * 100).toFixed(0)}% of a turn's workflow CPU`);
