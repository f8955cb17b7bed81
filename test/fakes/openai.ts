import { sendJson, startServer, type Exchange, type FakeServer, type Route } from './server.js';
import {
  argumentPieces,
  callIds,
  countTokens,
  fakeEmbedding,
  overlapScore,
  parseArguments,
  planToolCalls,
  playTokens,
  replyDelay,
  scriptedTokens,
  sleep,
  type FakeBehaviour,
  type FakeChatRequest,
  type FakeMessage,
  type PlannedToolCall,
} from './script.js';

export interface FakeOpenAIOptions extends Partial<FakeBehaviour> {
  /** Model names served; others get a 404 (OpenAI) / 400 (Xinference). Default: any name is served. */
  models?: string[];
}

export interface FakeOpenAI extends FakeServer {
  /** `${url}/v1`: the base URL an OpenAI-compatible client is given. */
  baseUrl: string;
}

type Flavour = 'openai' | 'xinference';

function toText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
  return '';
}

function toFakeMessage(m: any): FakeMessage {
  const out: FakeMessage = { role: String(m?.role), content: toText(m?.content) };
  if (Array.isArray(m?.tool_calls) && m.tool_calls.length) {
    out.tool_calls = m.tool_calls.map((c: any) => ({
      id: String(c?.id ?? ''),
      name: String(c?.function?.name ?? ''),
      arguments: parseArguments(c?.function?.arguments),
    }));
  }
  if (m?.tool_call_id !== undefined) out.tool_call_id = String(m.tool_call_id);
  return out;
}

function chatRequest(body: any): FakeChatRequest {
  const tools = Array.isArray(body?.tools) ? body.tools.map((t: any) => t.function) : [];
  const format = body?.response_format;
  return { tools, json_schema: format?.type === 'json_schema' ? format.json_schema?.schema : undefined, body };
}

/**
 * The checks a real OpenAI-compatible server makes on tools and tool messages, with OpenAI's wording,
 * so a client that sends them wrong fails in tests as it would in production.
 */
function invalidChatRequest(body: any): { message: string; param: string | null } | undefined {
  if (!Array.isArray(body?.messages)) return { message: "Missing required parameter: 'messages'.", param: 'messages' };
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return { message: "Invalid type for 'tools': expected an array.", param: 'tools' };
    for (const [i, t] of body.tools.entries()) {
      if (t?.type !== 'function') return { message: `Invalid value for 'tools[${i}].type': expected 'function'.`, param: `tools[${i}].type` };
      if (typeof t.function?.name !== 'string' || !t.function.name) {
        return { message: `Missing required parameter: 'tools[${i}].function.name'.`, param: `tools[${i}].function.name` };
      }
    }
  }
  const format = body.response_format;
  if (format?.type === 'json_schema' && typeof format.json_schema?.name !== 'string') {
    return { message: "Missing required parameter: 'response_format.json_schema.name'.", param: 'response_format.json_schema.name' };
  }
  let pending = new Set<string>();
  for (const [i, m] of body.messages.entries()) {
    if (m?.role === 'tool') {
      if (typeof m.tool_call_id !== 'string' || !pending.delete(m.tool_call_id)) {
        return {
          message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          param: `messages.[${i}].role`,
        };
      }
      continue;
    }
    if (pending.size) {
      return {
        message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`,
        param: 'messages',
      };
    }
    if (m?.role === 'assistant' && Array.isArray(m.tool_calls)) {
      for (const [j, c] of m.tool_calls.entries()) {
        const at = `messages.[${i}].tool_calls.[${j}]`;
        if (typeof c?.id !== 'string' || !c.id) return { message: `Missing required parameter: '${at}.id'.`, param: `${at}.id` };
        if (c.type !== 'function') return { message: `Missing required parameter: '${at}.type'.`, param: `${at}.type` };
        if (typeof c.function?.name !== 'string') return { message: `Missing required parameter: '${at}.function.name'.`, param: `${at}.function.name` };
        if (typeof c.function?.arguments !== 'string') {
          return { message: `Invalid type for '${at}.function.arguments': expected a string.`, param: `${at}.function.arguments` };
        }
      }
      pending = new Set(m.tool_calls.map((c: any) => c.id as string));
    }
  }
  if (pending.size) {
    return {
      message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`,
      param: 'messages',
    };
  }
  return undefined;
}

