import { availableParallelism } from 'node:os';
import { readSetting, type SettingsEnv } from '../../config-schema.js';
import type { ChatEngineSettings } from './chat-protocol.js';

/** The built-in models' settings (CAIRN_EMBED_*, CAIRN_CHAT_*), read by loadConfig into Config.builtinModels. */
export interface BuiltinModelSettings {
  /** ONNX Runtime threads of the embedding model. */
  embedThreads: number;
  /** The embedding model's process ends after this many seconds unused, giving its memory back. */
  embedIdleSec: number;
  /** Folder of the embedding models' files (CAIRN_EMBED_MODEL_DIR) instead of models/ and .venv. */
  embedModelDir?: string;
  /** The chat model's GGUF file (CAIRN_CHAT_MODEL_FILE) instead of the one in .venv. */
  chatModelFile?: string;
  /** The chat engine's context, sequences, threads and queue. */
  chat: ChatEngineSettings;
}

/** Default of CAIRN_EMBED_IDLE_SEC: long enough for a burst of queries, short enough for memory to come back within a minute. */
export const DEFAULT_EMBED_IDLE_SEC = 30;

/**
 * llama.cpp threads when not configured: 1 on up to 2 CPUs (there one thread decodes faster than two
 * and leaves a core to the API: see docs/builtin-chat-model.md), else half the CPUs, at most 4.
 */
export function defaultChatThreads(cpus = availableParallelism()): number {
  return cpus <= 2 ? 1 : Math.min(4, Math.floor(cpus / 2));
}

/** The settings in `env`, each read by its declared parser; defaults as the README states them. */
export function builtinModelSettingsFrom(env: SettingsEnv): BuiltinModelSettings {
  return {
    embedThreads: readSetting(env, 'CAIRN_EMBED_THREADS') ?? availableParallelism(),
    embedIdleSec: readSetting(env, 'CAIRN_EMBED_IDLE_SEC') ?? DEFAULT_EMBED_IDLE_SEC,
    embedModelDir: readSetting(env, 'CAIRN_EMBED_MODEL_DIR'),
    chatModelFile: readSetting(env, 'CAIRN_CHAT_MODEL_FILE'),
    chat: {
      contextSize: readSetting(env, 'CAIRN_CHAT_CONTEXT') ?? 4096,
      parallel: readSetting(env, 'CAIRN_CHAT_PARALLEL') ?? 2,
      threads: readSetting(env, 'CAIRN_CHAT_THREADS') ?? defaultChatThreads(),
      maxQueue: readSetting(env, 'CAIRN_CHAT_QUEUE') ?? 32,
    },
  };
}

let current = builtinModelSettingsFrom({});

/**
 * Sets the settings of this process's built-in models. The models are process-wide (one embedding process,
 * one chat thread per process), so their settings are too: openBackends sets them from its Config before
 * any model is built; a process that never calls it (a bench, a unit test) gets the defaults.
 */
export function useBuiltinModelSettings(settings: BuiltinModelSettings): void {
  current = settings;
}

/** The settings this process's built-in models use (see useBuiltinModelSettings). */
export function builtinModelSettings(): BuiltinModelSettings {
  return current;
}
