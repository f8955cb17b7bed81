import type { ChatHistoryItem } from 'node-llama-cpp';
import { ModelError, type ChatDelta, type ChatMessage, type ChatModel, type ChatOptions, type TokenUsage } from '../types.js';
import { AnswerStreamer, parseToolReply, toGrammarSchema, toolCallsText, toolInstructions, toolReplySchema, toolsLeft } from './chat-json.js';
import { chatWorkerStatus, generateInWorker } from './chat-host.js';
import { DEFAULT_ANSWER_TOKENS, REPEAT_PENALTY, type ChatEngineConfig, type ChatEngineSettings, type ChatEngineStatus, type GenerateRequest, type Sampling } from './chat-protocol.js';
import { BUILTIN_FACTORY, SMOLLM2_135M_INSTRUCT, type BuiltinChatSpec } from './spec.js';
import { locateChatModelFile } from './locate.js';
import { builtinModelSettings } from './settings.js';

export interface BuiltinChatOptions {
  spec?: BuiltinChatSpec;
  /** The GGUF file; default: the configured one (CAIRN_CHAT_MODEL_FILE), else located when the model loads (see locateChatModelFile). */
  file?: string;
  /** Overrides of the configured settings (Config.builtinModels.chat). */
  settings?: Partial<ChatEngineSettings>;
}

/**
 * The built-in, offline chat model (SmolLM2-135M-Instruct run by node-llama-cpp in a worker thread,
 * see chat-engine.ts): streams tokens, honours temperature, top_p, presence/frequency penalties,
 * max_tokens (default DEFAULT_ANSWER_TOKENS), stop and seed, applies the model's chat template, and
 * stops generating as soon as the caller's signal aborts or the caller stops reading. Every generation
 * has a repetition penalty (REPEAT_PENALTY) and stops when it falls into a loop (repetition.ts).
 *
 * Structured output: `json_schema` is compiled to a grammar, so the answer is JSON matching it.
 * Tools: the reply is constrained to `{"tool_calls": [{"name", "arguments"}]}` or `{"answer": "..."}`;
 * a call arrives as one `tool_calls` delta (ids generated), an answer streams as answer text. Within
 * one user turn each tool is called at most once (then only an answer is allowed): see toolsLeft.
 * Every stream ends with a `usage` delta.
 */
export class BuiltinChatModel implements ChatModel {
  readonly id: string;
  readonly config: ChatEngineConfig;

  constructor(options: BuiltinChatOptions = {}) {
    const spec = options.spec ?? SMOLLM2_135M_INSTRUCT;
    const configured = builtinModelSettings();
    this.config = { spec, ...configured.chat, ...options.settings };
    const file = options.file ?? configured.chatModelFile;
    if (file) this.config.file = file;
    this.id = `${spec.name}@${BUILTIN_FACTORY}`;
  }

  /** Loaded or not, memory, requests running and waiting (as last reported by the worker). */
  status(): ChatEngineStatus {
    return chatWorkerStatus(this.config);
  }

  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<ChatDelta> {
    const { signal } = options;
    signal?.throwIfAborted();
    const tools = options.tools?.length ? options.tools : undefined;
    const request = this.request(messages, options);
    const sink = new Sink();
    const streamer = tools ? new AnswerStreamer() : undefined;
    const cancel = generateInWorker(this.config, request, {
      chunk: (kind, text) => {
        const visible = kind === 'answer' && streamer ? streamer.push(text) : text;
        if (visible) sink.push({ kind, text: visible });
      },
      done: (text, usage) => sink.end({ text, usage }),
      error: (err) => sink.fail(err),
    });
    const onAbort = () => {
      cancel();
      sink.fail(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const delta of sink) yield delta;
      const { text, usage } = sink.result!;
      if (tools) yield* this.toolReply(text, streamer!.emitted, tools.map((t) => t.name));
      yield { kind: 'usage', text: '', usage };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // The caller stopped reading (or aborted): the worker stops generating and frees the sequence.
      cancel();
    }
  }

  /** The whole answer (reasoning dropped; with tools, the text of a direct answer). */
  async complete(messages: ChatMessage[], options: ChatOptions = {}): Promise<string> {
    let text = '';
    for await (const d of this.stream(messages, options)) if (d.kind === 'answer') text += d.text;
    return text;
  }

  /** Loads the model (if needed) and generates one token; a missing model file fails here. */
  async verify(): Promise<void> {
    await this.complete([{ role: 'user', content: 'ping' }], { max_tokens: 1, temperature: 0 });
  }

  private *toolReply(text: string, streamed: string, toolNames: string[]): Iterable<ChatDelta> {
    const reply = parseToolReply(text, toolNames);
    if (reply?.kind === 'tool_calls') {
      yield { kind: 'tool_calls', text: '', calls: reply.calls };
    } else if (reply?.kind === 'answer') {
      if (reply.text.startsWith(streamed) && reply.text.length > streamed.length) yield { kind: 'answer', text: reply.text.slice(streamed.length) };
    } else if (!streamed) {
      throw new ModelError(
        `${BUILTIN_FACTORY}: ${this.config.spec.name} did not finish its tool-call reply within max_tokens: ${text.slice(0, 200)}`,
        BUILTIN_FACTORY,
        500,
      );
    }
  }

