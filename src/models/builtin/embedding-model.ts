import { ModelError, type EmbeddingModel, type EmbedPurpose } from '../types.js';
import { embedInProcess } from './host.js';
import { locateModelFiles, type ModelFiles } from './locate.js';
import { BGE_SMALL_EN_V15, BUILTIN_FACTORY, type BuiltinModelSpec } from './spec.js';
import type { EncoderConfig } from './embedding-process.js';
import { builtinModelSettings } from './settings.js';

export interface BuiltinEmbeddingOptions {
  spec?: BuiltinModelSpec;
  /** Model files; located with locateModelFiles() on first use when omitted. */
  files?: ModelFiles;
  /** Texts per ONNX run (default 32). */
  batchSize?: number;
  /** Padded tokens per ONNX run (default 1024): bounds how long a query waits behind a running batch. */
  batchTokens?: number;
  /** Texts of waiting requests sorted together by length to form batches (default 256). */
  batchWindow?: number;
  /** ONNX Runtime threads (default: the configured CAIRN_EMBED_THREADS). */
  threads?: number;
  /** Seconds without a request after which the model's process ends (default: the configured CAIRN_EMBED_IDLE_SEC). */
  idleSec?: number;
}

/**
 * The built-in, offline embedding model. Inference runs in a child process (see host.ts) so the API's
 * event loop never stalls; the process starts on first use and ends after `idleSec` without use.
 */
export class BuiltinEmbeddingModel implements EmbeddingModel {
  readonly id: string;
  readonly dims: number;
  private readonly spec: BuiltinModelSpec;
  private config: EncoderConfig | undefined;

  constructor(private readonly options: BuiltinEmbeddingOptions = {}) {
    this.spec = options.spec ?? BGE_SMALL_EN_V15;
    this.id = `${this.spec.name}@${BUILTIN_FACTORY}`;
    this.dims = this.spec.dims;
  }

  async embed(texts: string[], purpose: EmbedPurpose = 'passage'): Promise<number[][]> {
    if (texts.length === 0) return [];
    const { queryPrefix } = this.spec;
    const inputs = purpose === 'query' && queryPrefix ? texts.map((t) => queryPrefix + t) : texts;
    let flat: Float32Array;
    try {
      flat = await embedInProcess(this.encoderConfig(), inputs);
    } catch (err) {
      if (err instanceof ModelError) throw err;
      throw new ModelError(`${BUILTIN_FACTORY}: ${(err as Error).message}`, BUILTIN_FACTORY, 500);
    }
    const vectors: number[][] = [];
    for (let i = 0; i < texts.length; i++) vectors.push(Array.from(flat.subarray(i * this.dims, (i + 1) * this.dims)));
    return vectors;
  }

  async verify(): Promise<void> {
    await this.embed(['ping']);
  }

  private encoderConfig(): EncoderConfig {
    this.config ??= {
      files: this.options.files ?? locateModelFiles(this.spec, builtinModelSettings().embedModelDir),
      spec: this.spec,
      threads: this.options.threads ?? builtinModelSettings().embedThreads,
      limits: { maxTexts: this.options.batchSize ?? 32, maxTokens: this.options.batchTokens ?? 1024, window: this.options.batchWindow ?? 256 },
      idleSec: this.options.idleSec ?? builtinModelSettings().embedIdleSec,
    };
    return this.config;
  }
}

const shared = new Map<string, BuiltinEmbeddingModel>();

/** The process-wide instance of a built-in model. */
export function builtinEmbeddingModel(spec: BuiltinModelSpec = BGE_SMALL_EN_V15): BuiltinEmbeddingModel {
  let model = shared.get(spec.name);
  if (!model) {
    model = new BuiltinEmbeddingModel({ spec });
    shared.set(spec.name, model);
  }
  return model;
}
