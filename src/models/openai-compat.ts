import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { bodyMessage, httpError, networkError, timeoutError } from './errors.js';
import { DEFAULT_TIMEOUTS, Deadline, guardIdle, type Timeouts } from './http.js';
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

/** Settings shared by every client of an OpenAI-compatible endpoint (OpenAI, vLLM, Xinference, ...). */
export interface OpenAICompatSettings {
  /** Model id as Cairn knows it (e.g. `gpt-4o-mini@OpenAI`). */
  id: string;
  /** Provider name used in error messages (the factory, e.g. `Xinference`). */
  provider: string;
  /** Base URL including the API version, e.g. `http://127.0.0.1:9997/v1`. */
  baseURL: string;
  model: string;
  apiKey?: string;
  timeouts?: Partial<Timeouts>;
  /** Texts per embeddings request. */
  batchSize?: number;
  /** The fetch to call with (the outbound-address policy's); default the global one. */
  fetch?: typeof fetch;
}

/**
 * The SDK keeps only the `error` field of an error body, but FastAPI-based servers (Xinference, vLLM)
 * answer `{"detail": ...}`; rewriting error bodies to the OpenAI shape keeps their message.
 */
const keepingErrorDetail = (fetch: typeof globalThis.fetch): typeof globalThis.fetch => async (input, init) => {
  const res = await fetch(input, init);
  if (res.ok) return res;
  const message = bodyMessage(await res.text().catch(() => '')) ?? `HTTP ${res.status}`;
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify({ error: { message } }), { status: res.status, statusText: res.statusText, headers });
};

/** Base of the chat and embedding clients: owns the SDK client and maps its errors to ModelErrors. */
abstract class OpenAICompatClient {
  readonly id: string;
  protected readonly client: OpenAI;
  protected readonly timeouts: Timeouts;

  constructor(protected readonly settings: OpenAICompatSettings) {
    this.id = settings.id;
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...settings.timeouts };
    this.client = new OpenAI({
      baseURL: settings.baseURL,
      // The SDK refuses an empty key; keyless local servers ignore the header.
      apiKey: settings.apiKey || 'no-key',
      // Callers (Temporal activities, the chat UI) decide about retries; a dead server must fail fast.
      maxRetries: 0,
      timeout: this.timeouts.requestMs,
      fetch: keepingErrorDetail(settings.fetch ?? fetch),
    });
  }

  /** `idleTimedOut`: the stream was aborted by its idle timer. */
  protected fail(err: unknown, callerSignal?: AbortSignal, idleTimedOut = false): unknown {
    const { provider, baseURL, model } = this.settings;
    if (err instanceof ModelError) return err;
    if (callerSignal?.aborted) return callerSignal.reason ?? err;
    if (idleTimedOut) return timeoutError(provider, baseURL, 'stream (no data)', this.timeouts.idleMs);
    if (err instanceof OpenAI.APIConnectionTimeoutError) {
      return timeoutError(provider, baseURL, 'request', this.timeouts.requestMs);
    }
    if (err instanceof OpenAI.APIConnectionError) return networkError(provider, baseURL, err.cause ?? err);
    if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
      const detail = bodyMessage(err.error) ?? err.message.replace(/^\d{3}\s*/, '');
      return httpError(provider, err.status, detail, model);
    }
    return networkError(provider, baseURL, err);
  }
}

function samplingParams(options: ChatOptions) {
  const { temperature, top_p, presence_penalty, frequency_penalty, max_tokens } = options;
  return Object.fromEntries(
    Object.entries({ temperature, top_p, presence_penalty, frequency_penalty, max_tokens }).filter(
      ([, v]) => v !== undefined && v !== null,
    ),
  );
}

/**
 * Every request field the options ask for besides the messages. `chat_template_kwargs` is not OpenAI's
 * but vLLM and SGLang read it from the body (e.g. `{enable_thinking: false}`); it is sent only when given.
 */
