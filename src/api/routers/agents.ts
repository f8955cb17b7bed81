import { Reply, route, type RouteContext, type RouteSpec } from '../routes.js';
import { partialReply } from '../partial.js';
import { sendOk, safeJson } from '../envelope.js';
import { anyValue, deleteBody, LIMITS, list, listQuery, pagingQuery, text } from '../schemas.js';
import { ENVELOPE_REF, ERROR_REF, envelopeOrStream } from '../openapi.js';
import { OPENAI_COMPLETION_RESPONSES, OPENAI_ERRORS } from './openai.js';
import { ApiError, badRequest } from '../../errors.js';
import { openAIError } from '../../chat/openai-frames.js';
import { isRelease, type AgentService } from '../../services/agents.js';
import type { AgentSessionService, CompletionInput } from '../../services/agent-sessions.js';
import type { Principal } from '../../services/auth.js';
import { CANVAS_CATEGORIES } from '../../pipelines/names.js';
import { MULTITASK_STRATEGIES } from '../../agents/run-types.js';
import { AgentOpenAIFrames, answerAgentOpenAI, answerAgentWhole, streamAgentEvents, streamAgentOpenAI } from '../agent-frames.js';

const nullableString = (maxLength: number) => ({ type: ['string', 'null'], maxLength });
/** true/false, or a word isRelease reads ("true", "1"...). */
const release = { type: ['boolean', 'string'], maxLength: 16 };

const agentProperties = {
  title: { type: ['string', 'null'], maxLength: 255 },
  description: nullableString(65535),
  dsl: { type: ['object', 'null'] },
  avatar: nullableString(65535),
  permission: { enum: ['me', 'team'] },
  canvas_type: nullableString(255),
  canvas_category: { enum: [...CANVAS_CATEGORIES] },
  release,
};

/** `title` and `dsl` are required unless `template_id` is given (the service says which is missing). */
const createBody = {
  type: 'object',
  properties: { ...agentProperties, template_id: text(LIMITS.id, 1), dataset_ids: list(text(LIMITS.id, 1), 100) },
};
const updateBody = { type: 'object', properties: agentProperties };

const listAgentsQuery = listQuery(['create_time', 'update_time', 'title'], {
  orderby: { enum: ['create_time', 'update_time', 'title'], default: 'update_time' },
  keywords: text(LIMITS.queryText),
  title: text(LIMITS.name),
  canvas_category: text(LIMITS.name),
  tags: text(LIMITS.queryText),
});

const listSessionsQuery = {
  type: 'object',
  properties: {
    ...pagingQuery.properties,
    orderby: { enum: ['create_time', 'update_time'], default: 'update_time' },
    id: text(LIMITS.id),
    user_id: text(LIMITS.name),
    dsl: { type: 'boolean', default: true },
  },
};

/** Begin's input values come as extra keys, so other keys are allowed. */
const createSessionBody = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 255 }, user_id: { type: 'string', maxLength: 255 }, release },
};

const inputsSchema = { type: 'object', additionalProperties: { type: 'object' } };

const completionProperties = {
  agent_id: text(LIMITS.id, 1),
  query: text(LIMITS.longText),
  question: text(LIMITS.longText),
  stream: { type: 'boolean' },
  session_id: text(LIMITS.id, 1),
  inputs: inputsSchema,
  files: list(anyValue(), 100),
  user_id: { type: 'string', maxLength: 255 },
  return_trace: { type: 'boolean', default: false },
  chat_template_kwargs: { type: 'object' },
  release,
  'openai-compatible': { type: 'boolean', default: false },
  /** Cairn's (LangGraph Platform's): what happens when a turn of the session is still running. */
  multitask_strategy: { enum: [...MULTITASK_STRATEGIES], default: 'reject' },
  messages: list({ type: 'object', properties: { role: text(32), content: anyValue(LIMITS.longText) } }, LIMITS.messages),
};
const completionBody = { type: 'object', properties: completionProperties };

type Body = Record<string, any>;

/** RAGFlow's agent completion answers: the envelope or canvas events, or OpenAI's shapes with "openai-compatible": true. */
const AGENT_ANSWERS = envelopeOrStream(
  'The aggregated answer in the envelope, or canvas events as server-sent events ending with [DONE]; with "openai-compatible": true a chat.completion (or its chunks)',
  { anyOf: [ENVELOPE_REF, OPENAI_COMPLETION_RESPONSES['200'].content['application/json']] },
);
const AGENT_ERRORS = { schema: { anyOf: [ERROR_REF, OPENAI_ERRORS.schema] } };

function turnInput(agentId: string, body: Body): CompletionInput {
  return {
    agent_id: agentId,
    query: body.query ?? body.question ?? '',
    session_id: body.session_id,
    inputs: body.inputs,
    files: body.files,
    user_id: body.user_id,
    chat_template_kwargs: body.chat_template_kwargs,
    release: body.release,
    multitask_strategy: body.multitask_strategy,
  };
}

