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
}

/**
 * The SDK keeps only the `error` field of an error body, but FastAPI-based servers (Xinference, vLLM)
 * answer `{"detail": ...}`; rewriting error bodies to the OpenAI shape keeps their message.
 */
const fetchKeepingErrorDetail: typeof fetch = async (input, init) => {
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
      fetch: fetchKeepingErrorDetail,
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

/** Reasoning arrives as `reasoning_content` (DeepSeek, vLLM, Xinference) or `reasoning` (newer vLLM, Ollama). */
interface ReasoningDelta {
  content?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
}

export class OpenAIChatModel extends OpenAICompatClient implements ChatModel {
  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<ChatDelta> {
    const deadline = new Deadline(options.signal);
    try {
      const stream = await this.client.chat.completions.create(
        { model: this.settings.model, messages, stream: true, ...samplingParams(options) },
        { signal: deadline.signal },
      );
      const splitter = new ThinkSplitter();
      for await (const chunk of guardIdle(stream, deadline, this.timeouts.idleMs)) {
        const delta = chunk.choices?.[0]?.delta as ReasoningDelta | undefined;
        const reasoning = delta?.reasoning_content ?? delta?.reasoning;
        if (reasoning) yield { kind: 'reasoning', text: reasoning };
        if (delta?.content) yield* splitter.push(delta.content);
      }
      // The SDK ends a stream quietly when its signal aborts; a timeout or cancel must not look complete.
      if (deadline.signal.aborted) throw new Error('stream aborted');
      yield* splitter.end();
    } catch (err) {
      throw this.fail(err, options.signal, deadline.fired);
    } finally {
      deadline.dispose();
      deadline.controller.abort();
    }
  }

  async complete(messages: ChatMessage[], options: ChatOptions = {}): Promise<string> {
    try {
      const res = await this.client.chat.completions.create(
        { model: this.settings.model, messages, stream: false, ...samplingParams(options) },
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