function requestParams(options: ChatOptions): Record<string, unknown> {
  const params: Record<string, unknown> = samplingParams(options);
  if (options.stop?.length) params.stop = options.stop;
  if (options.seed !== undefined && options.seed !== null) params.seed = options.seed;
  if (options.tools?.length) {
    params.tools = options.tools.map(({ name, description, parameters }) => ({
      type: 'function',
      function: { name, description, parameters },
    }));
  }
  if (options.json_schema) {
    params.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: options.json_schema, strict: false } };
  }
  if (options.chat_template_kwargs && Object.keys(options.chat_template_kwargs).length) {
    params.chat_template_kwargs = options.chat_template_kwargs;
  }
  return params;
}

/**
 * Messages in OpenAI's shape: an assistant turn that called tools carries `tool_calls` (content null
 * when it said nothing, as OpenAI itself sends it) and a tool result carries the `tool_call_id` it answers.
 */
function wireMessages(messages: ChatMessage[]): OpenAI.Chat.ChatCompletionMessageParam[] {
  return messages.map((m): OpenAI.Chat.ChatCompletionMessageParam => {
    if (m.role === 'tool') return { role: 'tool', content: m.content, tool_call_id: m.tool_call_id ?? '' };
    if (m.role === 'assistant' && m.tool_calls?.length) {
      return {
        role: 'assistant',
        content: m.content || null,
        tool_calls: m.tool_calls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: c.arguments || '{}' },
        })),
      };
    }
    if (m.role === 'user' && m.images?.length) {
      return { role: 'user', content: [{ type: 'text', text: m.content }, ...m.images.map((url) => ({ type: 'image_url' as const, image_url: { url } }))] };
    }
    return { role: m.role, content: m.content };
  });
}

/** Reasoning arrives as `reasoning_content` (DeepSeek, vLLM, Xinference) or `reasoning` (newer vLLM, Ollama). */
interface ReasoningDelta {
  content?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  tool_calls?: ToolCallDelta[] | null;
}

/** A streamed piece of a tool call: the head carries index, id and name; later pieces carry arguments. */
interface ToolCallDelta {
  index?: number;
  id?: string | null;
  function?: { name?: string | null; arguments?: unknown } | null;
}