function routes(flavour: Flavour, models: string[] | undefined): Record<string, Route> {
  /** Answers an error for an unknown model; returns true if it did. */
  const unknownModel = ({ res, body }: Exchange): boolean => {
    if (!models || models.includes(body?.model)) return false;
    if (flavour === 'xinference') {
      sendJson(res, 400, { detail: `Model not found in the model list, uid: ${body?.model}` });
    } else {
      sendJson(res, 404, {
        error: {
          message: `The model \`${body?.model}\` does not exist or you do not have access to it.`,
          type: 'invalid_request_error',
          param: null,
          code: 'model_not_found',
        },
      });
    }
    return true;
  };

  /** Answers a 400 in the provider's shape; returns true if it did. */
  const badRequest = ({ res }: Exchange, message: string, param: string | null = null): true => {
    if (flavour === 'xinference') sendJson(res, 400, { detail: message });
    else sendJson(res, 400, { error: { message, type: 'invalid_request_error', param, code: null } });
    return true;
  };
  const nextCallId = callIds();

  const chat: Route = async (ex) => {
    if (unknownModel(ex)) return;
    const { res, body, behaviour } = ex;
    const invalid = invalidChatRequest(body);
    if (invalid) return void badRequest(ex, invalid.message, invalid.param);
    const messages: FakeMessage[] = (body?.messages ?? []).map(toFakeMessage);
    await behaviour.gate?.pass(messages, ex.clientGone);
    if (ex.closed()) return;
    const scripted = behaviour.answer(messages, body.model, chatRequest(body));
    const tokens = scriptedTokens(scripted, behaviour.reasoningStyle);
    const calls = planToolCalls(scripted, nextCallId);
    const created = Math.floor(Date.now() / 1000);
    const id = `chatcmpl-fake-${created}`;
    const promptTokens = countTokens(messages.map((m) => m.content));
    const pieces = calls.map((c) => argumentPieces(c.json));
    const completionTokens = tokens.length + pieces.reduce((n, p) => n + 1 + p.length, 0);
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
    const finishReason = calls.length ? 'tool_calls' : 'stop';
    const wireCall = (c: PlannedToolCall) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.json } });

    if (!body.stream) {
      await sleep(replyDelay(completionTokens, behaviour));
      const content = tokens.filter((t) => t.kind === 'answer').map((t) => t.text).join('');
      const reasoning = tokens.filter((t) => t.kind === 'reasoning').map((t) => t.text).join('');
      const message = {
        role: 'assistant',
        content: calls.length && !content ? null : content,
        ...(reasoning ? { reasoning_content: reasoning } : {}),
        ...(calls.length ? { tool_calls: calls.map(wireCall) } : {}),
      };
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model: body.model,
        choices: [{ index: 0, message, finish_reason: finishReason }],
        usage,
      });
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    const frame = (delta: object, finish: string | null = null, extra: object = {}) =>
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`,
      );
    let first = true;
    const withRole = (delta: object) => {
      const out = first ? { role: 'assistant', ...delta } : delta;
      first = false;
      return out;
    };
    await playTokens(tokens, behaviour, ex.closed, (t) => {
      frame(withRole(t.kind === 'reasoning' ? { reasoning_content: t.text, content: null } : { content: t.text }));
    });
    // Tool calls as OpenAI streams them: a head (index, id, type, name, empty arguments), then the
    // arguments in pieces keyed by index only.
    for (const [index, call] of calls.entries()) {
      if (ex.closed()) return;
      frame(withRole({ ...(first ? { content: null } : {}), tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
      for (const piece of pieces[index]!) {
        if (behaviour.tokenDelayMs > 0) await sleep(behaviour.tokenDelayMs);
        if (ex.closed()) return;
        frame({ tool_calls: [{ index, function: { arguments: piece } }] });
      }
    }
    if (ex.closed()) return;
    frame({}, finishReason);
    if (body.stream_options?.include_usage) {
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  };

  const embeddings: Route = async (ex) => {
    if (unknownModel(ex)) return;
    const { res, body, behaviour } = ex;
    if (behaviour.embedDelayMs > 0) await sleep(behaviour.embedDelayMs);
    const inputs: string[] = Array.isArray(body?.input) ? body.input : [body?.input ?? ''];
    const data = inputs.map((text, index) => {
      const vector = fakeEmbedding(String(text), behaviour.dims);
      const embedding =
        body?.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
      return { object: 'embedding', index, embedding };
    });
    const tokens = countTokens(inputs.map(String));
    sendJson(res, 200, { object: 'list', data, model: body?.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  };

  const rerank: Route = (ex) => {
    if (unknownModel(ex)) return;
    const { res, body } = ex;
    const documents: string[] = (body?.documents ?? []).map((d: unknown) =>
      typeof d === 'string' ? d : String((d as { text?: string })?.text ?? ''),
    );
    const results = documents
      .map((doc, index) => ({
        index,
        relevance_score: overlapScore(String(body?.query ?? ''), doc),
        ...(body?.return_documents ? { document: { text: doc } } : {}),
      }))
      .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
      .slice(0, body?.top_n ?? documents.length);
    sendJson(res, 200, { id: `rerank-fake`, results, meta: { tokens: { input_tokens: countTokens(documents) } } });
  };

  const listModels: Route = ({ res }) =>
    sendJson(res, 200, {
      object: 'list',
      data: (models ?? ['fake-chat', 'fake-embedding', 'fake-rerank']).map((id) => ({
        id,
        object: 'model',
        created: 0,
        owned_by: flavour === 'xinference' ? 'xinference' : 'fake',
      })),
    });

  return {
    'POST /v1/chat/completions': chat,
    'POST /v1/embeddings': embeddings,
    'POST /v1/rerank': rerank,
    'GET /v1/models': listModels,
  };
}

async function start(flavour: Flavour, options: FakeOpenAIOptions): Promise<FakeOpenAI> {
  const { models, ...behaviour } = options;
  const errorBody =
    flavour === 'xinference'
      ? (_status: number, message: string) => ({ detail: message })
      : (status: number, message: string) => ({ error: { message, type: 'fake_error', param: null, code: String(status) } });
  const server = await startServer({ routes: routes(flavour, models), errorBody }, behaviour);
  return Object.assign(server, { baseUrl: `${server.url}/v1` });
}

/**
 * A scripted OpenAI-compatible server: `/v1/chat/completions` (JSON and SSE, `reasoning_content`
 * deltas, scripted `tool_calls` streamed by index with arguments in pieces, usage in a last chunk when
 * `stream_options.include_usage`; tool messages are checked as OpenAI checks them), `/v1/embeddings` (float or base64), `/v1/models`, and a Jina/vLLM-style `/v1/rerank`.
 */
export function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  return start('openai', options);
}

/**
 * A scripted Xinference server (kind B): the same OpenAI-compatible routes under `/v1` plus
 * `/v1/rerank` ({model, query, documents} -> {results: [{index, relevance_score}]}); errors as `{detail}`.
 */
export function startFakeXinference(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  return start('xinference', options);
}
