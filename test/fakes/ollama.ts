import type { ServerResponse } from 'node:http';
import { sendJson, startServer, type FakeServer, type Route } from './server.js';
import {
  countTokens,
  fakeEmbedding,
  playTokens,
  replyDelay,
  scriptedTokens,
  sleep,
  type FakeBehaviour,
  type FakeMessage,
} from './script.js';

export interface FakeOllamaModel {
  /** Full name with tag, e.g. `llama3.2:latest`. */
  name: string;
  /** As reported by /api/show: 'completion', 'embedding', 'thinking', 'tools', ... */
  capabilities: string[];
  family?: string;
}

export const DEFAULT_OLLAMA_MODELS: FakeOllamaModel[] = [
  { name: 'llama3.2:latest', capabilities: ['completion', 'tools'], family: 'llama' },
  { name: 'qwen3:8b', capabilities: ['completion', 'tools', 'thinking'], family: 'qwen3' },
  { name: 'nomic-embed-text:latest', capabilities: ['embedding'], family: 'nomic-bert' },
];

export interface FakeOllamaOptions extends Partial<FakeBehaviour> {
  /** The models "pulled" on this server (default DEFAULT_OLLAMA_MODELS). */
  models?: FakeOllamaModel[];
}

const withTag = (name: string) => (/:[^/]*$/.test(name) ? name : `${name}:latest`);

function routes(models: FakeOllamaModel[]): Record<string, Route> {
  const find = (name: unknown) => models.find((m) => typeof name === 'string' && withTag(m.name) === withTag(name));
  const notFound = (res: ServerResponse, name: unknown) =>
    sendJson(res, 404, { error: `model "${String(name)}" not found, try pulling it first` });

  const chat: Route = async (ex) => {
    const { res, body, behaviour } = ex;
    const model = find(body?.model);
    if (!model) return notFound(res, body?.model);
    if (!model.capabilities.includes('completion')) {
      return sendJson(res, 400, { error: `"${body.model}" does not support chat` });
    }
    const messages: FakeMessage[] = (body.messages ?? []).map((m: any) => ({ role: m.role, content: String(m.content ?? '') }));
    const tokens = scriptedTokens(behaviour.answer(messages, body.model), behaviour.reasoningStyle);
    const stats = { prompt_eval_count: countTokens(messages.map((m) => m.content)), eval_count: tokens.length };
    const base = () => ({ model: body.model, created_at: new Date().toISOString() });

    if (body.stream === false) {
      await sleep(replyDelay(tokens.length, behaviour));
      const content = tokens.filter((t) => t.kind === 'answer').map((t) => t.text).join('');
      const thinking = tokens.filter((t) => t.kind === 'reasoning').map((t) => t.text).join('');
      return sendJson(res, 200, {
        ...base(),
        message: { role: 'assistant', content, ...(thinking ? { thinking } : {}) },
        done: true,
        done_reason: 'stop',
        ...stats,
      });
    }
    // Ollama streams by default: one JSON object per line.
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.flushHeaders();
    await playTokens(tokens, behaviour, ex.closed, (t) => {
      const message = t.kind === 'reasoning' ? { role: 'assistant', content: '', thinking: t.text } : { role: 'assistant', content: t.text };
      res.write(`${JSON.stringify({ ...base(), message, done: false })}\n`);
    });
    if (ex.closed()) return;
    res.end(`${JSON.stringify({ ...base(), message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', ...stats })}\n`);
  };

  const embed: Route = ({ res, body, behaviour }) => {
    const model = find(body?.model);
    if (!model) return notFound(res, body?.model);
    if (!model.capabilities.includes('embedding')) {
      return sendJson(res, 400, { error: 'this model does not support embeddings' });
    }
    const inputs: string[] = Array.isArray(body.input) ? body.input.map(String) : [String(body.input ?? '')];
    sendJson(res, 200, {
      model: body.model,
      embeddings: inputs.map((t) => fakeEmbedding(t, behaviour.dims)),
      prompt_eval_count: countTokens(inputs),
    });
  };

  const show: Route = ({ res, body }) => {
    const model = find(body?.model ?? body?.name);
    if (!model) return sendJson(res, 404, { error: `model '${String(body?.model ?? body?.name)}' not found` });
    sendJson(res, 200, {
      modelfile: `FROM ${model.name}`,
      details: { format: 'gguf', family: model.family ?? 'fake', parameter_size: '1B', quantization_level: 'Q4_K_M' },
      capabilities: model.capabilities,
    });
  };

  const tags: Route = ({ res }) =>
    sendJson(res, 200, {
      models: models.map((m) => ({
        name: m.name,
        model: m.name,
        modified_at: '2025-01-01T00:00:00Z',
        size: 1_000_000,
        digest: 'f'.repeat(64),
        details: { format: 'gguf', family: m.family ?? 'fake', parameter_size: '1B', quantization_level: 'Q4_K_M' },
      })),
    });

  return {
    'GET /': ({ res }) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('Ollama is running');
    },
    'GET /api/tags': tags,
    'POST /api/show': show,
    'POST /api/chat': chat,
    'POST /api/embed': embed,
  };
}

/**
 * A scripted Ollama server (kind A): `GET /` ("Ollama is running"), `/api/tags`, `/api/show`
 * (capabilities), `/api/chat` (NDJSON streaming, `message.thinking`) and `/api/embed`.
 * Its `url` is the `{model_server_url}` a client is given.
 */
export function startFakeOllama(options: FakeOllamaOptions = {}): Promise<FakeServer> {
  const { models = DEFAULT_OLLAMA_MODELS, ...behaviour } = options;
  return startServer({ routes: routes(models), errorBody: (_status, message) => ({ error: message }) }, behaviour);
}
