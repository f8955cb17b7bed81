/** Public surface of the model clients: import from here rather than from the individual modules. */
export * from './types.js';
export { parseModelId, formatModelId, InvalidModelIdError, MODEL_ID_MAX_LENGTH, type ModelId } from './model-id.js';
export {
  createModel,
  listFactories,
  findFactory,
  openAIBaseUrl,
  xinferenceRoot,
  type ModelConfig,
  type ModelType,
  type FactoryInfo,
} from './registry.js';
export {
  BUILTIN_EMBEDDING_MODEL_ID,
  BUILTIN_CHAT_MODEL_ID,
  BUILTIN_FACTORY,
  MINILM_L6_V2,
  BGE_SMALL_EN_V15,
  BUILTIN_EMBEDDING_SPECS,
  SMOLLM2_135M_INSTRUCT,
  builtinChatSpecFor,
  type BuiltinModelSpec,
  type BuiltinChatSpec,
} from './builtin/spec.js';
export { BuiltinEmbeddingModel, builtinEmbeddingModel } from './builtin/embedding-model.js';
export { BuiltinChatModel, builtinChatModel, builtinChatStatus, type BuiltinChatOptions } from './builtin/chat-model.js';
export type { ChatEngineSettings, ChatEngineStatus } from './builtin/chat-protocol.js';
export { locateModelFiles, locateChatModelFile, MODEL_DIR_ENV, CHAT_MODEL_FILE_ENV } from './builtin/locate.js';
export { OllamaServer, OllamaChatModel, OllamaEmbeddingModel } from './ollama.js';
export { OpenAIChatModel, OpenAIEmbeddingModel } from './openai-compat.js';
export { HttpRerankModel } from './rerank.js';
export type { Timeouts } from './http.js';
export { cosine, l2normalize } from './vector.js';
