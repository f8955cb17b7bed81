/** The built-in, offline embedding model: the default embedding_model of every dataset. */
export { BUILTIN_EMBEDDING_MODEL_ID as BUILTIN_EMBEDDING_MODEL } from '../models/builtin/spec.js';
/** The built-in, offline chat model: the default chat model of a tenant that has not chosen one. */
export { BUILTIN_CHAT_MODEL_ID as BUILTIN_CHAT_MODEL } from '../models/builtin/spec.js';

/** Which models a tenant may use. Implemented by the providers service. */
export interface ModelCatalog {
  defaultEmbeddingModel(tenantId: string): Promise<string>;
  /** Returns the canonical id of a usable embedding model, or throws a 400 naming the problem. */
  checkEmbeddingModel(tenantId: string, modelId: string): Promise<string>;
}
