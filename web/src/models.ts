import { api } from './api/http.js';
import type { Dsl, Model, ModelType } from './api/types.js';
import { useLoad } from './hooks.js';

/** Models the workspace can select, of one type. */
export function useModels(type: ModelType) {
  return useLoad((signal) => api.get<Model[]>('/models', { type }, signal), [type]);
}

/** The workspace's default models (the built-in chat model until one is chosen). */
export function useDefaultModels() {
  return useLoad((signal) => api.get<{ chat_model: string | null }>('/models/default', undefined, signal), []);
}

/** Cairn's built-in models end in `@Builtin`. */
export function isBuiltinModel(modelId: string): boolean {
  return modelId.endsWith('@Builtin');
}

/** The chat models an agent's LLM and Agent components run on (an empty llm_id: the workspace default), each once. */
export function agentModels(dsl: Dsl, defaultModel: string): string[] {
  const ids = Object.values(dsl.components ?? {})
    .filter((c) => c.obj.component_name === 'LLM' || c.obj.component_name === 'Agent')
    .map((c) => (typeof c.obj.params.llm_id === 'string' && c.obj.params.llm_id.trim() ? c.obj.params.llm_id : defaultModel));
  return [...new Set(ids)];
}
