import { randomUUID } from 'node:crypto';
import { ProviderHttpError } from './errors.js';
import { DEFAULT_TIMEOUTS, joinUrl, requestJson, requestText, streamLines, type Timeouts } from './http.js';
import { ThinkSplitter, stripThink } from './think.js';
import {
  ModelError,
  type ChatDelta,
  type ChatMessage,
  type ChatModel,
  type ChatOptions,
  type EmbeddingModel,
  type TokenUsage,
  type ToolCall,
} from './types.js';
import { l2normalize } from './vector.js';

const PROVIDER = 'Ollama';

export interface OllamaSettings {
  id: string;
  /** `{model_server_url}`: scheme, host and port, e.g. `http://127.0.0.1:11434`. */
  baseUrl: string;
  model: string;
  timeouts?: Partial<Timeouts>;
  /** The fetch to call with (the outbound-address policy's); default the global one. */
  fetch?: typeof fetch;
  /** Texts per /api/embed request. */
  batchSize?: number;
}

export interface OllamaModelInfo {
  name: string;
  /** From /api/show; absent on servers too old to report them. */
  capabilities?: string[];
}

/** `llama3` and `llama3:latest` name the same model; the tag follows the last `:` after any `/`. */
export function sameOllamaModel(a: string, b: string): boolean {
  const norm = (n: string) => (/:[^/]*$/.test(n) ? n : `${n}:latest`);
  return norm(a) === norm(b);
}

/** The capability Ollama reports for each model type. */
const CAPABILITY = { chat: 'completion', embedding: 'embedding' } as const;

/** One Ollama server: connection check and the pulled-model lookup. */
export class OllamaServer {
  readonly baseUrl: string;
  readonly timeouts: Timeouts;

  constructor(
    baseUrl: string,
    timeouts?: Partial<Timeouts>,
    readonly fetch?: typeof globalThis.fetch,
  ) {
    // Users often paste the OpenAI-compatible URL; the native API lives at the root.
    this.baseUrl = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...timeouts };
  }

  url(path: string): string {
    return joinUrl(this.baseUrl, path);
  }

  /** GET / must answer "Ollama is running". */
  async checkConnection(): Promise<void> {
    const notOllama = (answer: string) =>
      new ModelError(`${PROVIDER}: ${this.baseUrl} is not an Ollama server (GET / answered ${answer})`, PROVIDER, 400);
    let text: string;
    try {
      text = await requestText({ provider: PROVIDER, model: '', url: this.url('/'), timeouts: this.timeouts, fetch: this.fetch });
    } catch (err) {
      throw err instanceof ProviderHttpError ? notOllama(`HTTP ${err.upstreamStatus}`) : err;
    }
    if (!text.includes('Ollama is running')) throw notOllama(JSON.stringify(text.slice(0, 80)));
  }

  async listModels(): Promise<string[]> {
    const res = await requestJson<{ models?: { name?: string; model?: string }[] }>({
      provider: PROVIDER,
      model: '',
      url: this.url('/api/tags'),
      timeouts: this.timeouts,
      fetch: this.fetch,
    });
    return (res.models ?? []).map((m) => m.name ?? m.model ?? '').filter(Boolean);
  }

  async showModel(name: string): Promise<OllamaModelInfo> {
    const res = await requestJson<{ capabilities?: string[] }>({
      provider: PROVIDER,
      model: name,
      url: this.url('/api/show'),
      body: { model: name },
      timeouts: this.timeouts,
      fetch: this.fetch,
    });
    return { name, capabilities: res.capabilities };
  }

  /** Fails with a ModelError naming the model unless it is pulled and of the requested type. */
  async ensureModel(name: string, type: 'chat' | 'embedding'): Promise<void> {
    const pulled = await this.listModels();
    const match = pulled.find((p) => sameOllamaModel(p, name));
    if (!match) {
      const available = pulled.length ? pulled.join(', ') : 'none';
      throw new ModelError(
        `${PROVIDER}: model '${name}' is not pulled on the server at ${this.baseUrl} (pulled: ${available}); run \`ollama pull ${name}\``,
        PROVIDER,
        400,
      );
    }
    const { capabilities } = await this.showModel(match);
    if (capabilities && !capabilities.includes(CAPABILITY[type])) {
      throw new ModelError(
        `${PROVIDER}: model '${name}' on ${this.baseUrl} is not a${type === 'embedding' ? 'n' : ''} ${type} model (capabilities: ${capabilities.join(', ') || 'none'})`,
        PROVIDER,
        400,
      );
    }
  }
}

