import { route, type RouteContext, type RouteSpec } from '../routes.js';
import { validateBody } from '../validation.js';
import { safeJson } from '../envelope.js';
import { ApiError, unauthorized } from '../../errors.js';
import { ModelError } from '../../models/types.js';
import type { AuthService } from '../../services/auth.js';
import type { ConversationService, OpenAICompletionInput } from '../../services/conversations.js';
import { finalOf } from '../../chat/events.js';
import { OpenAIChunks, openAIError } from '../../chat/openai-frames.js';
import { clientGone, streamOpenAIChunks } from '../../chat/sse.js';

const referenceOptions = {
  reference: { type: 'boolean' },
  reference_metadata: {
    type: 'object',
    properties: { include: { type: 'boolean' }, fields: { type: 'array', items: { type: 'string' } } },
  },
};

/** Other keys (sampling parameters, custom prompt variables) are accepted. */
const completionBody = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1 },
    stream: { type: 'boolean', default: false },
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role', 'content'],
        properties: {
          role: { enum: ['system', 'user', 'assistant'] },
          content: {
            anyOf: [
              { type: 'string' },
              { type: 'array', items: { type: 'object', required: ['type'], properties: { type: { type: 'string' }, text: { type: 'string' } } } },
            ],
          },
        },
      },
    },
    extra_body: { type: 'object', properties: referenceOptions },
    ...referenceOptions,
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
 * (`{"error": {...}}` with the HTTP status), so it authenticates and validates by itself.
 */
export function openaiRoutes(conversations: ConversationService, auth: AuthService): RouteSpec[] {
  const handler = async ({ req, res, params }: RouteContext) => {
    try {
      const principal = await auth.resolve(req.headers.authorization);
      if (!principal) throw unauthorized('Unauthorized: invalid or missing API key (send it as the Bearer token)');
      const body = validateBody<any>(completionBody, req.body ?? {});
      const input = toInput(params.chat_id!, body);
      const turn = await conversations.startOpenAI(principal, input);
      res.locals.timings = turn.timings;
      const chunks = new OpenAIChunks({ id: `chatcmpl-${turn.ids.id}`, model: body.model, created: Math.floor(Date.now() / 1000) }, input.reference);
      if (body.stream) return await streamOpenAIChunks(res, turn, chunks);
      const final = await finalOf(turn, clientGone(res));
      if (final) res.type('application/json').send(safeJson(chunks.completion(final)));
    } catch (err) {
      if (!(err instanceof ApiError || err instanceof ModelError)) throw err;
      res.status(err.status).type('application/json').send(safeJson(openAIError(err.message, err.status)));
    }
  };
  const spec = (path: string, summary: string) =>
    route({ method: 'post', path, tag: 'openai', summary, public: true, raw: true, handler });
  return [
    spec('/openai/:chat_id/chat/completions', 'OpenAI-compatible chat completion with a chat assistant (model "model" keeps its model)'),
    spec('/chats_openai/:chat_id/chat/completions', 'OpenAI-compatible chat completion (deprecated alias)'),
  ];
}
