import { builtinChatModel } from './builtin/chat-model.js';
import { builtinEmbeddingModel } from './builtin/embedding-model.js';
import { BUILTIN_EMBEDDING_SPECS, BUILTIN_FACTORY, SMOLLM2_135M_INSTRUCT, builtinChatSpecFor, builtinSpecFor } from './builtin/spec.js';
import type { Timeouts } from './http.js';
import { OllamaChatModel, OllamaEmbeddingModel } from './ollama.js';
import { OpenAIChatModel, OpenAIEmbeddingModel, type OpenAICompatSettings } from './openai-compat.js';
import { HttpRerankModel } from './rerank.js';
import { instrumentModel } from './call-metrics.js';
import { ModelError, type ChatModel, type EmbeddingModel, type RerankModel } from './types.js';

export type ModelType = 'chat' | 'embedding' | 'rerank';

export interface ModelConfig {
  /** Provider factory, e.g. 'OpenAI-API-Compatible', 'OpenAI', 'Ollama', 'Xinference', 'Builtin' (any case). */
  factory: string;
  model_name: string;
  model_type: ModelType;
  /** Provider URL: `{model_server_url}` for Ollama/Xinference, the API base (…/v1) for OpenAI-compatible. */
  base_url?: string;
  api_key?: string;
  /** Id the client reports (default `model_name@factory`). */
  id?: string;
  timeouts?: Partial<Timeouts>;
  /** The fetch the client calls with: the outbound-address policy's (services/outbound-urls.ts); default the global one. */
  fetch?: typeof fetch;
}

export type ProviderKind = 'openai' | 'ollama' | 'xinference' | 'builtin';

export interface FactoryInfo {
  name: string;
  types: readonly ModelType[];
  /** Used when the config has no base_url; factories without one require it. */
  defaultBaseUrl?: string;
}

const ALL: readonly ModelType[] = ['chat', 'embedding', 'rerank'];

const FACTORIES: readonly (FactoryInfo & { kind: ProviderKind })[] = [
  { name: 'OpenAI', kind: 'openai', types: ['chat', 'embedding'], defaultBaseUrl: 'https://api.openai.com/v1' },
  { name: 'OpenAI-API-Compatible', kind: 'openai', types: ALL },
  { name: 'VLLM', kind: 'openai', types: ALL },
  { name: 'LocalAI', kind: 'openai', types: ALL },
  { name: 'LM-Studio', kind: 'openai', types: ['chat', 'embedding'] },
  { name: 'DeepSeek', kind: 'openai', types: ['chat'], defaultBaseUrl: 'https://api.deepseek.com/v1' },
  { name: 'Ollama', kind: 'ollama', types: ['chat', 'embedding'] },
  { name: 'Xinference', kind: 'xinference', types: ALL },
  { name: BUILTIN_FACTORY, kind: 'builtin', types: ['chat', 'embedding'] },
];

/** The provider factories Cairn can talk to. */
export function listFactories(): FactoryInfo[] {
  return FACTORIES.map(({ name, types, defaultBaseUrl }) => ({ name, types, defaultBaseUrl }));
}

export function findFactory(name: string): (FactoryInfo & { kind: ProviderKind }) | undefined {
  return FACTORIES.find((f) => f.name.toLowerCase() === name.trim().toLowerCase());
}

const trimSlashes = (url: string) => url.trim().replace(/\/+$/, '');

/** OpenAI-compatible base: accepts `http://h:8000`, `…/v1` or `…/v1/rerank`; returns `…/v1`. */
export function openAIBaseUrl(url: string): string {
  const base = trimSlashes(url).replace(/\/rerank$/, '');
  return /\/v\d+[a-z0-9]*$/.test(base) ? base : `${base}/v1`;
}

/** Xinference: accepts `{model_server_url}`, `…/v1` or `…/v1/rerank`; returns the server root. */
export function xinferenceRoot(url: string): string {
  return trimSlashes(url).replace(/\/v1(\/rerank)?$/, '');
}

export function createModel(config: ModelConfig & { model_type: 'chat' }): ChatModel;
export function createModel(config: ModelConfig & { model_type: 'embedding' }): EmbeddingModel;
export function createModel(config: ModelConfig & { model_type: 'rerank' }): RerankModel;
export function createModel(config: ModelConfig): ChatModel | EmbeddingModel | RerankModel;
/**
 * Returns the client for a configured model. Nothing is contacted here: connection and model problems
 * surface as ModelErrors on the first call (or from the client's verify()). Every client is built here,
 * so this is where its calls get counted (call-metrics.ts).
 */
export function createModel(config: ModelConfig): ChatModel | EmbeddingModel | RerankModel {
  const client = buildModel(config);
  return instrumentModel(client, findFactory(config.factory)!.name, config.model_type);
}

function buildModel(config: ModelConfig): ChatModel | EmbeddingModel | RerankModel {
  const { model_name: model, model_type: type } = config;
  const factory = findFactory(config.factory);
  if (!factory) throw new ModelError(`Provider ${config.factory} not found for model ${model}.`, config.factory, 400);
  if (!factory.types.includes(type)) {
    throw new ModelError(`${factory.name}: ${type} models are not supported (model ${model})`, factory.name, 400);
  }
  const provider = factory.name;
  const id = config.id ?? `${model}@${provider}`;

  if (factory.kind === 'builtin') {
    const chat = type === 'chat' ? builtinChatSpecFor(model) : undefined;
    if (chat) return builtinChatModel(chat);
    const embedding = type === 'embedding' ? builtinSpecFor(model) : undefined;
    if (embedding) return builtinEmbeddingModel(embedding);
    const available = type === 'chat' ? SMOLLM2_135M_INSTRUCT.name : BUILTIN_EMBEDDING_SPECS.map((s) => s.name).join(', ');
    throw new ModelError(`${provider}: no built-in model '${model}' of type ${type} (available: ${available})`, provider, 400);
  }

  const baseUrl = config.base_url?.trim() || factory.defaultBaseUrl;
  if (!baseUrl) throw new ModelError(`${provider}: base_url is required for model ${model}`, provider, 400);
  const { api_key: apiKey, timeouts, fetch } = config;

  if (factory.kind === 'ollama') {
    const settings = { id, baseUrl, model, timeouts, fetch };
    return type === 'chat' ? new OllamaChatModel(settings) : new OllamaEmbeddingModel(settings);
  }

  const v1 = factory.kind === 'xinference' ? `${xinferenceRoot(baseUrl)}/v1` : openAIBaseUrl(baseUrl);
  if (type === 'rerank') return new HttpRerankModel({ id, provider, url: `${v1}/rerank`, model, apiKey, timeouts, fetch });
  const settings: OpenAICompatSettings = { id, provider, baseURL: v1, model, apiKey, timeouts, fetch };
  return type === 'chat' ? new OpenAIChatModel(settings) : new OpenAIEmbeddingModel(settings);
}
