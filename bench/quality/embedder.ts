import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { builtinEmbeddingModel } from '../../src/models/builtin/embedding-model.js';
import type { EmbedPurpose } from '../../src/models/types.js';
import { BUILTIN_EMBEDDING_SPECS } from '../../src/models/builtin/spec.js';

export interface BenchEmbedder {
  id: string;
  embed(texts: string[], purpose?: EmbedPurpose): Promise<number[][]>;
}

/**
 * The service's built-in embedding models, the default first; a model whose files are missing is left
 * out with a note (with none, the quality bench runs BM25 only).
 */
export async function builtinEmbedders(): Promise<BenchEmbedder[]> {
  const out: BenchEmbedder[] = [];
  for (const spec of BUILTIN_EMBEDDING_SPECS) {
    const model = builtinEmbeddingModel(spec);
    try {
      await model.embed(['probe']);
    } catch (err) {
      console.log(`(built-in embedding model ${model.id} unavailable: ${(err as Error).message})`);
      continue;
    }
    out.push({ id: model.id, embed: (texts, purpose) => model.embed(texts, purpose) });
  }
  return out;
}

/**
 * Embeds in batches as `purpose` (passages unless told), caching the vectors in the temp directory (keyed
 * by model, purpose and texts).
 */
export async function embedAll(embedder: BenchEmbedder, texts: string[], label: string, purpose: EmbedPurpose = 'passage'): Promise<number[][]> {
  const key = createHash('sha256').update(embedder.id).update('\0').update(purpose).update('\0').update(texts.join('\0')).digest('hex').slice(0, 16);
  const cache = join(tmpdir(), `cairn-bench-embeddings-${key}.json`);
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8')) as number[][];
  const vectors: number[][] = [];
  const started = performance.now();
  for (let i = 0; i < texts.length; i += 64) {
    vectors.push(...(await embedder.embed(texts.slice(i, i + 64), purpose)));
    if ((i / 64) % 10 === 0) process.stdout.write(`\r  embedding ${label}: ${vectors.length}/${texts.length}`);
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`\r  embedded ${texts.length} ${label} in ${seconds.toFixed(0)} s (${(texts.length / seconds).toFixed(1)}/s)`);
  writeFileSync(cache, JSON.stringify(vectors));
  return vectors;
}
