import { route, type RouteContext, type RouteSpec } from '../routes.js';
import { safeJson } from '../envelope.js';
import { LIMITS, list, text as bounded } from '../schemas.js';
import { SSE_EVENT } from '../openapi.js';
import type { ConversationService, OpenAICompletionInput } from '../../services/conversations.js';
import { finalOf } from '../../chat/events.js';
import { OpenAIChunks, openAIError } from '../../chat/openai-frames.js';
import { clientGone, streamOpenAIChunks } from '../../chat/sse.js';

const referenceOptions = {
  reference: { type: 'boolean' },
  reference_metadata: {
    type: 'object',
    properties: { include: { type: 'boolean' }, fields: list(bounded(LIMITS.name), 100) },
  },
};

/** Other keys (sampling parameters, custom prompt variables) are accepted. */
const completionBody = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: bounded(LIMITS.name, 1),
    stream: { type: 'boolean', default: false },
    messages: {
      type: 'array',
      minItems: 1,
      maxItems: LIMITS.messages,
      items: {
        type: 'object',
        required: ['role', 'content'],
        properties: {
          role: { enum: ['system', 'user', 'assistant'] },
          content: {
            anyOf: [
              bounded(LIMITS.longText),
              list({ type: 'object', required: ['type'], properties: { type: bounded(64), text: bounded(LIMITS.longText) } }, 1000),
            ],
          },
        },
      },
    },
    extra_body: { type: 'object', properties: referenceOptions },
    ...referenceOptions,
  },
};

/** OpenAI's error body, `{"error": {...}}` with the HTTP status: what OpenAI clients read. */
export const OPENAI_ERRORS = {
  schema: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'code'],
        properties: { message: { type: 'string' }, type: { type: 'string' }, param: { type: 'null' }, code: { type: 'string' } },
      },
    },
  },
  render: (status: number, message: string) => openAIError(message, status),
};

/** A `chat.completion` object (stream false) or its `chat.completion.chunk` frames (stream true). */
export const OPENAI_COMPLETION_RESPONSES = {
  '200': {
    description: 'A chat.completion object, or with stream: true its chat.completion.chunk frames as server-sent events ending with [DONE]',
    content: {
      'application/json': {
        type: 'object',
        required: ['id', 'object', 'choices'],
        properties: { id: { type: 'string' }, object: { const: 'chat.completion' }, model: { type: 'string' }, choices: { type: 'array' }, usage: { type: 'object' } },
      },
      'text/event-stream': SSE_EVENT,
    },
  },
};

type Content = string | { type: string; text?: string }[];

/** Text of a message: a string, or the text parts of a content list. */
function text(content: Content): string {
  return typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? (p.text ?? '') : '')).join('');
}

/** The turn input; `reference`/`reference_metadata` may be top-level (the openai client's extra params) or under extra_body. */
function toInput(chatId: string, body: any): OpenAICompletionInput {
  const extra = body.extra_body ?? {};
  const metadata = body.reference_metadata ?? extra.reference_metadata;
  return {
    chat_id: chatId,
    model: body.model,
    messages: body.messages.map((m: { role: 'system' | 'user' | 'assistant'; content: Content }) => ({ role: m.role, content: text(m.content) })),
    variables: { ...extra, ...body },
    reference: Boolean(body.reference ?? extra.reference),
    metadata: metadata?.include ? { fields: metadata.fields } : undefined,
  };
}

/**
 * The OpenAI-compatible chat completion route. It answers in OpenAI's shapes, errors included
 * (`{"error": {...}}` with the HTTP status, the app's own 401/400/413 too: OPENAI_ERRORS).
 */
export function openaiRoutes(conversations: ConversationService): RouteSpec[] {
  const handler = async ({ principal, body, res, params }: RouteContext) => {
    const input = toInput(params.chat_id!, body);
    const turn = await conversations.startOpenAI(principal, input);
    res.locals.timings = turn.timings;
    const chunks = new OpenAIChunks({ id: `chatcmpl-${turn.ids.id}`, model: body.model, created: Math.floor(Date.now() / 1000) }, input.reference);
    if (body.stream) return await streamOpenAIChunks(res, turn, chunks);
    const final = await finalOf(turn, clientGone(res));
    if (final) res.type('application/json').send(safeJson(chunks.completion(final)));
  };
  const spec = (path: string, summary: string, deprecated = false) =>
    route({
      method: 'post', path, tag: 'openai', summary, deprecated, raw: true, admission: 'long', body: completionBody,
      errors: OPENAI_ERRORS, responses: OPENAI_COMPLETION_RESPONSES, handler,
    });
  return [
    spec('/openai/:chat_id/chat/completions', 'OpenAI-compatible chat completion with a chat assistant (model "model" keeps its model)'),
    spec('/chats_openai/:chat_id/chat/completions', 'OpenAI-compatible chat completion (deprecated alias)', true),
  ];
}
