import type { MetaStore } from '../store/index.js';
import type { AgentRow, AgentSessionRow } from '../store/agents.js';
import type { Principal } from './auth.js';
import type { AgentService } from './agents.js';
import type { AgentAttachmentService } from './agent-attachments.js';
import { isRelease } from './agents.js';
import type { RunEvent, RunEvents } from '../events/types.js';
import type { CanvasDsl, Outputs, ReferenceBucket, RunInputs } from '../agents/dsl.js';
import type { AgentRunInput, AgentTurnSignal, CanvasLimits, MultitaskStrategy, OpenAgentRun } from '../agents/run-types.js';
import { resumeKey } from '../agents/resume-key.js';
import { runnableCanvas, sessionMessages, type AgentMessage } from '../agents/io/session-turns.js';
import { recordRunStart } from '../agents/io/run-records.js';
import { followAgentRun } from '../agents/stream.js';
import { prologue } from '../agents/components/pure.js';
import { partialDeleteTargets, type PartialDelete } from './delete-targets.js';
import { canManage } from './access.js';
import { isId, newId } from '../ids.js';
import { nowMs, toSeconds } from '../time.js';
import { ApiError, ServiceUnavailable, badRequest, notFound } from '../errors.js';

/** What starts, cancels and watches agent runs (the Temporal workflow client). */
export interface AgentRunControl {
  startAgentRun(input: AgentRunInput): Promise<boolean>;
  /** Starts the turn, or hands it to the session's running workflow to queue it or stop its turn for it. */
  submitAgentTurn(input: AgentRunInput, strategy: AgentTurnSignal['strategy']): Promise<void>;
  cancelAgentRun(agentId: string, sessionId: string): Promise<boolean>;
  agentRunOpen(agentId: string, sessionId: string): Promise<boolean>;
  openAgentRun(agentId: string, sessionId: string): Promise<OpenAgentRun | undefined>;
  /** Waits (at most `ms`) until the session's workflow no longer runs `runId`; true when it moved on. */
  waitAgentRunMovedOn(agentId: string, sessionId: string, runId: string, ms: number): Promise<boolean>;
}

export interface CreateSessionInput {
  name?: string;
  user_id?: string;
  release?: boolean | string;
  /** Other keys: values for the Begin component's input fields. */
  [beginField: string]: unknown;
}

export interface CompletionInput {
  agent_id: string;
  query?: string;
  session_id?: string;
  inputs?: RunInputs;
  files?: unknown[];
  user_id?: string;
  chat_template_kwargs?: Record<string, unknown>;
  release?: boolean | string;
  /** What to do when a turn of the session is running (default `reject`: 409). */
  multitask_strategy?: MultitaskStrategy;
  /** What starts the turn, for its run record ('completion' when absent). */
  trigger?: string;
  /** Replays a recorded run: these components take their recorded outputs and references (AgentRunService.replay). */
  replay?: { run_id: string; from_component: string; reuse: Record<string, Outputs>; reuseReferences: Record<string, ReferenceBucket> };
  /** What the new session (none given) is listed as: "workflow" by default; a trigger's call names itself. */
  source?: NewSessionSource;
}

/** How a session came to be: see AgentSessionsTable.source. */
type SessionSource = AgentSessionRow['source'];
type NewSessionSource = Exclude<SessionSource, 'agent'>;

/** A started turn: its ids and its events, in RAGFlow's envelope. */
export interface AgentTurn {
  messageId: string;
  sessionId: string;
  createdAt: number;
  events(signal?: AbortSignal): AsyncGenerator<RunEvent>;
}

export interface ListAgentSessionsInput {
  page: number;
  page_size: number;
  orderby: 'create_time' | 'update_time';
  desc: boolean;
  id?: string;
  user_id?: string;
  dsl?: boolean;
}

/** A fresh session canvas: the agent's DSL without any previous run state. */
function freshCanvas(dsl: CanvasDsl): CanvasDsl {
  const g = { ...dsl.globals };
  for (const key of Object.keys(g)) if (key.startsWith('sys.')) delete g[key];
  return { ...dsl, globals: { 'sys.query': '', 'sys.user_id': '', 'sys.conversation_turns': 0, 'sys.files': [], 'sys.history': [], ...g }, history: [], path: [], retrieval: [], component_outputs: {}, paused: false };
}

