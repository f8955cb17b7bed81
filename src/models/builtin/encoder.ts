import { readFile } from 'node:fs/promises';
import { Tokenizer } from '@huggingface/tokenizers';
import ort from 'onnxruntime-node';
import type { ModelFiles } from './locate.js';
import { poolAndNormalize } from './pooling.js';
import type { BuiltinModelSpec } from './spec.js';

export interface EncoderOptions {
  files: ModelFiles;
  spec: BuiltinModelSpec;
  /** ONNX Runtime intra-op threads. */
  threads: number;
}

/** BERT-style tokenizer settings; tokenizer.json alone lacks the special-token names. */
export const TOKENIZER_CONFIG = {
  do_lower_case: true,
  cls_token: '[CLS]',
  sep_token: '[SEP]',
  pad_token: '[PAD]',
  unk_token: '[UNK]',
  mask_token: '[MASK]',
  model_max_length: 512,
};

/** Token ids of a text, with [CLS] and [SEP], not truncated. */
export interface TextTokenizer {
  encode(text: string): number[];
}

/**
 * The tokenizer of tokenizer.json. @huggingface/tokenizers is transformers.js's tokenizer code on its own:
 * the same ids (test/unit/models/tokenizer.test.ts) without the rest of transformers.js, which loads
 * sharp's libvips for its image code (docs/operations.md, "Other choices, measured").
 */
export async function loadTokenizer(path: string): Promise<TextTokenizer> {
  const tokenizer = new Tokenizer(JSON.parse(await readFile(path, 'utf8')), TOKENIZER_CONFIG);
  return { encode: (text) => tokenizer.encode(text).ids };
}

/**
 * Tokenizes texts and runs a sentence-embedding ONNX model on batches of them, in the calling thread.
 * Meant to live inside the embedding process (see embedding-process.ts).
 */
export class SentenceEncoder {
  private constructor(
    private readonly tokenizer: TextTokenizer,
    private readonly session: ort.InferenceSession,
    readonly spec: BuiltinModelSpec,
  ) {}

  static async load(options: EncoderOptions): Promise<SentenceEncoder> {
    const tokenizer = await loadTokenizer(options.files.tokenizer);
    const session = await ort.InferenceSession.create(options.files.onnx, {
      intraOpNumThreads: options.threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      // ONNX Runtime's CPU arena keeps the largest working set any batch needed until the session
      // is released; without it, tensors go back to malloc
      // after each run at no measurable cost in speed (docs/operations.md, "Memory").
      enableCpuMemArena: false,
      logSeverityLevel: 3,
      // Spinning threads would burn the CPU the API's event loop needs between batches.
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    });
    return new SentenceEncoder(tokenizer, session, options.spec);
  }

  /** Token ids with [CLS]/[SEP], truncated to the model's maximum length. */
  tokenize(text: string): number[] {
    const { maxTokens } = this.spec;
    // A token spans at least one character, so a generous character cap bounds the work on huge inputs.
    const ids = this.tokenizer.encode(text.slice(0, maxTokens * 32));
    if (ids.length <= maxTokens) return ids;
    return [...ids.slice(0, maxTokens - 1), ids[ids.length - 1]!];
  }

  /** Runs one padded batch; returns batch.length * dims floats, one unit vector per row. */
  async embedBatch(batch: number[][]): Promise<Float32Array> {
    const { dims, pooling } = this.spec;
    const seq = Math.max(...batch.map((ids) => ids.length));
    const ids = new BigInt64Array(batch.length * seq);
    const mask = new BigInt64Array(batch.length * seq);
    batch.forEach((row, b) =>
      row.forEach((id, t) => {
        ids[b * seq + t] = BigInt(id);
        mask[b * seq + t] = 1n;
      }),
    );
    const shape = [batch.length, seq];
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', ids, shape),
      attention_mask: new ort.Tensor('int64', mask, shape),
    };
    if (this.session.inputNames.includes('token_type_ids')) {
      feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(ids.length), shape);
    }
    const result = await this.session.run(feeds);
    try {
      const hidden = result[this.session.outputNames[0]!]!;
      return poolAndNormalize(hidden.data as Float32Array, mask, batch.length, seq, dims, pooling);
    } finally {
      for (const t of Object.values(result)) t.dispose();
    }
  }
}