/** Text of an OpenAI message content: a string, or the text parts of a list. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p?.type === 'text' ? String(p.text ?? '') : '')).join('');
  return '';
}

/** What goes with a deleted agent beyond its rows. */
interface AgentDeletion {
  /** Deletes the agent (owner only) with the files uploaded to it; returns its session ids. */
  deleteAgent(principal: Principal, agentId: string): Promise<string[]>;
  /** Once it is gone: its schedules and trigger logs. */
  afterDelete(agentId: string): Promise<void>;
}

export function agentRoutes(agents: AgentService, sessions: AgentSessionService, deletion: AgentDeletion): RouteSpec[] {
  /** RAGFlow's agent completion: canvas events as SSE, or the aggregated answer. */
  const complete = async (ctx: RouteContext, agentId: string, streamByDefault: boolean) => {
    const body = ctx.body as Body;
    if (body['openai-compatible']) return completeOpenAI(ctx, agentId);
    const turn = await sessions.startTurn(ctx.principal, turnInput(agentId, body));
    if (body.stream ?? streamByDefault) return streamAgentEvents(ctx.res, turn);
    const whole = await answerAgentWhole(ctx.res, turn, Boolean(body.return_trace));
    if (whole) sendOk(ctx.res, whole);
  };

  /** OpenAI shapes, errors included (`{"error": {...}}` with the HTTP status), so the openai client reads them. */
  const completeOpenAI = async (ctx: RouteContext, agentId: string) => {
    try {
      const body = ctx.body as Body;
      const messages = (body.messages ?? []) as { role?: string; content?: unknown }[];
      if (!messages.length) throw badRequest('You must provide at least one message.');
      const question = messageText([...messages].reverse().find((m) => m.role === 'user')?.content);
      const sessionId = body.session_id ?? body.id ?? body.metadata?.id;
      const turn = await sessions.startTurn(ctx.principal, { ...turnInput(agentId, body), query: question, session_id: sessionId });
      const frames = new AgentOpenAIFrames(turn, String(body.model ?? agentId), question);
      if (body.stream) return await streamAgentOpenAI(ctx.res, turn, frames);
      const completion = await answerAgentOpenAI(ctx.res, turn, frames);
      if (completion) ctx.res.type('application/json').send(safeJson(completion));
    } catch (err) {
      if (!(err instanceof ApiError) || ctx.res.headersSent) throw err;
      ctx.res.status(err.status).type('application/json').send(safeJson(openAIError(err.message, err.status)));
    }
  };

  const update = (method: 'put' | 'patch') =>
    route({
      method, path: '/agents/:agent_id', tag: 'agents', summary: 'Update an agent: title, description, dsl (each optional; none = unchanged); release publishes', body: updateBody,
      handler: ({ principal, params, body }) => agents.update(principal, params.agent_id, body),
    });

  return [
    route({
      method: 'get', path: '/agents', tag: 'agents', summary: 'List agents and pipelines ({canvas, total}; orderby update_time by default; canvas_category: agent_canvas, dataflow_canvas or both, comma-separated)', query: listAgentsQuery,
      handler: ({ principal, query }) => agents.list(principal, query),
    }),
    route({
      method: 'get', path: '/agents/templates', tag: 'agents', summary: 'Agent templates: [{id, title: {en, …}, description: {en, …}, canvas_type, canvas_category, avatar, dsl}]',
      handler: () => agents.templates(),
    }),
    route({
      method: 'post', path: '/agents', tag: 'agents', summary: 'Create an agent, or with canvas_category "dataflow_canvas" an ingestion pipeline (title unique per tenant, case-insensitively; the DSL is validated as that category); or from a template: template_id, optional title and dataset_ids (the datasets of every Retrieval)', body: createBody,
      handler: ({ principal, body }) => agents.create(principal, body),
    }),
    route({
      method: 'get', path: '/agents/:agent_id', tag: 'agents', summary: 'Get an agent with its DSL',
      handler: ({ principal, params }) => agents.detail(principal, params.agent_id),
    }),
    update('put'),
    update('patch'),
    route({
      method: 'delete', path: '/agents/:agent_id', tag: 'agents', summary: 'Delete an agent (owner only) with its sessions',
      handler: async ({ principal, params }) => {
        const sessionIds = await deletion.deleteAgent(principal, params.agent_id);
        await sessions.forget(sessionIds);
        await deletion.afterDelete(params.agent_id);
        return true;
      },
    }),
    route({
      method: 'get', path: '/agents/:agent_id/versions', tag: 'agents', summary: 'Saved versions of an agent, newest first',
      handler: ({ principal, params }) => agents.versions(principal, params.agent_id),
    }),
    route({
      method: 'get', path: '/agents/:agent_id/versions/:version_id', tag: 'agents', summary: 'One saved version of an agent, with its DSL',
      handler: ({ principal, params }) => agents.version(principal, params.agent_id, params.version_id),
    }),
    route({
      method: 'put', path: '/agents/:agent_id/versions/:version_id', tag: 'agents', summary: 'Publish (release: true) or withdraw a saved version',
      body: { type: 'object', required: ['release'], properties: { release } },
      handler: ({ principal, params, body }) => agents.setVersionRelease(principal, params.agent_id, params.version_id, isRelease(body.release)),
    }),
    route({
      method: 'delete', path: '/agents/:agent_id/versions/:version_id', tag: 'agents', summary: 'Delete a saved version',
      handler: async ({ principal, params }) => {
        await agents.deleteVersion(principal, params.agent_id, params.version_id);
        return true;
      },
    }),

    route({
      method: 'post', path: '/agents/:agent_id/sessions', tag: 'agent sessions', summary: 'Create an agent session (extra keys: Begin input values; release: the published version)', body: createSessionBody,
      handler: ({ principal, params, body, query }) => sessions.create(principal, params.agent_id, { ...body, user_id: body.user_id ?? query.user_id, release: body.release ?? query.release }),
    }),
    route({
      method: 'get', path: '/agents/:agent_id/sessions', tag: 'agent sessions', summary: 'List sessions of an agent (orderby update_time by default)', query: listSessionsQuery,
      handler: async ({ principal, params, query }) => {
        const { sessions: list, total } = await sessions.list(principal, params.agent_id, query);
        return new Reply(list, { total });
      },
    }),
    route({
      method: 'get', path: '/agents/:agent_id/sessions/:session_id', tag: 'agent sessions', summary: 'Get an agent session (a missing or malformed id is a 404)',
      handler: ({ principal, params }) => sessions.detail(principal, params.agent_id, params.session_id),
    }),
    route({
      method: 'delete', path: '/agents/:agent_id/sessions', tag: 'agent sessions', summary: 'Delete agent sessions (ids, or delete_all)', body: deleteBody,
      handler: async ({ principal, params, body }) => partialReply(await sessions.delete(principal, params.agent_id, body.ids, body.delete_all ?? false), 'sessions', true),
    }),
    route({
      method: 'delete', path: '/agents/:agent_id/sessions/:session_id', tag: 'agent sessions', summary: 'Delete one agent session',
      handler: async ({ principal, params }) => {
        await sessions.delete(principal, params.agent_id, [params.session_id], false);
        return true;
      },
    }),

    route({
      method: 'post', path: '/agents/chat/completions', tag: 'agent sessions', raw: true, body: completionBody, admission: 'long', responses: AGENT_ANSWERS, errors: AGENT_ERRORS,
      summary: 'Run an agent turn: agent_id, query, session_id (new session when absent), inputs, files, user_id, return_trace, chat_template_kwargs, multitask_strategy (reject | enqueue | interrupt | rollback, when a turn of the session runs); SSE when stream (default false); "openai-compatible": true for OpenAI shapes',
      handler: (ctx) => complete(ctx, (ctx.body as Body).agent_id ?? '', false),
    }),
    route({
      method: 'post', path: '/agents/:agent_id/completions', tag: 'agent sessions', raw: true, body: completionBody, admission: 'long', responses: AGENT_ANSWERS, errors: AGENT_ERRORS,
      summary: 'Run an agent turn (deprecated path; same body)', deprecated: true,
      handler: (ctx) => complete(ctx, ctx.params.agent_id!, false),
    }),
    route({
      method: 'post', path: '/agentbots/:agent_id/completions', tag: 'agent sessions', raw: true, body: completionBody, admission: 'long', responses: AGENT_ANSWERS, errors: AGENT_ERRORS,
      summary: 'Run an agent turn (bot route: stream by default; accepts chat_template_kwargs)',
      handler: (ctx) => complete(ctx, ctx.params.agent_id!, true),
    }),
    route({
      method: 'post', path: '/agents_openai/:agent_id/chat/completions', tag: 'agent sessions', raw: true, body: completionBody, admission: 'long',
      responses: OPENAI_COMPLETION_RESPONSES, errors: OPENAI_ERRORS,
      summary: 'OpenAI-compatible agent completion: messages (last user message is the question), stream, session_id',
      handler: (ctx) => completeOpenAI(ctx, ctx.params.agent_id!),
    }),
    route({
      method: 'post', path: '/tasks/:task_id/cancel', tag: 'agent sessions', summary: "Stop the running turn of an agent session (task id = session id); closing the stream does not stop it",
      handler: ({ principal, params }) => sessions.cancel(principal, params.task_id),
    }),
  ];
}
