import type { EmbeddingModel } from '../models/types.js';
import { l2normalize } from '../models/vector.js';

/** RAGFlow's filename_embd_weight: the document title's share of a chunk vector. */
export const TITLE_WEIGHT = 0.1;

export interface EmbeddableChunk {
  content: string;
  questions?: string[];
}

/** The text embedded for a chunk: its questions when it has some (as RAGFlow does), else its content. */
export function embeddingText(chunk: EmbeddableChunk): string {
  return chunk.questions?.length ? chunk.questions.join('\n') : chunk.content;
}

/**
 * Chunk vectors: (1 - w) x text vector + w x title vector, re-normalised. A title given as text is
 * embedded in the same request as the chunks (one model call, batched with them).
 */
export async function chunkVectors(model: EmbeddingModel, title: string | number[], chunks: EmbeddableChunk[]): Promise<number[][]> {
  if (chunks.length === 0) return [];
  const texts = chunks.map(embeddingText);
  if (typeof title !== 'string') return withTitle(await model.embed(texts), title);
  const [titleVector, ...vectors] = await model.embed([title, ...texts]);
  return withTitle(vectors, titleVector!);
}

/** Text vectors mixed with the title vector (`weight`, TITLE_WEIGHT unless told), re-normalised. */
export function withTitle(vectors: number[][], titleVector: number[], weight = TITLE_WEIGHT): number[][] {
  return vectors.map((v) => l2normalize(v.map((x, i) => (1 - weight) * x + weight * titleVector[i]!)));
}
