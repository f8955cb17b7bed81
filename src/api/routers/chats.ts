import { route, type RouteContext, type RouteSpec } from '../routes.js';
import { partialReply } from '../partial.js';
import { sendOk } from '../envelope.js';
import { envelopeOrStream } from '../openapi.js';
import { anyValue, deleteBody, integer, LIMITS, list, listQuery, queryList, text } from '../schemas.js';
import { badRequest } from '../../errors.js';
import type { ChatService } from '../../services/chats.js';
import { MAX_TOP_K } from '../../services/retrieval.js';
import type { SessionService } from '../../services/sessions.js';
import type { CompletionInput, ConversationService } from '../../services/conversations.js';
import { finalOf } from '../../chat/events.js';
import { MessageFrames } from '../../chat/message-frames.js';
import { clientGone, streamMessages } from '../../chat/sse.js';

const nullableString = (maxLength: number) => ({ type: ['string', 'null'], maxLength });

const llmSetting = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    presence_penalty: { type: 'number', minimum: -2, maximum: 2 },
    frequency_penalty: { type: 'number', minimum: -2, maximum: 2 },
    max_token: integer(1, LIMITS.tokens),
    max_tokens: integer(1, LIMITS.tokens),
    /** RAGFlow's chat|vision switch: accepted and ignored (the chat's model decides). */
    model_type: { enum: ['chat', 'vision'] },
  },
};

const promptConfig = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    system: { type: 'string', maxLength: 65535 },
    empty_response: nullableString(65535),
    prologue: { type: 'string', maxLength: 65535 },
    quote: { type: 'boolean' },
    use_kg: { type: 'boolean' },
    grounding_check: { type: ['boolean', 'null'] },
    parameters: {
      type: 'array',
      maxItems: 64,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['key'],
        /** `value` (RAGFlow's UI sends it) is accepted and ignored: values come with each question. */
        properties: { key: { type: 'string', minLength: 1, maxLength: 64 }, optional: { type: 'boolean', default: false }, value: anyValue() },
      },
    },
  },
};

const chatProperties = {
  name: { type: 'string', maxLength: 1024 },
  icon: nullableString(65535),
  description: nullableString(65535),
  dataset_ids: { type: ['array', 'null'], items: text(LIMITS.id, 1), maxItems: 100 },
  llm_id: nullableString(255),
  llm_setting: llmSetting,
  prompt_config: promptConfig,
  similarity_threshold: { type: 'number', minimum: 0, maximum: 1 },
  vector_similarity_weight: { type: 'number', minimum: 0, maximum: 1 },
  top_n: { type: 'integer', minimum: 1, maximum: 100 },
  top_k: { type: 'integer', minimum: 1, maximum: MAX_TOP_K },
  rerank_id: nullableString(255),
};

const createBody = { type: 'object', additionalProperties: false, required: ['name'], properties: chatProperties };
const updateBody = { type: 'object', additionalProperties: false, properties: chatProperties };

const ORDER_COLUMNS = ['create_time', 'update_time', 'name'];

const listChatsQuery = listQuery(ORDER_COLUMNS, {
  keywords: text(LIMITS.queryText),
  owner_ids: queryList,
  parser_id: text(LIMITS.name),
});

const createSessionBody = {
  type: 'object',
  additionalProperties: false,
  properties: { name: { type: 'string', maxLength: 255 }, user_id: { type: 'string', maxLength: 255 } },
};

/** messages/message/reference are listed so the service can say they cannot be changed. */
const updateSessionBody = {
  type: 'object',
  additionalProperties: false,
  properties: { name: { type: 'string', maxLength: 255 }, messages: anyValue(), message: anyValue(), reference: anyValue() },
};

const listSessionsQuery = listQuery(ORDER_COLUMNS, { user_id: text(LIMITS.name) });

/** Keys the completion routes read; any other top-level key is a value for a custom prompt variable. */
const turnProperties = {
  stream: { type: 'boolean', default: true },
  session_id: text(LIMITS.id, 1),
  user_id: { type: 'string', maxLength: 255 },
  /** The older output: reasoning inlined as <think>…</think> in the answer. */
  legacy: { type: 'boolean', default: false },
};

const chatCompletionBody = {
  type: 'object',
  required: ['chat_id', 'messages'],
  properties: {
    ...turnProperties,
    chat_id: text(LIMITS.id, 1),
    conversation_id: text(LIMITS.id, 1),
    messages: {
      ...list(
        {
          type: 'object',
          required: ['role', 'content'],
          properties: { role: { enum: ['system', 'user', 'assistant'] }, content: text(LIMITS.longText) },
        },
        LIMITS.messages,
      ),
      minItems: 1,
    },
  },
};

const sdkCompletionBody = {
  type: 'object',
  required: ['question'],
  properties: { ...turnProperties, question: text(LIMITS.longText) },
};

