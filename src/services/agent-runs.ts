import type { MetaStore } from '../store/index.js';
import type { AgentRunRow, AgentRunStepRow } from '../store/agent-runs.js';
import type { Principal } from './auth.js';
import type { AgentService } from './agents.js';
import { turnStillRunning, type AgentSessionService, type AgentTurn } from './agent-sessions.js';
import type { Outputs, ReferenceBucket, RunInputs } from '../agents/dsl.js';
import type { RunRequest } from '../agents/run-types.js';
import { API_PREFIX } from '../api/routes.js';
import { badRequest, notFound } from '../errors.js';
import { isId } from '../ids.js';

/** A value whose JSON is longer than this is abridged in run listings, with a link to the whole value. */
export const LARGE_VALUE_BYTES = 4096;
/** Characters of an abridged value's text that listings keep. */
const PREVIEW_CHARS = 1000;

export interface ReplayInput {
  from_component: string;
  inputs?: RunInputs;
}

type StepField = 'inputs' | 'outputs';

/**
 * The durable records of agent turns (docs/agents.md, "Runs and replay"): a session's runs with their
 * component steps, one step's whole value, RAGFlow's per-turn trace, and the replay of a run.
 */
export class AgentRunService {
  constructor(
    private readonly store: MetaStore,
    private readonly agents: AgentService,
    private readonly sessions: AgentSessionService,
  ) {}

  /** A session's runs, newest first, with their steps (large values abridged). */
  async list(p: Principal, agentId: string, sessionId: string, page: number, pageSize: number) {
    await this.sessions.get(p, agentId, sessionId);
    const [rows, total] = await Promise.all([this.store.agentRuns.ofSession(sessionId, (page - 1) * pageSize, pageSize), this.store.agentRuns.countOfSession(sessionId)]);
    const steps = await this.store.agentRuns.steps(rows.map((r) => r.id));
    return { runs: rows.map((r) => runView(r, steps.filter((s) => s.run_id === r.id))), total };
  }

  async detail(p: Principal, agentId: string, sessionId: string, runId: string) {
    const run = await this.run(p, agentId, sessionId, runId);
    return runView(run, await this.store.agentRuns.steps([run.id]));
  }

  /** One step's whole inputs or outputs, or one key of them. */
  async stepValue(p: Principal, agentId: string, sessionId: string, runId: string, step: string, field: StepField, key?: string): Promise<unknown> {
    const run = await this.run(p, agentId, sessionId, runId);
    const index = /^\d{1,6}$/.test(step) ? Number(step) : -1;
    const row = index >= 0 ? await this.store.agentRuns.step(run.id, index) : undefined;
    if (!row) throw notFound(`Step '${step}' not found in run '${runId}'`);
    const value = JSON.parse(row[field]) as unknown;
    if (key === undefined) return value;
    if (!isObject(value) || !(key in value)) throw notFound(`Step ${index} of run '${runId}' has no ${field} '${key}'`);
    return value[key];
  }

  /**
   * RAGFlow's turn log (`GET /agents/{id}/logs/{message_id}`): `[{component_id, trace: [{path,
   * tool_name, arguments, result, elapsed_time}]}]` for each component that called tools, or `{}`
   * when the turn made no tool call or is unknown (as RAGFlow answers for a missing log).
   */
  async logs(p: Principal, agentId: string, messageId: string) {
    await this.agents.get(p, agentId);
    // A value that cannot be a message id is an error; a message id without a log is RAGFlow's {}.
    if (!isId(messageId)) throw notFound('`message_id` is not a message id');
    const run = await this.store.agentRuns.byId(messageId);
    if (!run || run.agent_id !== agentId) return {};
    const traced = (await this.store.agentRuns.steps([run.id]))
      .map((s) => ({ component_id: s.component_id, trace: JSON.parse(s.trace) as unknown[] }))
      .filter((s) => s.trace.length);
    return traced.length ? traced : {};
  }