/** The 409 of a second turn while one of the session runs. */
export function turnStillRunning(sessionId: string): ApiError {
  return new ApiError(409, `A turn of session ${sessionId} is still running: wait for it to end, or stop it with POST /api/v1/tasks/${sessionId}/cancel, or send multitask_strategy enqueue, interrupt or rollback`);
}

/**
 * How long a turn waits for the previous turn's workflow to close once that turn's end is recorded. The
 * workflow closes within milliseconds; but a worker killed after the end was recorded and before the
 * workflow closed holds the workflow task until Temporal's workflow task timeout (10 s), then another
 * worker replays the run and closes it.
 */
const TURN_CLOSE_WAIT_MS = 30_000;

/** The 503 of a turn whose previous turn ended but whose workflow did not close in TURN_CLOSE_WAIT_MS (no worker takes it). */
function turnStillClosing(sessionId: string): ServiceUnavailable {
  return new ServiceUnavailable(
    `The previous turn of session ${sessionId} has ended, but its workflow has not closed within ${TURN_CLOSE_WAIT_MS / 1000} s: no agents worker is taking it (is one running?). Nothing was stored; send the turn again`,
    5,
  );
}

/** Agent sessions and their turns: each turn is a durable `agentRun` workflow. */
export class AgentSessionService {
  constructor(
    private readonly store: MetaStore,
    private readonly agents: AgentService,
    private readonly runs: AgentRunControl,
    private readonly events: RunEvents,
    /** Checks a completion's `files` (uploaded attachments) and names them for the run, which parses them. */
    private readonly attachments?: Pick<AgentAttachmentService, 'forTurn'>,
    /** How far a turn's walk may go (settings); absent: the interpreter's defaults. */
    private readonly canvasLimits?: CanvasLimits,
  ) {}

  async create(p: Principal, agentId: string, input: CreateSessionInput, source: 'agent' | 'workflow' = 'agent') {
    const agent = await this.agents.runnable(p, agentId);
    const row = await this.newSession(p, agent, input, source);
    return this.view(row, true);
  }

  private async newSession(p: Principal, agent: AgentRow, input: CreateSessionInput, source: SessionSource, name?: string): Promise<AgentSessionRow> {
    const { name: givenName, user_id: userId, release, ...beginValues } = input;
    const { dsl, versionTitle } = await this.agents.sessionDsl(agent, isRelease(release));
    const canvas = freshCanvas(dsl);
    const beginInputs = canvas.components.begin?.obj.params.inputs as Record<string, { value?: unknown }> | undefined;
    // Keyword values fill the Begin form; `name` and `user_id` too when the form declares them.
    for (const [key, value] of Object.entries({ name: givenName, user_id: userId, ...beginValues })) {
      if (value !== undefined && beginInputs?.[key]) beginInputs[key]!.value = value;
    }
    const messages: AgentMessage[] = [];
    const opening = prologue(canvas);
    const now = nowMs();
    if (opening) messages.push({ id: newId(), role: 'assistant', content: opening, created_at: now / 1000 });
    const row: AgentSessionRow = {
      id: newId(),
      agent_id: agent.id,
      tenant_id: p.tenantId,
      user_id: typeof userId === 'string' ? userId : '',
      name: (givenName as string | undefined) ?? name ?? 'New session',
      source,
      messages: JSON.stringify(messages),
      reference: '[]',
      dsl: JSON.stringify(canvas),
      version_title: versionTitle,
      create_time: now,
      update_time: now,
    };
    await this.store.agentSessions.insert(row);
    return row;
  }

  /** The session if it is of this agent and the caller may use the agent; 404 with a message otherwise. */
  async get(p: Principal, agentId: string, sessionId: string): Promise<AgentSessionRow> {
    await this.agents.get(p, agentId);
    const row = isId(sessionId) ? await this.store.agentSessions.byId(sessionId) : undefined;
    if (!row || row.agent_id !== agentId) throw notFound(`Session '${sessionId}' not found for agent '${agentId}'`);
    return row;
  }

  async detail(p: Principal, agentId: string, sessionId: string) {
    return this.view(await this.get(p, agentId, sessionId), true);
  }

