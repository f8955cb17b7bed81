import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface BenchEmbedder {
  id: string;
  embed(texts: string[]): Promise<number[][]>;
  close(): Promise<void>;
}

/**
 * The service's built-in embedding model from src/models, or undefined when that module (or its model
 * files) is not available, in which case the quality bench runs BM25 only.
 */
export async function builtinEmbedder(): Promise<BenchEmbedder | undefined> {
  let models: Record<string, unknown>;
  try {
    models = await import('../../src/models/index.js');
  } catch (err) {
    console.log(`(no src/models module: ${(err as Error).message.split('\n')[0]})`);
    return undefined;
  }
  const factory = models.builtinEmbeddingModel as
    | (() => { id: string; embed(texts: string[]): Promise<number[][]>; close?(): Promise<void> })
    | undefined;
  if (typeof factory !== 'function') {
    console.log('(src/models exports no builtinEmbeddingModel factory)');
    return undefined;
  }
  const model = factory();
  try {
    await model.embed(['probe']);
  } catch (err) {
    console.log(`(built-in embedding model unavailable: ${(err as Error).message})`);
    return undefined;
  }
  return { id: model.id, embed: (texts) => model.embed(texts), close: async () => model.close?.() };
}

/** Embeds in batches, caching the vectors in the temp directory (keyed by model and texts). */
export async function embedAll(embedder: BenchEmbedder, texts: string[], label: string): Promise<number[][]> {
  const key = createHash('sha256').update(embedder.id).update('\0').update(texts.join('\0')).digest('hex').slice(0, 16);
  const cache = join(tmpdir(), `cairn-bench-embeddings-${key}.json`);
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8')) as number[][];
  const vectors: number[][] = [];
  const started = performance.now();
  for (let i = 0; i < texts.length; i += 64) {
    vectors.push(...(await embedder.embed(texts.slice(i, i + 64))));
    if ((i / 64) % 10 === 0) process.stdout.write(`\r  embedding ${label}: ${vectors.length}/${texts.length}`);
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`\r  embedded ${texts.length} ${label} in ${seconds.toFixed(0)} s (${(texts.length / seconds).toFixed(1)}/s)`);
  writeFileSync(cache, JSON.stringify(vectors));
  return vectors;
}
