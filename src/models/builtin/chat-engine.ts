/**
 * The runtime of the built-in chat model: node-llama-cpp running a GGUF file on the CPU. It lives in
 * the chat worker thread (chat-worker.ts); nothing here runs on the API's event loop.
 *
 * - Loaded once, lazily, by the first request. A failed load is retried by the next
 *   request (e.g. after the file was installed).
 * - One llama.cpp context with `parallel` sequences: each running request owns one sequence (its own
 *   KV cache), so requests from different chats never see each other's tokens; the tokens of the
 *   running sequences are decoded together in one batch. Requests beyond `parallel` wait in a FIFO
 *   queue of at most `maxQueue` (then 503); a request cancelled while waiting leaves the queue at once.
 * - Memory is bounded: the weights (the mmap'd file) plus a KV cache of `contextSize` tokens per
 *   sequence, allocated when the model loads and never grown.
 */
import type { Llama, LlamaChat, LlamaContext, LlamaContextSequence, LlamaGrammar, LlamaModel } from 'node-llama-cpp';
import { ModelError, type TokenUsage } from '../types.js';
import { locateChatModelFile } from './locate.js';
import { initialStatus, type ChatEngineConfig, type ChatEngineState, type ChatEngineStatus, type GenerateRequest } from './chat-protocol.js';
import { BUILTIN_FACTORY } from './spec.js';
import { RepetitionGuard } from './repetition.js';

interface Slot {
  chat: LlamaChat;
  sequence: LlamaContextSequence;
}

interface Loaded {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
}

interface Waiter {
  resolve(slot: Slot): void;
  reject(err: unknown): void;
}

/** Compiled grammars kept per engine (a tool set or an output schema is usually asked for again and again). */
const GRAMMAR_CACHE_SIZE = 64;

/** Tokens per llama.cpp batch when evaluating a prompt. */
const BATCH_SIZE = 128;

let sharedLlama: Promise<Llama> | undefined;

/** The thread's llama.cpp binding (CPU only, the prebuilt binary; never builds or downloads). */
export function llamaRuntime(): Promise<Llama> {
  sharedLlama ??= (async () => {
    const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
    return getLlama({
      gpu: false,
      build: 'never',
      usePrebuiltBinaries: true,
      skipDownload: true,
      progressLogs: false,
      logLevel: LlamaLogLevel.error,
    });
  })().catch((err: unknown) => {
    sharedLlama = undefined;
    throw err;
  });
  return sharedLlama;
}

/** Frees the llama.cpp binding (needed before the thread ends: see chat-host.ts). */
export async function disposeLlamaRuntime(): Promise<void> {
  const llama = await sharedLlama?.catch(() => undefined);
  sharedLlama = undefined;
  await llama?.dispose();
}

export class ChatEngine {
  private loading: Promise<Loaded> | undefined;
  private loaded: Loaded | undefined;
  private file: string | undefined;
  private error: string | undefined;
  private readonly idle: Slot[] = [];
  private readonly waiting: Waiter[] = [];
  private active = 0;
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  /** `onChange` is told whenever the status changes (load, requests starting, waiting, ending). */
  constructor(
    readonly config: ChatEngineConfig,
    private readonly onChange: (status: ChatEngineStatus) => void = () => {},
  ) {
    this.file = config.file;
  }

  get state(): ChatEngineState {
    if (this.loaded) return 'loaded';
    if (this.loading) return 'loading';
    return this.error ? 'failed' : 'not_loaded';
  }

  status(): ChatEngineStatus {
    const status: ChatEngineStatus = {
      ...initialStatus(this.config),
      state: this.state,
      memory_bytes: this.loaded ? this.loaded.model.size + this.loaded.context.memoryUsage.ram : 0,
      active: this.active,
      queued: this.waiting.length,
    };
    if (this.loaded) status.context_size = this.loaded.context.contextSize;
    if (this.file) status.file = this.file;
    if (this.error && !this.loaded) status.error = this.error;
    return status;
  }