  async list(p: Principal, agentId: string, input: ListAgentSessionsInput) {
    await this.agents.get(p, agentId);
    const query = {
      agentId,
      id: input.id,
      userId: input.user_id,
      orderBy: input.orderby,
      desc: input.desc,
      offset: (input.page - 1) * input.page_size,
      limit: input.page_size,
    };
    const [rows, total] = await Promise.all([this.store.agentSessions.list(query), this.store.agentSessions.count(query)]);
    return { sessions: rows.map((r) => this.view(r, input.dsl !== false)), total };
  }

  /** Partial: valid ids go, the others are reported in `errors`; an error only when none goes. */
  async delete(p: Principal, agentId: string, ids: string[] | null | undefined, deleteAll: boolean): Promise<PartialDelete> {
    await this.agents.get(p, agentId);
    const { targets, errors } = await partialDeleteTargets(ids, deleteAll, (id) => this.get(p, agentId, id), () => this.store.agentSessions.idsOfAgent(agentId));
    await this.forget(targets);
    return { success_count: targets.length, errors };
  }

  /** Drops sessions and the event logs of their turns. */
  async forget(sessionIds: string[]): Promise<void> {
    const runKeys: string[] = [];
    for (const id of sessionIds) {
      const row = await this.store.agentSessions.byId(id);
      if (row) runKeys.push(...sessionMessages(row).map((m) => m.id));
    }
    await this.store.agentSessions.delete(sessionIds);
    await this.store.agentRuns.deleteSessions(sessionIds);
    await this.events.remove([...new Set(runKeys)]);
  }

  /**
   * Starts a turn: a new session when none is given (source "workflow"), then the session's `agentRun`
   * workflow. A second call while a turn of the same session runs is refused (409).
   */
  async startTurn(p: Principal, input: CompletionInput): Promise<AgentTurn> {
    if (!input.agent_id) throw badRequest('`agent_id` is required.');
    const agent = await this.agents.runnable(p, input.agent_id);
    const files = input.files?.length && this.attachments ? await this.attachments.forTurn(p, agent.id, input.files) : (input.files ?? []);
    let session: AgentSessionRow;
    if (input.session_id) {
      const row = isId(input.session_id) ? await this.store.agentSessions.byId(input.session_id) : undefined;
      if (!row) throw notFound(`Session '${input.session_id}' not found`);
      if (row.agent_id !== agent.id) {
        // A session of an agent the caller may not use is indistinguishable from a missing one.
        const owner = await this.store.agents.byId(row.agent_id);
        if (!owner || !canManage(p, owner)) throw notFound(`Session '${input.session_id}' not found`);
        throw badRequest('Session does not belong to the requested agent.');
      }
      session = row;
    } else {
      const query = input.query ?? '';
      session = await this.newSession(p, agent, { release: input.release, user_id: input.user_id }, input.source ?? 'workflow', query.slice(0, 250) || 'New session');
    }
    const { canvas, names } = runnableCanvas(JSON.parse(session.dsl) as CanvasDsl);
    // Answering a UserFillUp: the turn's id derives from the pause and the answer, so the same answer given
    // twice names the same turn, and the second caller follows the first one's turn instead of a new run.
    const resume = input.replay ? undefined : resumeKey(sessionMessages(session), canvas, input.inputs);
    if (resume?.answered) return this.followTurn(agent.id, session.id, resume.key, session);
    const messageId = resume?.key ?? newId();
    const createdAt = toSeconds(nowMs());
    const run: AgentRunInput = {
      runKey: messageId,
      agentId: agent.id,
      sessionId: session.id,
      tenantId: agent.tenant_id,
      createdAt,
      canvas,
      names,
      ...(this.canvasLimits ? { limits: this.canvasLimits } : {}),
      request: {
        query: input.query ?? '',
        inputs: input.inputs ?? {},
        files,
        userId: input.user_id ?? p.userId,
        chatTemplateKwargs: input.chat_template_kwargs,
        trigger: input.trigger,
      },
    };
    if (input.replay) {
      // A replay walks the canvas from Begin, even in a session waiting for user inputs.
      canvas.paused = false;
      run.reuse = input.replay.reuse;
      if (Object.keys(input.replay.reuseReferences).length) run.reuseReferences = input.replay.reuseReferences;
      run.request.replay = { run_id: input.replay.run_id, from_component: input.replay.from_component };
    }
    const strategy = input.multitask_strategy ?? 'reject';
    if (strategy !== 'reject') {
      await this.runs.submitAgentTurn(run, strategy);
    } else if ((await this.startOrFollow(run)) === 'busy') {
      throw turnStillRunning(session.id);
    }
    await recordRunStart(this.store, run);
    return this.followTurn(agent.id, session.id, messageId, undefined, createdAt);
  }