function newCallId(): string {
  return `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

/**
 * Assembles streamed tool calls. Pieces are keyed by `index`; servers that omit it are followed by
 * `id` (a new id starts a new call, no id continues the last one). The name is taken once; arguments
 * are concatenated (a server sending them whole as an object is accepted too).
 */
export class ToolCallAssembler {
  private readonly calls: ToolCall[] = [];
  private readonly byIndex = new Map<number, ToolCall>();

  push(deltas: ToolCallDelta[] | null | undefined): void {
    for (const d of deltas ?? []) {
      const call = this.callFor(d);
      const fn = d.function;
      if (fn?.name && !call.name) call.name = fn.name;
      if (typeof fn?.arguments === 'string') call.arguments += fn.arguments;
      else if (fn?.arguments && typeof fn.arguments === 'object') call.arguments = JSON.stringify(fn.arguments);
    }
  }

  private callFor(d: ToolCallDelta): ToolCall {
    let call: ToolCall | undefined;
    if (typeof d.index === 'number') call = this.byIndex.get(d.index);
    else if (d.id) call = this.calls.find((c) => c.id === d.id);
    else call = this.calls.at(-1);
    if (!call) {
      call = { id: '', name: '', arguments: '' };
      this.calls.push(call);
      if (typeof d.index === 'number') this.byIndex.set(d.index, call);
    }
    if (d.id && !call.id) call.id = d.id;
    return call;
  }

  /** The complete calls, in order; a call without an id gets one, empty arguments become `{}`. */
  result(): ToolCall[] {
    return this.calls
      .filter((c) => c.name)
      .map((c) => ({ id: c.id || newCallId(), name: c.name, arguments: c.arguments.trim() ? c.arguments : '{}' }));
  }
}

/** A server that rejects `stream_options` (older OpenAI-compatible servers) names it in its 400/422. */
function rejectsStreamOptions(err: unknown): boolean {
  return err instanceof OpenAI.APIError && (err.status === 400 || err.status === 422) && /stream_options/.test(err.message);
}

export class OpenAIChatModel extends OpenAICompatClient implements ChatModel {
  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<ChatDelta> {
    const deadline = new Deadline(options.signal);
    try {
      const body = {
        model: this.settings.model,
        messages: wireMessages(messages),
        stream: true as const,
        stream_options: { include_usage: true },
        ...requestParams(options),
      };
      let stream;
      try {
        stream = await this.client.chat.completions.create(body, { signal: deadline.signal });
      } catch (err) {
        if (!rejectsStreamOptions(err)) throw err;
        const { stream_options: _, ...withoutUsage } = body;
        stream = await this.client.chat.completions.create(withoutUsage, { signal: deadline.signal });
      }
      const splitter = new ThinkSplitter();
      const toolCalls = new ToolCallAssembler();
      let usage: TokenUsage | undefined;
      for await (const chunk of guardIdle(stream, deadline, this.timeouts.idleMs)) {
        // With include_usage the last chunk has no choices and the totals; some servers send usage on every chunk.
        if (chunk.usage) {
          usage = { prompt_tokens: chunk.usage.prompt_tokens ?? 0, completion_tokens: chunk.usage.completion_tokens ?? 0 };
        }
        const delta = chunk.choices?.[0]?.delta as ReasoningDelta | undefined;
        const reasoning = delta?.reasoning_content ?? delta?.reasoning;
        if (reasoning) yield { kind: 'reasoning', text: reasoning };
        if (delta?.content) yield* splitter.push(delta.content);
        if (delta?.tool_calls) toolCalls.push(delta.tool_calls);
      }
      // The SDK ends a stream quietly when its signal aborts; a timeout or cancel must not look complete.
      if (deadline.signal.aborted) throw new Error('stream aborted');
      yield* splitter.end();
      const calls = toolCalls.result();
      if (calls.length) yield { kind: 'tool_calls', text: '', calls };
      if (usage) yield { kind: 'usage', text: '', usage };
    } catch (err) {
      throw this.fail(err, options.signal, deadline.fired);
    } finally {
      deadline.dispose();
      deadline.controller.abort();
    }
  }

  /** The answer text only: tool calls the model may make are ignored here (use stream() for them). */
  async complete(messages: ChatMessage[], options: ChatOptions = {}): Promise<string> {
    try {
      const res = await this.client.chat.completions.create(
        { model: this.settings.model, messages: wireMessages(messages), stream: false, ...requestParams(options) },
        { signal: options.signal },
      );
      return stripThink(res.choices?.[0]?.message?.content ?? '');
    } catch (err) {
      throw this.fail(err, options.signal);
    }
  }

  async verify(): Promise<void> {
    await this.complete([{ role: 'user', content: 'ping' }], { max_tokens: 1 });
  }
}

export class OpenAIEmbeddingModel extends OpenAICompatClient implements EmbeddingModel {
  async embed(texts: string[]): Promise<number[][]> {
    const batchSize = this.settings.batchSize ?? 32;
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      const batch = texts.slice(start, start + batchSize);
      let data: { index: number; embedding: number[] }[];
      try {
        const res = await this.client.embeddings.create({
          model: this.settings.model,
          input: batch,
          encoding_format: 'float',
        });
        data = res.data;
      } catch (err) {
        throw this.fail(err);
      }
      if (data.length !== batch.length) {
        const { provider } = this.settings;
        throw new ModelError(`${provider}: returned ${data.length} embeddings for ${batch.length} texts`, provider, 500);
      }
      vectors.push(...[...data].sort((a, b) => a.index - b.index).map((d) => l2normalize(d.embedding)));
    }
    return vectors;
  }

  async verify(): Promise<void> {
    await this.embed(['ping']);
  }
}