  private changed(): void {
    this.onChange(this.status());
  }

  /** Loads the model and its context (once; concurrent callers share the load). */
  load(): Promise<Loaded> {
    if (!this.loading) {
      this.loading = this.doLoad().then(
        (loaded) => {
          this.loaded = loaded;
          this.error = undefined;
          this.changed();
          return loaded;
        },
        (err: unknown) => {
          this.loading = undefined;
          this.error = (err as Error).message;
          this.changed();
          throw err instanceof ModelError ? err : new ModelError(`${BUILTIN_FACTORY}: loading ${this.config.spec.name} failed: ${this.error}`, BUILTIN_FACTORY, 500);
        },
      );
      this.changed();
    }
    return this.loading;
  }

  private async doLoad(): Promise<Loaded> {
    const { spec, contextSize, parallel, threads } = this.config;
    const file = (this.file ??= locateChatModelFile(spec));
    const llama = await llamaRuntime();
    const { JinjaTemplateChatWrapper, LlamaChat, resolveChatWrapper } = await import('node-llama-cpp');
    const model = await llama.loadModel({ modelPath: file, gpuLayers: 0 });
    try {
      // Prompts are evaluated 128 tokens at a time: as fast as 512 here, and the logits buffer
      // (vocabulary x batch floats) is 25 MB instead of 100 MB.
      const context = await model.createContext({ contextSize, sequences: parallel, threads, batchSize: Math.min(BATCH_SIZE, contextSize) });
      // The model's own chat template (the Jinja template in the GGUF), rendered as is. node-llama-cpp's
      // "equivalent" ChatML wrapper would add a BOS token (<|im_start|> for SmolLM2) the template has not.
      const template = model.fileInfo.metadata.tokenizer?.chat_template;
      const chatWrapper = template ? new JinjaTemplateChatWrapper({ template, tokenizer: model.tokenizer }) : resolveChatWrapper(model);
      for (let i = 0; i < parallel; i++) {
        const sequence = context.getSequence();
        this.idle.push({ sequence, chat: new LlamaChat({ contextSequence: sequence, chatWrapper }) });
      }
      return { llama, model, context };
    } catch (err) {
      await model.dispose();
      throw err;
    }
  }

  /**
   * Generates one reply: waits for a free sequence (loading the model first if needed), streams text
   * through `onChunk`, resolves with the whole reply and token counts. Rejects with the abort reason
   * as soon as `signal` aborts, queued or generating; the sequence is free again when it settles.
   */
  async generate(request: GenerateRequest, onChunk: (kind: 'answer' | 'reasoning', text: string) => void, signal: AbortSignal): Promise<{ text: string; usage: TokenUsage }> {
    const { llama, slot, release } = await this.acquire(signal);
    try {
      const grammar = request.schema ? await this.grammar(llama, request.schema) : undefined;
      const { sequence } = slot;
      const outputBefore = sequence.tokenMeter.usedOutputTokens;
      const { customStopTriggers, ...sampling } = request.sampling;
      // A generation that loops is stopped where the loop is seen, keeping what it generated. Not under a
      // caller's structured output: cut short, its JSON would not close; the schema's bounds end it instead.
      const guard = new RepetitionGuard();
      const looping = new AbortController();
      const response = await slot.chat.generateResponse(request.history, {
        ...sampling,
        // Stop strings apply to free text; a grammar's JSON ends where the grammar says.
        ...(grammar ? { grammar } : customStopTriggers?.length ? { customStopTriggers } : {}),
        signal: AbortSignal.any([signal, looping.signal]),
        stopOnAbortSignal: true,
        onResponseChunk: (chunk) => {
          if (!chunk.text || looping.signal.aborted) return;
          if (chunk.type === 'segment') {
            if (chunk.segmentType === 'thought') onChunk('reasoning', chunk.text);
          } else {
            onChunk('answer', chunk.text);
          }
          if (!request.structured && guard.push(chunk.text)) looping.abort();
        },
      });
      // The caller's abort ends the request with its reason (the generation above stopped at once).
      signal.throwIfAborted();
      const completion = sequence.tokenMeter.usedOutputTokens - outputBefore;
      return { text: response.response, usage: { prompt_tokens: Math.max(0, sequence.nextTokenIndex - completion), completion_tokens: completion } };
    } finally {
      release();
    }
  }

