/**
 * The ceiling of ingestion on this machine: how fast the built-in embedding model alone embeds the very
 * texts the run embedded (every chunk's text and every document title), with nothing else running in
 * Cairn. End-to-end chunks/s is compared with this figure.
 */
import { BuiltinEmbeddingModel } from '../../src/models/builtin/embedding-model.js';
import { loadTokenizer } from '../../src/models/builtin/encoder.js';
import { embeddingProcessStatus } from '../../src/models/builtin/host.js';
import { locateModelFiles } from '../../src/models/builtin/locate.js';
import { BGE_SMALL_EN_V15 } from '../../src/models/builtin/spec.js';
import { processCpuSeconds } from '../processes.js';

export interface ModelLimit {
  texts: number;
  meanTokens: number;
  seconds: number;
  textsPerSecond: number;
  /** CPU seconds the model's process used meanwhile. */
  cpuSeconds: number;
}

/** Texts per embed() call: large enough that the model's batching sees the whole spread of lengths. */
const CALL = 512;

export async function measureModelLimit(texts: string[]): Promise<ModelLimit> {
  const files = locateModelFiles(BGE_SMALL_EN_V15);
  const tokenizer = await loadTokenizer(files.tokenizer);
  const meanTokens = texts.reduce((n, t) => n + Math.min(BGE_SMALL_EN_V15.maxTokens, (tokenizer.encode(t) as number[]).length), 0) / Math.max(1, texts.length);
  // The production configuration (threads, batch limits, sessions), as the worker builds it.
  const model = new BuiltinEmbeddingModel({ files });
  await model.embed(texts.slice(0, 32)); // loads the model
  // The model runs in its own process (host.ts), started by the call above.
  const pid = embeddingProcessStatus().pid!;
  const start = performance.now();
  const cpu = processCpuSeconds(pid);
  for (let i = 0; i < texts.length; i += CALL) await model.embed(texts.slice(i, i + CALL));
  const seconds = (performance.now() - start) / 1000;
  const cpuSeconds = processCpuSeconds(pid) - cpu;
  return { texts: texts.length, meanTokens, seconds, textsPerSecond: texts.length / seconds, cpuSeconds };
}
