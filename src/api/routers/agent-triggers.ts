import express, { type NextFunction, type Request, type Response } from 'express';
import multer from 'multer';
import { route, type HttpMethod, type RouteContext, type RouteSpec } from '../routes.js';
import { safeJson } from '../envelope.js';
import { pagingQuery } from '../schemas.js';
import { answerAgentWhole } from '../agent-frames.js';
import { ApiError, badRequest } from '../../errors.js';
import { MAX_WEBHOOK_BODY } from '../../triggers/webhook-config.js';
import { TooManyWebhookCalls } from '../../triggers/webhook-security.js';
import type { AgentWebhookService, WebhookCall, WebhookRun } from '../../services/agent-webhooks.js';
import type { AgentScheduleService } from '../../services/agent-schedules.js';

/** The webhook answers any of these (HEAD through GET's route, as Express does). */
const WEBHOOK_ROUTE_METHODS: HttpMethod[] = ['post', 'get', 'put', 'patch', 'delete'];

const readMultipart = multer({ storage: multer.memoryStorage(), limits: { fieldSize: MAX_WEBHOOK_BODY, files: 0 }, defParamCharset: 'utf8' }).none();
const readRaw = express.raw({ type: () => true, limit: MAX_WEBHOOK_BODY });

/**
 * Reads the body of any content type as bytes (the service parses it by the webhook's settings), a
 * multipart form as its fields; at most 10 MB (RAGFlow's ceiling; the webhook's own limit is checked after).
 */
function webhookBody(req: Request, res: Response, next: NextFunction) {
  if (!req.is('multipart/form-data')) return readRaw(req, res, next);
  readMultipart(req, res, (err: unknown) => {
    if (!err) return next();
    const e = err as { code?: string; message?: string };
    if (e.code === 'LIMIT_FILE_COUNT' || e.code === 'LIMIT_UNEXPECTED_FILE') return next(badRequest("Cairn's webhook takes no file uploads: send the content in a form field or as JSON"));
    if (e.code === 'LIMIT_FIELD_VALUE') return next(new ApiError(413, `Request body too large: the limit is ${MAX_WEBHOOK_BODY} bytes`));
    next(badRequest(`Malformed multipart body: ${e.message ?? 'unreadable'}`));
  });
}

/** The call as the service reads it. */
function webhookCall(req: Request): WebhookCall {
  const body = req.body as Buffer | Record<string, unknown> | undefined;
  const read = Buffer.isBuffer(body) ? body.length : body ? Buffer.byteLength(JSON.stringify(body)) : 0;
  return {
    method: req.method.toUpperCase(),
    contentType: (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase(),
    query: req.query as Record<string, unknown>,
    headers: req.headers,
    body: Buffer.isBuffer(body) || (body && typeof body === 'object') ? body : undefined,
    ip: req.socket.remoteAddress ?? '',
    bodyBytes: Math.max(read, Number(req.headers['content-length'] ?? 0) || 0),
  };
}

/**
 * Answers a started webhook run: at once with the configured status and body (execution_mode
 * Immediately; the turn goes on durably), or with the turn's result (Streaming, RAGFlow's name for it).
 */
async function answerWebhook(ctx: RouteContext, webhooks: AgentWebhookService, run: WebhookRun): Promise<void> {
  const { res } = ctx;
  res.setHeader('X-Cairn-Session-Id', run.turn.sessionId);
  res.setHeader('X-Cairn-Message-Id', run.turn.messageId);
  if (run.config.executionMode === 'Immediately') {
    const { status, bodyTemplate } = run.config.response;
    await webhooks.answered(run.callId, status);
    if (!bodyTemplate) return void res.status(status).type('application/json').send(safeJson({ code: 0, data: { session_id: run.turn.sessionId, message_id: run.turn.messageId } }));
    let parsed: unknown;
    try {
      parsed = JSON.parse(bodyTemplate);
    } catch {
      return void res.status(status).type('text/plain').send(bodyTemplate);
    }
    return void res.status(status).type('application/json').send(safeJson(parsed));
  }
  try {
    const whole = await answerAgentWhole(res, run.turn, false);
    if (!whole) return; // the caller left; the turn still ran to its end
    await webhooks.answered(run.callId, 200);
    res.status(200).type('application/json').send(safeJson({ code: 200, success: true, message: whole.data.content, session_id: run.turn.sessionId, message_id: run.turn.messageId }));
  } catch (err) {
    const status = err instanceof ApiError ? err.status : 500;
    const message = err instanceof Error ? err.message : String(err);
    await webhooks.answered(run.callId, status, message);
    res.status(status).type('application/json').send(safeJson({ code: status, success: false, message }));
  }
}

const scheduleBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cron: { type: 'string', minLength: 1, maxLength: 255, description: 'A 5-field cron expression, e.g. "0 9 * * MON-FRI"' },
    // Bounded here; the service says what a valid interval is (at least 1 s) when it is not.
    interval: { type: ['integer', 'string'], minimum: 0, maximum: 10 * 365 * 86400, minLength: 1, maxLength: 32, description: 'Seconds, or a duration such as "90s", "15m", "1h30m", "1d"' },
    timezone: { type: 'string', maxLength: 64, description: 'IANA time zone of the cron expression (default UTC)' },
    inputs: { type: 'object', maxProperties: 100, description: "Begin's inputs for each run: {field: value} or {field: {value}}" },
    paused: { type: 'boolean', default: false },
  },
};

