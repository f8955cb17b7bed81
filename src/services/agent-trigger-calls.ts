/** What the webhook and the schedules share: whom a triggered turn runs as, and how a trigger call is shown. */
import type { MetaStore } from '../store/index.js';
import type { AgentRow } from '../store/agents.js';
import type { AgentTriggerCallRow } from '../store/agent-triggers.js';
import type { Principal } from './auth.js';
import { sessionMessages } from '../agents/io/session-turns.js';
import { toSeconds } from '../time.js';

/**
 * A triggered turn runs as the agent's owner (RAGFlow runs a webhook as the canvas's user): the owner's
 * tenant, so its models and datasets, and nobody else's, are what the run can use.
 */
export function ownerPrincipal(agent: AgentRow): Principal {
  return { userId: agent.created_by, tenantId: agent.tenant_id, teamTenants: [], isAdmin: false, email: '', nickname: '' };
}

/**
 * How the call's turn stands, read from its session: `finished`, `paused`, `cancelled` or `failed` once
 * its answer is recorded, `running` before, `deleted` when its session is gone, null when none started.
 */
async function runStatus(store: MetaStore, row: AgentTriggerCallRow): Promise<string | null> {
  if (!row.session_id || !row.message_id) return null;
  const session = await store.agentSessions.byId(row.session_id);
  if (!session) return 'deleted';
  const answer = sessionMessages(session).find((m) => m.id === row.message_id && m.role === 'assistant');
  return answer ? (answer.status ?? 'finished') : 'running';
}

/** One trigger call as the logs and the schedules show it. */
export async function callView(store: MetaStore, row: AgentTriggerCallRow) {
  return {
    id: row.id,
    create_time: toSeconds(row.create_time),
    trigger: row.trigger,
    ...(row.schedule_id ? { schedule_id: row.schedule_id } : {}),
    method: row.method,
    status: row.status,
    session_id: row.session_id,
    message_id: row.message_id,
    run_status: await runStatus(store, row),
    error: row.error,
  };
}
