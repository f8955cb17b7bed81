import { sendJson, startServer, type Exchange, type FakeServer, type Route } from './server.js';
import {
  countTokens,
  fakeEmbedding,
  overlapScore,
  playTokens,
  replyDelay,
  scriptedTokens,
  sleep,
  type FakeBehaviour,
  type FakeMessage,
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

  const chat: Route = async (ex) => {
    if (unknownModel(ex)) return;
    const { res, body, behaviour } = ex;
    const messages: FakeMessage[] = (body?.messages ?? []).map((m: any) => ({ role: m.role, content: toText(m.content) }));
    const scripted = behaviour.answer(messages, body.model);
    const tokens = scriptedTokens(scripted, behaviour.reasoningStyle);
    const created = Math.floor(Date.now() / 1000);
    const id = `chatcmpl-fake-${created}`;
    const promptTokens = countTokens(messages.map((m) => m.content));
    const usage = { prompt_tokens: promptTokens, completion_tokens: tokens.length, total_tokens: promptTokens + tokens.length };

    if (!body.stream) {
      await sleep(replyDelay(tokens.length, behaviour));
      const content = tokens.filter((t) => t.kind === 'answer').map((t) => t.text).join('');
      const reasoning = tokens.filter((t) => t.kind === 'reasoning').map((t) => t.text).join('');
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content, ...(reasoning ? { reasoning_content: reasoning } : {}) },
            finish_reason: 'stop',
          },
        ],
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
    await playTokens(tokens, behaviour, ex.closed, (t) => {
      const delta = t.kind === 'reasoning' ? { reasoning_content: t.text, content: null } : { content: t.text };
      frame(first ? { role: 'assistant', ...delta } : delta);
      first = false;
    });
    if (ex.closed()) return;
    frame({}, 'stop');
    if (body.stream_options?.include_usage) {
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  };

  const embeddings: Route = (ex) => {
    if (unknownModel(ex)) return;
    const { res, body, behaviour } = ex;
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
 * deltas), `/v1/embeddings` (float or base64), `/v1/models`, and a Jina/vLLM-style `/v1/rerank`.
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
