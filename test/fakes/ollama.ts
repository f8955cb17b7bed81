import type { ServerResponse } from 'node:http';
import { sendJson, startServer, type FakeServer, type Route } from './server.js';
import {
  callIds,
  countTokens,
  fakeEmbedding,
  playTokens,
  replyDelay,
  scriptedTokens,
  sleep,
  parseArguments,
  planToolCalls,
  type FakeBehaviour,
  type FakeChatRequest,
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

function toFakeMessage(m: any): FakeMessage {
  const out: FakeMessage = { role: String(m?.role), content: String(m?.content ?? '') };
  if (Array.isArray(m?.tool_calls) && m.tool_calls.length) {
    out.tool_calls = m.tool_calls.map((c: any) => ({
      id: String(c?.id ?? ''),
      name: String(c?.function?.name ?? ''),
      arguments: parseArguments(c?.function?.arguments),
    }));
  }
  if (m?.tool_name !== undefined) out.tool_name = String(m.tool_name);
  if (m?.tool_call_id !== undefined) out.tool_call_id = String(m.tool_call_id);
  return out;
}

/** Ollama decodes tool-call arguments into a map: a JSON string there is a 400, as on the real server. */
function invalidMessages(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return undefined;
  for (const m of messages) {
    for (const c of Array.isArray(m?.tool_calls) ? m.tool_calls : []) {
      const args = c?.function?.arguments;
      if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
        return `json: cannot unmarshal ${Array.isArray(args) ? 'array' : typeof args} into Go struct field ToolCallFunction.messages.tool_calls.function.arguments of type api.ToolCallFunctionArguments`;
      }
    }
  }
  return undefined;
}

const withTag = (name: string) => (/:[^/]*$/.test(name) ? name : `${name}:latest`);

function routes(models: FakeOllamaModel[]): Record<string, Route> {
  const find = (name: unknown) => models.find((m) => typeof name === 'string' && withTag(m.name) === withTag(name));
  const notFound = (res: ServerResponse, name: unknown) =>
    sendJson(res, 404, { error: `model "${String(name)}" not found, try pulling it first` });

  const nextCallId = callIds();

  const chat: Route = async (ex) => {
    const { res, body, behaviour } = ex;
    const model = find(body?.model);
    if (!model) return notFound(res, body?.model);
    if (!model.capabilities.includes('completion')) {
      return sendJson(res, 400, { error: `"${body.model}" does not support chat` });
    }
    const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
    if (hasTools && !model.capabilities.includes('tools')) {
      return sendJson(res, 400, { error: `registry.ollama.ai/library/${body.model} does not support tools` });
    }
    const invalid = invalidMessages(body.messages);
    if (invalid) return sendJson(res, 400, { error: invalid });
    const messages: FakeMessage[] = (body.messages ?? []).map(toFakeMessage);
    await behaviour.gate?.pass(messages, ex.clientGone);
    if (ex.closed()) return;
    const request: FakeChatRequest = {
      tools: hasTools ? body.tools.map((t: any) => t.function) : [],
      json_schema: body.format && typeof body.format === 'object' ? body.format : undefined,
      body,
    };
    const scripted = behaviour.answer(messages, body.model, request);
    const tokens = scriptedTokens(scripted, behaviour.reasoningStyle);
    // Ollama parses the model's tool calls itself and sends arguments as objects; it has no call ids.
    const calls = planToolCalls(scripted, nextCallId).map((c, index) => ({ function: { index, name: c.name, arguments: c.arguments ?? {} } }));
    const evalCount = tokens.length + calls.reduce((n, c) => n + 1 + countTokens([JSON.stringify(c.function.arguments)]), 0);
    const stats = { prompt_eval_count: countTokens(messages.map((m) => m.content)), eval_count: evalCount };
    const base = () => ({ model: body.model, created_at: new Date().toISOString() });

    if (body.stream === false) {
      await sleep(replyDelay(evalCount, behaviour));
      const content = tokens.filter((t) => t.kind === 'answer').map((t) => t.text).join('');
      const thinking = tokens.filter((t) => t.kind === 'reasoning').map((t) => t.text).join('');
      return sendJson(res, 200, {
        ...base(),
        message: { role: 'assistant', content, ...(thinking ? { thinking } : {}), ...(calls.length ? { tool_calls: calls } : {}) },
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
    // Each parsed call arrives whole, on its own line.
    for (const [i, call] of calls.entries()) {
      if (i > 0 && behaviour.tokenDelayMs > 0) await sleep(behaviour.tokenDelayMs);
      if (ex.closed()) return;
      res.write(`${JSON.stringify({ ...base(), message: { role: 'assistant', content: '', tool_calls: [call] }, done: false })}\n`);
    }
    if (ex.closed()) return;
    res.end(`${JSON.stringify({ ...base(), message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', ...stats })}\n`);
  };

  const embed: Route = async ({ res, body, behaviour }) => {
    const model = find(body?.model);
    if (!model) return notFound(res, body?.model);
    if (!model.capabilities.includes('embedding')) {
      return sendJson(res, 400, { error: 'this model does not support embeddings' });
    }
    if (behaviour.embedDelayMs > 0) await sleep(behaviour.embedDelayMs);
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
 * (capabilities), `/api/chat` (NDJSON streaming, `message.thinking`, scripted `message.tool_calls` with
 * object arguments; `tools` refused for models without the 'tools' capability) and `/api/embed`.
 * Its `url` is the `{model_server_url}` a client is given.
 */
export function startFakeOllama(options: FakeOllamaOptions = {}): Promise<FakeServer> {
  const { models = DEFAULT_OLLAMA_MODELS, ...behaviour } = options;
  return startServer({ routes: routes(models), errorBody: (_status, message) => ({ error: message }) }, behaviour);
}
