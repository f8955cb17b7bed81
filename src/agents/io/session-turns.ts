import type { MetaStore } from '../../store/index.js';
import type { AgentSessionRow } from '../../store/agents.js';
import type { CanvasDsl } from '../dsl.js';
import type { RunIds, RunRequest, TurnOutcome } from '../run-types.js';
import { bucketView } from '../interpreter.js';
import { nowMs } from '../../time.js';

/** History entries the canvas keeps (50 exchanges): more than any component's history window uses. */
export const MAX_CANVAS_HISTORY = 100;

/** One message of an agent session, as stored in its `messages` JSON column. */
export interface AgentMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  /** Unix seconds (fractional). */
  created_at: number;
  reference?: unknown;
  /** 'paused' (waiting for user inputs), 'cancelled' or 'failed' turns say so. */
  status?: string;
}

/** Keys the graph keeps for the editor only; workflow input carries the rest. */
export function runnableCanvas(dsl: CanvasDsl): { canvas: CanvasDsl; names: Record<string, string> } {
  const { graph, ...canvas } = dsl;
  const names: Record<string, string> = {};
  const nodes = (graph as { nodes?: { id?: string; data?: { name?: string } }[] } | undefined)?.nodes ?? [];
  for (const n of nodes) if (n.id && n.data?.name) names[n.id] = n.data.name;
  return { canvas: canvas as CanvasDsl, names };
}

export function sessionMessages(row: Pick<AgentSessionRow, 'messages'>): AgentMessage[] {
  return JSON.parse(row.messages) as AgentMessage[];
}

/**
 * Appends a finished turn (question and answer, sharing the turn's id) to its session and stores the
 * canvas state the next turn starts from. Idempotent: a retried call finds the turn already there.
 */
export async function recordTurn(store: MetaStore, input: RunIds & { request: RunRequest; outcome: TurnOutcome }): Promise<void> {
  // A rolled-back turn (or one dropped from the queue) leaves nothing: the session is as it was before it.
  if (input.outcome.status === 'rolled_back') return;
  const row = await store.agentSessions.byId(input.sessionId);
  if (!row) return; // deleted while it ran
  const messages = sessionMessages(row);
  if (messages.some((m) => m.id === input.runKey && m.role === 'assistant')) return;
  const { outcome, request } = input;
  const at = nowMs() / 1000;
  if (request.query || Object.keys(request.inputs).length) {
    messages.push({ id: input.runKey, role: 'user', content: request.query, created_at: input.createdAt });
  }
  const reference = bucketView(outcome.reference);
  const content = outcome.status === 'failed' ? `**ERROR**: ${outcome.error ?? 'the run failed'}` : outcome.answer;
  const answer: AgentMessage = { id: input.runKey, role: 'assistant', content, created_at: at };
  if (reference.chunks.length) answer.reference = reference;
  if (outcome.status !== 'finished') answer.status = outcome.status;
  messages.push(answer);
  // An interrupted turn keeps what it produced: the next turn sees its question (pushed when it started) and its partial answer.
  if (outcome.status === 'interrupted') outcome.canvas.history.push(['assistant', outcome.answer]);
  const references = JSON.parse(row.reference) as unknown[];
  references.push(reference);
  const stored = JSON.parse(row.dsl) as Record<string, unknown>;
  // The canvas travels in each turn's workflow input: keep it bounded however long the session runs.
  // Every turn's messages and references stay in the session's own columns.
  const canvas = {
    ...outcome.canvas,
    history: outcome.canvas.history.slice(-MAX_CANVAS_HISTORY),
    retrieval: outcome.canvas.retrieval.slice(-1),
    graph: stored.graph,
  };
  await store.agentSessions.update(row.id, {
    messages: JSON.stringify(messages),
    reference: JSON.stringify(references),
    dsl: JSON.stringify(canvas),
    update_time: nowMs(),
  });
}
