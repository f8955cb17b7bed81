import { api } from './api/http.js';
import type { Model, ModelType } from './api/types.js';
import { useLoad } from './hooks.js';

/** Models the workspace can select, of one type. */
export function useModels(type: ModelType) {
  return useLoad((signal) => api.get<Model[]>('/models', { type }, signal), [type]);
}