  private request(messages: ChatMessage[], options: ChatOptions): GenerateRequest {
    // A text-only model: showing it nothing of the images would answer as if they were not there.
    if (messages.some((m) => m.images?.length)) {
      throw new ModelError(`The built-in chat model ${this.id} reads text only, and this prompt carries images: choose a vision model (a provider's) for it`, BUILTIN_FACTORY);
    }
    const tools = options.tools?.length ? options.tools : undefined;
    const maxTokens = Math.max(1, Math.min(options.max_tokens ?? DEFAULT_ANSWER_TOKENS, this.config.contextSize));
    const sampling: Sampling = { maxTokens, temperature: Math.max(0, options.temperature ?? 0) };
    if (options.top_p !== undefined && options.top_p !== null) sampling.topP = options.top_p;
    if (options.seed !== undefined && options.seed !== null) sampling.seed = options.seed;
    // The repetition penalty always applies; the caller's presence and frequency penalties add to it as given.
    sampling.repeatPenalty = { ...REPEAT_PENALTY, presencePenalty: options.presence_penalty ?? 0, frequencyPenalty: options.frequency_penalty ?? 0 };
    if (options.stop?.length) sampling.customStopTriggers = options.stop.filter((s) => s.length > 0);
    const request: GenerateRequest = { history: chatHistory(messages, this.config.spec, tools ? toolInstructions(tools) : undefined), sampling };
    if (tools) request.schema = toolReplySchema(toolsLeft(tools, messages));
    else if (options.json_schema) {
      request.schema = toGrammarSchema(options.json_schema);
      request.structured = true;
    }
    return request;
  }
}

/** Said after the last tool result when tools are offered (see also toolsLeft). */
export const TOOL_RESULT_NUDGE = 'Answer the question with this result.';

/**
 * Cairn's messages as node-llama-cpp's chat history, which the model's chat template renders. Tool
 * traffic is rendered in the reply format the model is constrained to: its calls as the JSON it
 * produced, each result as a user turn naming the tool. System messages are joined into one; without
 * any, the template's default system prompt is used.
 */
export function chatHistory(messages: ChatMessage[], spec: BuiltinChatSpec, toolPrompt?: string): ChatHistoryItem[] {
  const systems = messages.filter((m) => m.role === 'system').map((m) => m.content.trim()).filter(Boolean);
  const system = [systems.length ? systems.join('\n\n') : spec.defaultSystemPrompt, toolPrompt].filter(Boolean).join('\n\n');
  const items: ChatHistoryItem[] = [{ type: 'system', text: system }];
  const names = new Map<string, string>();
  messages.forEach((m, i) => {
    if (m.role === 'system') return;
    if (m.role === 'user') {
      items.push({ type: 'user', text: m.content });
    } else if (m.role === 'assistant') {
      for (const c of m.tool_calls ?? []) names.set(c.id, c.name);
      items.push({ type: 'model', response: [m.tool_calls?.length ? toolCallsText(m.tool_calls) : m.content] });
    } else {
      const name = (m.tool_call_id && names.get(m.tool_call_id)) || 'the tool';
      // After the last result, the model is reminded to answer from it (else a small model calls again).
      const last = toolPrompt && i === messages.length - 1 ? `\n\n${TOOL_RESULT_NUDGE}` : '';
      items.push({ type: 'user', text: `Result of ${name}:\n${m.content}${last}` });
    }
  });
  return items;
}

/** Deltas pushed by the worker's messages and read by the stream's consumer. */
class Sink implements AsyncIterable<ChatDelta> {
  private readonly items: ChatDelta[] = [];
  private wake: (() => void) | undefined;
  private error: { err: unknown } | undefined;
  private done = false;
  result: { text: string; usage: TokenUsage } | undefined;

  push(delta: ChatDelta): void {
    if (this.done) return;
    this.items.push(delta);
    this.notify();
  }

  end(result: { text: string; usage: TokenUsage }): void {
    if (this.done) return;
    this.result = result;
    this.done = true;
    this.notify();
  }

  fail(err: unknown): void {
    if (this.done) return;
    this.error = { err };
    this.done = true;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ChatDelta> {
    for (;;) {
      if (this.items.length) {
        yield this.items.shift()!;
        continue;
      }
      if (this.error) throw this.error.err;
      if (this.done) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

const shared = new Map<string, BuiltinChatModel>();

/** The process-wide instance of a built-in chat model. */
export function builtinChatModel(spec: BuiltinChatSpec = SMOLLM2_135M_INSTRUCT): BuiltinChatModel {
  let model = shared.get(spec.name);
  if (!model) {
    model = new BuiltinChatModel({ spec });
    shared.set(spec.name, model);
  }
  return model;
}

/**
 * The health check of the built-in chat model, without loading it: its file must be where the model loads
 * it from, and its last load must not have failed. Throws naming what is wrong.
 */
export async function checkBuiltinChat(spec: BuiltinChatSpec = SMOLLM2_135M_INSTRUCT, file = builtinModelSettings().chatModelFile): Promise<void> {
  locateChatModelFile(spec, file);
  const status = builtinChatStatus(spec);
  if (status.state === 'failed') throw new Error(`${spec.name} failed to load: ${status.error ?? 'no reason given'}`);
}

/** Status of the process-wide built-in chat model, without loading it (for healthz). */
export function builtinChatStatus(spec: BuiltinChatSpec = SMOLLM2_135M_INSTRUCT): ChatEngineStatus {
  return builtinChatModel(spec).status();
}