const ANSWER_RESPONSES = envelopeOrStream('The answer: a Message in the envelope, or (stream: true, the default) cumulative Message frames as server-sent events ending with data: true');

export function chatRoutes(chats: ChatService, sessions: SessionService, conversations: ConversationService): RouteSpec[] {
  const update = (method: 'patch' | 'put') =>
    route({
      method, path: '/chats/:chat_id', tag: 'chats', summary: 'Update a chat assistant (only the keys given; llm_setting and prompt_config are merged)', body: updateBody,
      handler: ({ principal, params, body }) => chats.update(principal, params.chat_id, body),
    });
  const updateSession = (method: 'patch' | 'put') =>
    route({
      method, path: '/chats/:chat_id/sessions/:session_id', tag: 'sessions', summary: 'Rename a session', body: updateSessionBody,
      handler: ({ principal, params, body }) => sessions.update(principal, params.chat_id, params.session_id, body),
    });

  /** Answers one turn as a whole Message or as a stream of cumulative Message frames. */
  const answer = async (ctx: RouteContext, input: CompletionInput) => {
    const turn = await conversations.start(ctx.principal, input);
    ctx.res.locals.timings = turn.timings;
    const frames = new MessageFrames(turn.ids, ctx.body.legacy);
    if (ctx.body.stream) return streamMessages(ctx.res, turn, frames);
    const final = await finalOf(turn, clientGone(ctx.res));
    if (final) sendOk(ctx.res, frames.whole(final));
  };

  return [
    route({
      method: 'post', path: '/chats', tag: 'chats', summary: 'Create a chat assistant', body: createBody,
      handler: ({ principal, body }) => chats.create(principal, body),
    }),
    route({
      method: 'get', path: '/chats', tag: 'chats', summary: 'List chat assistants ({chats, total})', query: listChatsQuery,
      handler: ({ principal, query }) => chats.list(principal, query),
    }),
    route({
      method: 'get', path: '/chats/:chat_id', tag: 'chats', summary: 'Get a chat assistant',
      handler: async ({ principal, params }) => chats.view(await chats.get(principal, params.chat_id)),
    }),
    update('patch'),
    update('put'),
    route({
      method: 'delete', path: '/chats', tag: 'chats', summary: 'Delete chat assistants (ids, or delete_all)', body: deleteBody,
      handler: async ({ principal, body }) => {
        const result = await chats.delete(principal, body.ids, body.delete_all ?? false);
        return partialReply(result, 'chats', { success_count: result.success_count });
      },
    }),

    route({
      method: 'post', path: '/chats/:chat_id/sessions', tag: 'sessions', summary: 'Create a session (opening message: the prologue)', body: createSessionBody,
      handler: ({ principal, params, body }) => sessions.create(principal, params.chat_id, body),
    }),
    route({
      method: 'get', path: '/chats/:chat_id/sessions', tag: 'sessions', summary: 'List sessions of a chat', query: listSessionsQuery,
      handler: ({ principal, params, query }) => sessions.list(principal, params.chat_id, query),
    }),
    route({
      method: 'get', path: '/chats/:chat_id/sessions/:session_id', tag: 'sessions', summary: 'Get a session',
      handler: ({ principal, params }) => sessions.getView(principal, params.chat_id, params.session_id),
    }),
    updateSession('patch'),
    updateSession('put'),
    route({
      method: 'delete', path: '/chats/:chat_id/sessions', tag: 'sessions', summary: 'Delete sessions (ids, or delete_all)', body: deleteBody,
      handler: async ({ principal, params, body }) => {
        const result = await sessions.delete(principal, params.chat_id, body.ids, body.delete_all ?? false);
        return partialReply(result, 'sessions', { success_count: result.success_count });
      },
    }),

    route({
      method: 'post', path: '/chat/completions', tag: 'chats', raw: true, body: chatCompletionBody, admission: 'long', responses: ANSWER_RESPONSES,
      summary: 'Ask a chat assistant: send only the latest user message; extra keys are prompt variables; SSE when stream (default true)',
      handler: (ctx) => {
        const { body } = ctx;
        const last = body.messages.at(-1);
        if (last.role !== 'user') throw badRequest('The last message of `messages` must be from user');
        return answer(ctx, { chat_id: body.chat_id, question: last.content, session_id: body.session_id ?? body.conversation_id, user_id: body.user_id, variables: body });
      },
    }),
    route({
      method: 'post', path: '/chats/:chat_id/completions', tag: 'chats', raw: true, body: sdkCompletionBody, admission: 'long', responses: ANSWER_RESPONSES,
      summary: 'Ask a chat assistant (SDK route): question, session_id (new session when absent); extra keys are prompt variables',
      handler: (ctx) =>
        answer(ctx, { chat_id: ctx.params.chat_id, question: ctx.body.question, session_id: ctx.body.session_id, user_id: ctx.body.user_id, variables: ctx.body }),
    }),
  ];
}