/** A call over the webhook's rate limit is answered 429 with Retry-After: the seconds until the bucket has a call again. */
async function withRetryAfter(ctx: RouteContext, started: Promise<WebhookRun>): Promise<WebhookRun> {
  return started.catch((err: unknown) => {
    if (err instanceof TooManyWebhookCalls) ctx.res.setHeader('Retry-After', String(err.retryAfterSeconds));
    throw err;
  });
}

/** RAGFlow's webhook trigger (`/agents/{id}/webhook`, its test and its logs) and the agents' schedules. */
export function agentTriggerRoutes(webhooks: AgentWebhookService, schedules: AgentScheduleService): RouteSpec[] {
  const webhookRoutes = WEBHOOK_ROUTE_METHODS.flatMap((method) => [
    route({
      method, path: '/agents/:agent_id/webhook', tag: 'agent triggers', public: true, raw: true, middleware: [webhookBody],
      summary: "Run the agent by webhook (its Begin in Webhook mode; no API key: the Begin's own auth guards it): query, headers and body go to Begin's outputs by its schema; answers at once with the configured status and body, or with the run's result",
      produces: { contentType: 'application/json', description: 'The configured response (Immediately), or {code, success, message: the answer} (Streaming)' },
      handler: async (ctx: RouteContext) => answerWebhook(ctx, webhooks, await withRetryAfter(ctx, webhooks.start(ctx.params.agent_id!, webhookCall(ctx.req)))),
    }),
    route({
      method, path: '/agents/:agent_id/webhook/test', tag: 'agent triggers', raw: true, middleware: [webhookBody],
      summary: "The editor's test call of the webhook: as the webhook, made by the agent's owner with Cairn's credentials instead of the Begin's own auth; logged as webhook_test",
      produces: { contentType: 'application/json', description: 'As the webhook answers' },
      handler: async (ctx: RouteContext) => answerWebhook(ctx, webhooks, await withRetryAfter(ctx, webhooks.start(ctx.params.agent_id!, webhookCall(ctx.req), ctx.principal))),
    }),
  ]);
  return [
    ...webhookRoutes,
    route({
      method: 'get', path: '/agents/:agent_id/webhook/logs', tag: 'agent triggers', query: pagingQuery,
      summary: 'Recent webhook calls of the agent, newest first: {logs: [{id, create_time, trigger, method, status, session_id, message_id, run_status, error}], total}',
      handler: ({ principal, params, query }) => webhooks.logs(principal, params.agent_id!, query.page || 1, query.page_size || 30),
    }),
    route({
      method: 'post', path: '/agents/:agent_id/schedules', tag: 'agent triggers', body: scheduleBody,
      summary: "Schedule the agent (owner only): cron or interval, a time zone, Begin's inputs, paused; each run is a new session (source \"schedule\") on a Temporal Schedule",
      handler: ({ principal, params, body }) => schedules.create(principal, params.agent_id!, body),
    }),
    route({
      method: 'get', path: '/agents/:agent_id/schedules', tag: 'agent triggers',
      summary: "The agent's schedules: {schedules: [{id, cron | interval, timezone, inputs, paused, next_run_times, runs_taken, recent_runs}], total}",
      handler: ({ principal, params }) => schedules.list(principal, params.agent_id!),
    }),
    route({
      method: 'get', path: '/agents/:agent_id/schedules/:schedule_id', tag: 'agent triggers', summary: 'One schedule, with its next run times and recent runs',
      handler: ({ principal, params }) => schedules.detail(principal, params.agent_id!, params.schedule_id!),
    }),
    route({
      method: 'delete', path: '/agents/:agent_id/schedules/:schedule_id', tag: 'agent triggers', summary: 'Delete a schedule (owner only); runs already started go on',
      handler: async ({ principal, params }) => {
        await schedules.delete(principal, params.agent_id!, params.schedule_id!);
        return true;
      },
    }),
    route({
      method: 'post', path: '/agents/:agent_id/schedules/:schedule_id/pause', tag: 'agent triggers', summary: 'Pause a schedule (owner only): no run starts until it is resumed',
      handler: ({ principal, params }) => schedules.setPaused(principal, params.agent_id!, params.schedule_id!, true),
    }),
    route({
      method: 'post', path: '/agents/:agent_id/schedules/:schedule_id/resume', tag: 'agent triggers', summary: 'Resume a paused schedule (owner only)',
      handler: ({ principal, params }) => schedules.setPaused(principal, params.agent_id!, params.schedule_id!, false),
    }),
  ];
}

