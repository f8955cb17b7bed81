/**
 * What the API thread and the built-in chat model's worker thread share: settings, the status
 * reported in healthz, and the messages between them. No node-llama-cpp at runtime here.
 */
import type { ChatHistoryItem } from 'node-llama-cpp';
import type { TokenUsage } from '../types.js';
import { BUILTIN_FACTORY, type BuiltinChatSpec } from './spec.js';

export interface ChatEngineSettings {
  /** Tokens of context per sequence (prompt + answer). */
  contextSize: number;
  /** Sequences decoded together: how many requests generate at the same time. */
  parallel: number;
  /** CPU threads of llama.cpp. */
  threads: number;
  /** Requests that may wait for a free sequence; more get a 503. */
  maxQueue: number;
}

export interface ChatEngineConfig extends ChatEngineSettings {
  spec: BuiltinChatSpec;
  /** The GGUF file; located with locateChatModelFile() when the model loads, when omitted. */
  file?: string;
}

/** Room kept for an answer when a prompt is cut to fit the context (see promptBudget). */
export const DEFAULT_MAX_TOKENS = 1024;

/**
 * Answer length when a request sets no max_tokens: the default `max_token` of a chat (spec), for agents
 * too. SmolLM2-135M's useful answers are short (its tokens/s: bench/llm/run.ts).
 */
export const DEFAULT_ANSWER_TOKENS = 512;

/**
 * node-llama-cpp's repetition penalty, applied to every generation (node-llama-cpp applies none by
 * default): each token among the last 64 generated is made this much less likely. Tried by hand on an agent's
 * answer round (a question and two passages, temperature 0.2, a few seeds; no bench repeats it): without it
 * the answers repeated a sentence until max_tokens; with 1.1 they did not. 1.3 broke the answers ("1" for "999").
 */
export const REPEAT_PENALTY = { penalty: 1.1, lastTokens: 64 } as const;

/**
 * Tokens a prompt may use so that an answer still fits in the context: the context less room for
 * the answer (a quarter of the context, at most DEFAULT_MAX_TOKENS). Chat history is cut to fit it.
 */
export function promptBudget(settings: Pick<ChatEngineSettings, 'contextSize'>): number {
  return settings.contextSize - Math.min(DEFAULT_MAX_TOKENS, Math.floor(settings.contextSize / 4));
}

export type ChatEngineState = 'not_loaded' | 'loading' | 'loaded' | 'failed';

/** What healthz reports about the built-in chat model. */
export interface ChatEngineStatus {
  model: string;
  state: ChatEngineState;
  /** The GGUF file, once located. */
  file?: string;
  /** Weights plus the context's KV cache and compute buffers (0 until loaded). */
  memory_bytes: number;
  /** Tokens of context per sequence. */
  context_size: number;
  parallel: number;
  threads: number;
  /** Requests generating now / waiting for a sequence. */
  active: number;
  queued: number;
  /** Why the last load failed. */
  error?: string;
}

export function initialStatus(config: ChatEngineConfig): ChatEngineStatus {
  return {
    model: `${config.spec.name}@${BUILTIN_FACTORY}`,
    state: 'not_loaded',
    memory_bytes: 0,
    context_size: config.contextSize,
    parallel: config.parallel,
    threads: config.threads,
    active: 0,
    queued: 0,
  };
}

/** Sampling and length settings of one generation, in node-llama-cpp's terms. */
export interface Sampling {
  maxTokens: number;
  temperature: number;
  topP?: number;
  seed?: number;
  repeatPenalty?: { penalty: number; lastTokens: number; presencePenalty: number; frequencyPenalty: number };
  customStopTriggers?: string[];
}

export interface GenerateRequest {
  history: ChatHistoryItem[];
  sampling: Sampling;
  /** Constrain the reply to JSON matching this schema (already in node-llama-cpp's subset). */
  schema?: Record<string, unknown>;
  /**
   * The caller's structured output (json_schema): its bounds end it, and cut short by the loop stop its JSON
   * would not close. A tool reply's schema (an answer as free text inside JSON) keeps the loop stop.
   */
  structured?: boolean;
}

export type ToWorker =
  | { type: 'generate'; id: number; config: ChatEngineConfig; request: GenerateRequest }
  | { type: 'cancel'; id: number }
  | { type: 'dispose' };

export type FromWorker =
  | { type: 'chunk'; id: number; kind: 'answer' | 'reasoning'; text: string }
  | { type: 'done'; id: number; text: string; usage: TokenUsage }
  | { type: 'error'; id: number; message: string; status: number }
  | { type: 'status'; key: string; status: ChatEngineStatus }
  | { type: 'disposed' };

/** Engines are keyed by their configuration (one per distinct configuration in the worker). */
export function configKey(config: ChatEngineConfig): string {
  return JSON.stringify([config.spec.name, config.file ?? null, config.contextSize, config.parallel, config.threads, config.maxQueue]);
}
