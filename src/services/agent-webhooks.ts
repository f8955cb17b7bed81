import type { MetaStore } from '../store/index.js';
import type { AgentRow } from '../store/agents.js';
import type { Principal } from './auth.js';
import type { AgentService } from './agents.js';
import type { AgentSessionService, AgentTurn } from './agent-sessions.js';
import { beginMode } from '../agents/components/pure.js';
import type { CanvasDsl } from '../agents/dsl.js';
import { webhookBegin, webhookConfig, type WebhookConfig } from '../triggers/webhook-config.js';
import { webhookPayload, type RawWebhookRequest } from '../triggers/webhook-request.js';
import { checkBodySize, checkIpWhitelist, checkWebhookAuth, TooManyWebhookCalls } from '../triggers/webhook-security.js';
import { callView, ownerPrincipal } from './agent-trigger-calls.js';
import { DATAFLOW_CANVAS } from '../pipelines/names.js';
import { ApiError, badRequest, forbidden, notFound } from '../errors.js';
import { isId, newId } from '../ids.js';
import { nowMs } from '../time.js';

/** A call of an agent's webhook, as the router read it. */
export interface WebhookCall extends RawWebhookRequest {
  /** The peer's address. */
  ip: string;
  /** Bytes of the body as read (the Content-Length when larger). */
  bodyBytes: number;
}

/** A started webhook run: the settings it answers by, its turn, and its row in the logs. */
export interface WebhookRun {
  callId: string;
  config: WebhookConfig;
  turn: AgentTurn;
}

const WEBHOOK_TRIGGERS = ['webhook', 'webhook_test'];

/**
 * RAGFlow's webhook trigger: a call of `/agents/{id}/webhook` is checked against the agent's Begin in
 * webhook mode (method, size, IP whitelist, rate limit, its own auth, content type, request schema),
 * then starts a turn as a new session (source "webhook") through AgentSessionService.startTurn, like any
 * other durable run. Every call that reaches a webhook agent is logged with its answer and its turn.
 */
export class AgentWebhookService {
  constructor(
    private readonly store: MetaStore,
    private readonly agents: AgentService,
    private readonly sessions: AgentSessionService,
  ) {}

  /**
   * Checks the call and starts its turn. `tester`: the editor's test call (`/webhook/test`), made with
   * Cairn's credentials by the agent's owner; the Begin's own auth is not asked for then.
   */
  async start(agentId: string, call: WebhookCall, tester?: Principal): Promise<WebhookRun> {
    const agent = tester ? await this.ownAgent(tester, agentId) : await this.anyAgent(agentId);
    const config = webhookOf(agent);
    const callId = newId();
    const trigger = tester ? 'webhook_test' : 'webhook';
    const row = { id: callId, agent_id: agent.id, tenant_id: agent.tenant_id, trigger, schedule_id: null, method: call.method, status: null, session_id: null, message_id: null, error: null, create_time: nowMs() };
    // First, and not logged when refused: a flood of calls costs a stranger its rate, and fills no log.
    await this.takeCall(agent.id, config.security.rateLimit);
    try {
      if (config.methods.length && !config.methods.includes(call.method)) {
        throw new ApiError(405, `HTTP method '${call.method}' is not allowed for this webhook; allowed: ${config.methods.join(', ')}`);
      }
      checkBodySize(config.security, call.bodyBytes);
      checkIpWhitelist(config.security, call.ip);
      if (!tester) await checkWebhookAuth(config.security, call.headers);
      const payload = webhookPayload(call, config);
      const turn = await this.sessions.startTurn(tester ?? ownerPrincipal(agent), {
        agent_id: agent.id,
        query: '',
        // Begin outputs them as `query`, `headers` and `body` (RAGFlow's webhook payload).
        inputs: { query: { value: payload.query }, headers: { value: payload.headers }, body: { value: payload.body } },
        source: 'webhook',
      });
      await this.store.agentTriggers.insertCall({ ...row, session_id: turn.sessionId, message_id: turn.messageId });
      return { callId, config, turn };
    } catch (err) {
      if (err instanceof ApiError) await this.store.agentTriggers.insertCall({ ...row, status: err.status, error: err.message });
      throw err;
    }
  }

  /** Records what the call was answered: its HTTP status, and the error when the run failed. */
  async answered(callId: string, status: number, error?: string): Promise<void> {
    await this.store.agentTriggers.updateCall(callId, { status, error: error ?? null });
  }

  /** Recent calls of the agent's webhook (and its tests), newest first, with how each turn stands. */
  async logs(p: Principal, agentId: string, page: number, pageSize: number) {
    const agent = await this.ownAgent(p, agentId);
    const [rows, total] = await Promise.all([
      this.store.agentTriggers.recentCalls(agent.id, WEBHOOK_TRIGGERS, (page - 1) * pageSize, pageSize),
      this.store.agentTriggers.countCalls(agent.id, WEBHOOK_TRIGGERS),
    ]);
    return { logs: await Promise.all(rows.map((r) => callView(this.store, r))), total };
  }

  /** The webhook route is public: a missing or invalid id is simply not found, and nothing about the agent is told. */
  /** One call of the agent's rate, from the bucket every API replica on this database shares; 429 with the wait when spent. */
  private async takeCall(agentId: string, rate: WebhookConfig['security']['rateLimit']): Promise<void> {
    const waitMs = await this.store.agentTriggers.takeWebhookCall(agentId, rate.limit, rate.windowSeconds * 1000, nowMs());
    if (waitMs > 0) throw new TooManyWebhookCalls(rate, Math.ceil(waitMs / 1000));
  }

  private async anyAgent(agentId: string): Promise<AgentRow> {
    const agent = isId(agentId) ? await this.store.agents.byId(agentId) : undefined;
    if (!agent) throw notFound(`Agent '${agentId}' not found`);
    return agent;
  }

  /** The test and the logs are the owner's (RAGFlow: "Only the owner of the agent is authorized"). */
  private async ownAgent(p: Principal, agentId: string): Promise<AgentRow> {
    const agent = await this.agents.get(p, agentId);
    if (agent.tenant_id !== p.tenantId) throw forbidden('Only the owner of the agent is authorized for this operation.');
    return agent;
  }
}

/** The agent's webhook settings; 400 naming why it has none. */
function webhookOf(agent: AgentRow): WebhookConfig {
  if (agent.canvas_category === DATAFLOW_CANVAS) throw badRequest('Dataflow can not be triggered by webhook.');
  const dsl = JSON.parse(agent.dsl) as CanvasDsl;
  const begin = webhookBegin(dsl);
  if (!begin) throw badRequest(`Agent '${agent.id}' has no webhook: its Begin component is in '${beginMode(dsl)}' mode (set its mode to "Webhook")`);
  return webhookConfig(begin);
}