  /**
   * Starts a new turn replaying a recorded run: every component that finished before
   * `from_component` takes its recorded outputs, `from_component` and what follows run anew.
   * `inputs` (Begin's input values) replace the recorded ones; the question is the recorded one.
   */
  async replay(p: Principal, agentId: string, sessionId: string, runId: string, input: ReplayInput): Promise<AgentTurn> {
    const run = await this.run(p, agentId, sessionId, runId);
    if (run.status === 'running') throw turnStillRunning(sessionId);
    const steps = await this.store.agentRuns.steps([run.id]);
    const from = steps.findIndex((s) => s.component_id === input.from_component);
    if (from < 0) {
      const ran = [...new Set(steps.map((s) => s.component_id))].join(', ');
      throw badRequest(`Component '${input.from_component}' did not run in run '${runId}' (it ran: ${ran || 'nothing'})`);
    }
    const reuse: Record<string, Outputs> = {};
    const reuseReferences: Record<string, ReferenceBucket> = {};
    for (const s of steps.slice(0, from)) {
      if (s.status !== 'finished') continue;
      reuse[s.component_id] = JSON.parse(s.outputs) as Outputs;
      // Steps recorded before references were kept (no column value) replay without their chunks.
      if (s.reference) reuseReferences[s.component_id] = JSON.parse(s.reference) as ReferenceBucket;
      else delete reuseReferences[s.component_id];
    }
    const request = JSON.parse(run.request) as RunRequest;
    return this.sessions.startTurn(p, {
      agent_id: agentId,
      session_id: sessionId,
      query: request.query,
      inputs: input.inputs ?? request.inputs,
      files: request.files,
      user_id: request.userId,
      chat_template_kwargs: request.chatTemplateKwargs,
      trigger: 'replay',
      replay: { run_id: run.id, from_component: input.from_component, reuse, reuseReferences },
    });
  }

  /** The run if it is of this session and the caller may use the agent; 404 otherwise. */
  private async run(p: Principal, agentId: string, sessionId: string, runId: string): Promise<AgentRunRow> {
    await this.sessions.get(p, agentId, sessionId);
    const run = /^[0-9a-f]{32}$/.test(runId) ? await this.store.agentRuns.byId(runId) : undefined;
    if (!run || run.session_id !== sessionId) throw notFound(`Run '${runId}' not found in session '${sessionId}'`);
    return run;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

function runView(run: AgentRunRow, steps: AgentRunStepRow[]) {
  const request = JSON.parse(run.request) as RunRequest;
  const base = `${API_PREFIX}/agents/${run.agent_id}/sessions/${run.session_id}/runs/${run.id}`;
  return {
    id: run.id,
    message_id: run.id,
    agent_id: run.agent_id,
    session_id: run.session_id,
    status: run.status,
    trigger: run.trigger,
    replay_of: run.replay_of,
    from_component: run.from_component,
    query: request.query,
    inputs: request.inputs,
    error: run.error,
    start_time: seconds(run.start_time),
    end_time: seconds(run.end_time),
    elapsed_time: run.end_time === null ? null : (run.end_time - run.start_time) / 1000,
    steps: steps.map((s) => ({
      index: s.step_index,
      component_id: s.component_id,
      component_name: s.component_name,
      component_type: s.component_type,
      status: s.status,
      reused: s.reused === 1,
      start_time: seconds(s.started_at),
      elapsed_time: s.duration,
      error: s.error,
      inputs: abridged(JSON.parse(s.inputs), `${base}/steps/${s.step_index}/inputs`),
      outputs: abridged(JSON.parse(s.outputs), `${base}/steps/${s.step_index}/outputs`),
      trace: JSON.parse(s.trace) as unknown[],
    })),
  };
}

/**
 * A value as listings show it: each key of an object (or the value itself) whose JSON is longer than
 * LARGE_VALUE_BYTES becomes `{truncated, size, full_value}`: the start of its text, its size in bytes,
 * and the link that answers the whole value.
 */
export function abridged(value: unknown, link: string): unknown {
  if (!isObject(value)) return abridgeOne(value, link);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, abridgeOne(v, `${link}/${encodeURIComponent(k)}`)]));
}

function abridgeOne(value: unknown, link: string): unknown {
  const json = JSON.stringify(value) ?? '';
  const size = Buffer.byteLength(json);
  if (size <= LARGE_VALUE_BYTES) return value;
  const text = typeof value === 'string' ? value : json;
  return { truncated: `${text.slice(0, PREVIEW_CHARS)}…`, size, full_value: link };
}