/** Shared by the chat and embedding clients: checks connection and model once, on first use. */
abstract class OllamaClient {
  readonly id: string;
  protected readonly server: OllamaServer;
  private checked: Promise<void> | undefined;

  constructor(
    protected readonly settings: OllamaSettings,
    private readonly type: 'chat' | 'embedding',
  ) {
    this.id = settings.id;
    this.server = new OllamaServer(settings.baseUrl, settings.timeouts, settings.fetch);
  }

  verify(): Promise<void> {
    return this.server.checkConnection().then(() => this.server.ensureModel(this.settings.model, this.type));
  }

  protected ready(): Promise<void> {
    this.checked ??= this.server.ensureModel(this.settings.model, this.type).catch((err: unknown) => {
      this.checked = undefined; // the model may be pulled later
      throw err;
    });
    return this.checked;
  }
}

/** A tool call as Ollama returns it: arguments already parsed into an object; no id on older servers. */
interface OllamaToolCall {
  id?: string;
  function?: { index?: number; name?: string; arguments?: unknown };
}

interface OllamaChatLine {
  message?: { content?: string; thinking?: string; tool_calls?: OllamaToolCall[] };
  done?: boolean;
  error?: string;
  /** On the final line: tokens of the prompt (absent when all of it was cached) and of the answer. */
  prompt_eval_count?: number;
  eval_count?: number;
}

function ollamaOptions(options: ChatOptions) {
  const { temperature, top_p, presence_penalty, frequency_penalty, max_tokens, seed } = options;
  const all = { temperature, top_p, presence_penalty, frequency_penalty, num_predict: max_tokens, seed, stop: options.stop?.length ? options.stop : undefined };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined && v !== null));
}