  private async acquire(signal: AbortSignal): Promise<{ llama: Llama; slot: Slot; release: () => void }> {
    signal.throwIfAborted();
    const loaded = await abortable(this.load(), signal);
    const slot = this.idle.pop() ?? (await this.enqueue(signal));
    this.active++;
    this.changed();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.active--;
      const next = this.waiting.shift();
      if (next) next.resolve(slot);
      else this.idle.push(slot);
      this.changed();
    };
    return { llama: loaded.llama, slot, release };
  }

  private enqueue(signal: AbortSignal): Promise<Slot> {
    if (this.waiting.length >= this.config.maxQueue) {
      throw new ModelError(
        `${BUILTIN_FACTORY}: ${this.config.spec.name} is busy (${this.active} answering, ${this.waiting.length} waiting); try again later`,
        BUILTIN_FACTORY,
        503,
      );
    }
    return new Promise<Slot>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        this.changed();
        reject(signal.reason);
      };
      const waiter: Waiter = {
        resolve: (slot) => {
          signal.removeEventListener('abort', onAbort);
          resolve(slot);
        },
        reject,
      };
      this.waiting.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
      this.changed();
    });
  }

  private grammar(llama: Llama, schema: Record<string, unknown>): Promise<LlamaGrammar> {
    const key = JSON.stringify(schema);
    let grammar = this.grammars.get(key);
    if (!grammar) {
      grammar = compactGrammar(llama, schema).catch((err: unknown) => {
        this.grammars.delete(key);
        throw new ModelError(`${BUILTIN_FACTORY}: the JSON schema cannot be used for constrained output: ${(err as Error).message}`, BUILTIN_FACTORY, 400);
      });
      if (this.grammars.size >= GRAMMAR_CACHE_SIZE) this.grammars.delete(this.grammars.keys().next().value!);
      this.grammars.set(key, grammar);
    }
    return grammar;
  }

  /** Frees the context and the model; the next request loads them again. */
  async dispose(): Promise<void> {
    const loading = this.loading;
    this.loading = undefined;
    this.loaded = undefined;
    this.idle.length = 0;
    this.grammars.clear();
    for (const w of this.waiting.splice(0)) w.reject(new ModelError(`${BUILTIN_FACTORY}: the model was unloaded`, BUILTIN_FACTORY, 503));
    const loaded = await loading?.catch(() => undefined);
    if (loaded) {
      await loaded.context.dispose();
      await loaded.model.dispose();
    }
    this.changed();
  }
}

/**
 * A grammar for JSON matching the schema, on one line: node-llama-cpp's JSON-schema grammar also
 * allows pretty-printing (a newline and indentation at every nesting level), which costs a small model
 * tokens and lets it drift; its whitespace rules are narrowed to an optional space.
 */
async function compactGrammar(llama: Llama, schema: Record<string, unknown>): Promise<LlamaGrammar> {
  const pretty = await llama.createGrammarForJsonSchema(schema as never);
  const grammar = pretty.grammar.replace(/\[\\n\] \([^()]*\) \| \[ \]\?/g, '[ ]?').replace(/\[\\n\] \| \[ \]\?/g, '[ ]?');
  if (grammar === pretty.grammar) return pretty;
  return llama.createGrammar({ grammar, stopGenerationTriggers: ['\n\n\n\n'], trimWhitespaceSuffix: true });
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