  /**
   * The caller's view of a turn: its event log, read from the start. A turn recorded long ago whose log was
   * purged (an hour after the turn ended) answers with its recorded answer.
   */
  private followTurn(agentId: string, sessionId: string, messageId: string, recordedIn?: AgentSessionRow, createdAt = toSeconds(nowMs())): AgentTurn {
    const bus = this.events;
    const runs = this.runs;
    const recorded = recordedIn && sessionMessages(recordedIn).find((m) => m.id === messageId && m.role === 'assistant');
    return {
      messageId,
      sessionId,
      createdAt: recorded ? Math.floor(recorded.created_at) : createdAt,
      async *events(signal?: AbortSignal) {
        if (recorded && !(await bus.read(messageId, 0)).length) {
          yield { event: 'workflow_finished', data: { outputs: { content: recorded.content }, created_at: Math.floor(recorded.created_at) }, created_at: Math.floor(recorded.created_at) };
          return;
        }
        for await (const ev of followAgentRun(bus, messageId, () => runs.agentRunOpen(agentId, sessionId), signal)) {
          yield ev;
        }
      },
    };
  }

  /**
   * Starts the turn's workflow. The previous turn's workflow closes a moment after its end was recorded and
   * sent to its caller (longer when its worker died in between: see TURN_CLOSE_WAIT_MS). A turn arriving in
   * that moment does not overlap the previous one: it waits for the workflow to move on, then starts. It
   * is refused (409) only when another turn runs or has taken the session meanwhile. `same`: the open turn
   * is this very turn (the same UserFillUp answer, submitted again).
   */
  private async startOrFollow(run: AgentRunInput): Promise<'started' | 'busy' | 'same'> {
    let waited = false;
    // Three tries at most: the previous turn's workflow may close between our start and our look at it.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await this.runs.startAgentRun(run)) return 'started';
      const open = await this.runs.openAgentRun(run.agentId, run.sessionId);
      if (!open) continue;
      if (open.runKey === run.runKey) return 'same';
      if (waited || !(await this.turnEnded(run.sessionId, open.runKey))) return 'busy';
      if (!(await this.runs.waitAgentRunMovedOn(run.agentId, run.sessionId, open.runId, TURN_CLOSE_WAIT_MS))) throw turnStillClosing(run.sessionId);
      waited = true;
    }
    return 'busy';
  }

  /** Whether the turn's end is recorded in its session (recorded before its caller's stream ends). */
  private async turnEnded(sessionId: string, runKey: string): Promise<boolean> {
    const session = await this.store.agentSessions.byId(sessionId);
    return session !== undefined && sessionMessages(session).some((m) => m.id === runKey && m.role === 'assistant');
  }

  /** RAGFlow's stop: task id = session id. Idempotent: stopping a session with no running turn is fine. */
  async cancel(p: Principal, taskId: string): Promise<{ cancelled: boolean }> {
    const row = isId(taskId) ? await this.store.agentSessions.byId(taskId) : undefined;
    if (!row) throw notFound(`Task '${taskId}' not found`);
    // A stranger learns nothing about the session, not even its agent.
    await this.agents.get(p, row.agent_id).catch((err: unknown) => {
      throw err instanceof ApiError && err.status === 404 ? notFound(`Task '${taskId}' not found`) : err;
    });
    return { cancelled: await this.runs.cancelAgentRun(row.agent_id, row.id) };
  }

  private view(row: AgentSessionRow, withDsl: boolean) {
    const out: Record<string, unknown> = {
      id: row.id,
      name: row.name,
      agent_id: row.agent_id,
      dialog_id: row.agent_id,
      user_id: row.user_id,
      source: row.source,
      message: sessionMessages(row),
      reference: JSON.parse(row.reference) as unknown,
      version_title: row.version_title,
      create_time: toSeconds(row.create_time),
      update_time: toSeconds(row.update_time),
    };
    if (withDsl) out.dsl = JSON.parse(row.dsl) as unknown;
    return out;
  }
}