function newCallId(): string {
  return `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

/** Ollama decodes arguments into a map: JSON text becomes its object (anything else an empty one). */
function argumentsObject(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Messages in Ollama's shape: assistant tool calls with object arguments; a tool result names its tool
 * (`tool_name`, looked up from the call it answers) since Ollama has no call ids.
 */
function ollamaMessages(messages: ChatMessage[]): Record<string, unknown>[] {
  const toolNames = new Map<string, string>();
  return messages.map((m) => {
    if (m.role === 'assistant' && m.tool_calls?.length) {
      for (const c of m.tool_calls) toolNames.set(c.id, c.name);
      return {
        role: 'assistant',
        content: m.content,
        tool_calls: m.tool_calls.map((c) => ({ function: { name: c.name, arguments: argumentsObject(c.arguments) } })),
      };
    }
    if (m.role === 'tool') {
      const name = m.tool_call_id === undefined ? undefined : toolNames.get(m.tool_call_id);
      return { role: 'tool', content: m.content, ...(name ? { tool_name: name } : {}) };
    }
    // Ollama takes images as bare base64 beside the text.
    if (m.images?.length) return { role: m.role, content: m.content, images: m.images.map((url) => url.slice(url.indexOf(',') + 1)) };
    return { role: m.role, content: m.content };
  });
}

function toToolCall(c: OllamaToolCall): ToolCall | undefined {
  const name = c.function?.name;
  if (!name) return undefined;
  const args = c.function?.arguments;
  const text = typeof args === 'string' ? args : args && typeof args === 'object' ? JSON.stringify(args) : '';
  return { id: c.id || newCallId(), name, arguments: text.trim() ? text : '{}' };
}

export class OllamaChatModel extends OllamaClient implements ChatModel {
  constructor(settings: OllamaSettings) {
    super(settings, 'chat');
  }

  private request(messages: ChatMessage[], options: ChatOptions, stream: boolean) {
    return {
      provider: PROVIDER,
      model: this.settings.model,
      url: this.server.url('/api/chat'),
      body: {
        model: this.settings.model,
        messages: ollamaMessages(messages),
        stream,
        options: ollamaOptions(options),
        ...(options.tools?.length
          ? {
              tools: options.tools.map(({ name, description, parameters }) => ({
                type: 'function',
                function: { name, description, parameters },
              })),
            }
          : {}),
        ...(options.json_schema ? { format: options.json_schema } : {}),
      },
      timeouts: this.server.timeouts,
      fetch: this.server.fetch,
      signal: options.signal,
    };
  }

  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<ChatDelta> {
    await this.ready();
    const splitter = new ThinkSplitter();
    const calls: ToolCall[] = [];
    let usage: TokenUsage | undefined;
    for await (const line of streamLines(this.request(messages, options, true))) {
      const msg = parseLine(line);
      if (msg.error) throw new ModelError(`${PROVIDER}: ${msg.error}`, PROVIDER, 500);
      // Thinking-capable models report it apart; others may still inline <think> tags in content.
      if (msg.message?.thinking) yield { kind: 'reasoning', text: msg.message.thinking };
      if (msg.message?.content) yield* splitter.push(msg.message.content);
      // Ollama sends each parsed call whole, in one or several lines before the last.
      for (const c of msg.message?.tool_calls ?? []) {
        const call = toToolCall(c);
        if (call) calls.push(call);
      }
      if (msg.done) {
        if (msg.prompt_eval_count !== undefined || msg.eval_count !== undefined) {
          usage = { prompt_tokens: msg.prompt_eval_count ?? 0, completion_tokens: msg.eval_count ?? 0 };
        }
        break;
      }
    }
    yield* splitter.end();
    if (calls.length) yield { kind: 'tool_calls', text: '', calls };
    if (usage) yield { kind: 'usage', text: '', usage };
  }

  /** The answer text only: tool calls the model may make are ignored here (use stream() for them). */
  async complete(messages: ChatMessage[], options: ChatOptions = {}): Promise<string> {
    await this.ready();
    const res = await requestJson<OllamaChatLine>(this.request(messages, options, false));
    if (res.error) throw new ModelError(`${PROVIDER}: ${res.error}`, PROVIDER, 500);
    return stripThink(res.message?.content ?? '');
  }
}

function parseLine(line: string): OllamaChatLine {
  try {
    return JSON.parse(line) as OllamaChatLine;
  } catch {
    throw new ModelError(`${PROVIDER}: invalid stream line ${JSON.stringify(line.slice(0, 80))}`, PROVIDER, 500);
  }
}

export class OllamaEmbeddingModel extends OllamaClient implements EmbeddingModel {
  constructor(settings: OllamaSettings) {
    super(settings, 'embedding');
  }

  async embed(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    await this.ready();
    const batchSize = this.settings.batchSize ?? 32;
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      const batch = texts.slice(start, start + batchSize);
      const res = await requestJson<{ embeddings?: number[][] }>({
        provider: PROVIDER,
        model: this.settings.model,
        url: this.server.url('/api/embed'),
        body: { model: this.settings.model, input: batch, truncate: true },
        timeouts: this.server.timeouts,
        fetch: this.server.fetch,
      });
      if (res.embeddings?.length !== batch.length) {
        throw new ModelError(
          `${PROVIDER}: returned ${res.embeddings?.length ?? 0} embeddings for ${batch.length} texts`,
          PROVIDER,
          500,
        );
      }
      vectors.push(...res.embeddings.map(l2normalize));
    }
    return vectors;
  }
}
