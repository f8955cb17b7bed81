import type { ChatView, ChunkView, DatasetView } from './backend.js';

/** The fields a tool result carries of each object: enough to act on, small enough for a model's context. */
export function datasetSummary(d: DatasetView) {
  return {
    id: d.id,
    name: d.name,
    description: d.description ?? null,
    document_count: d.document_count,
    chunk_count: d.chunk_count,
    embedding_model: d.embedding_model,
    chunk_method: d.chunk_method,
  };
}

export function chatSummary(c: ChatView) {
  return { id: c.id, name: c.name, dataset_ids: c.dataset_ids, llm_id: c.llm_id ?? null };
}

export function retrievedChunk(c: ChunkView) {
  return {
    id: c.id,
    content: c.content,
    document_id: c.document_id,
    document_name: c.document_name,
    dataset_id: c.dataset_id,
    similarity: c.similarity,
  };
}

/** The retrieved chunks as plain text: a numbered source line, then the chunk's content. */
export function renderChunks(question: string, result: { total: number; chunks: ChunkView[] }): string {
  if (result.chunks.length === 0) return `No chunks matched "${question}".`;
  const more = result.total > result.chunks.length ? ` (of ${result.total} matching)` : '';
  const parts = result.chunks.map(
    (c, i) => `[${i + 1}] ${c.document_name} — similarity ${c.similarity.toFixed(3)} (document ${c.document_id}, dataset ${c.dataset_id})\n${c.content}`,
  );
  return [`${result.chunks.length} chunk(s) for "${question}"${more}:`, ...parts].join('\n\n');
}
