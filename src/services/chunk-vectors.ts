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

/** Chunk vectors: (1 - w) x text vector + w x title vector, re-normalised. */
export async function chunkVectors(model: EmbeddingModel, title: string | number[], chunks: EmbeddableChunk[]): Promise<number[][]> {
  if (chunks.length === 0) return [];
  const titleVector = typeof title === 'string' ? (await model.embed([title]))[0] : title;
  const vectors = await model.embed(chunks.map(embeddingText));
  return vectors.map((v) => l2normalize(v.map((x, i) => (1 - TITLE_WEIGHT) * x + TITLE_WEIGHT * titleVector[i])));
}
