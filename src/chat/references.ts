import type { DocAgg, RetrievedChunk } from './retriever.js';

/** A reference chunk inside a chat answer (spec "Reference chunk": `img_id` for chat assistants). */
export interface ReferenceChunk {
  id: string;
  content: string;
  document_id: string;
  document_name: string;
  dataset_id: string;
  img_id: string;
  /** The spec's name; `positions` is RAGFlow's. */
  position: unknown[];
  positions: unknown[];
  similarity: number;
  vector_similarity: number;
  term_similarity: number;
  document_metadata?: Record<string, unknown>;
}

/** The references of an answer: the chunks given to the model (`[ID:n]` is chunks[n]) and their documents. */
export interface ChatReference {
  chunks: ReferenceChunk[];
  doc_aggs: DocAgg[];
  total: number;
}

export function emptyReference(): ChatReference {
  return { chunks: [], doc_aggs: [], total: 0 };
}

export function referenceChunk(c: RetrievedChunk, metadata?: Record<string, unknown>): ReferenceChunk {
  const out: ReferenceChunk = {
    id: c.id,
    content: c.content,
    document_id: c.document_id,
    document_name: c.document_name,
    dataset_id: c.dataset_id,
    img_id: c.image_id ?? '',
    position: c.positions ?? [],
    positions: c.positions ?? [],
    similarity: c.similarity,
    vector_similarity: c.vector_similarity,
    term_similarity: c.term_similarity,
  };
  if (metadata) out.document_metadata = metadata;
  return out;
}

/**
 * The reference of a finished answer. When the answer cites chunks, doc_aggs keeps only the cited
 * documents (as RAGFlow does); otherwise it lists every retrieved document.
 */
export function buildReference(
  chunks: RetrievedChunk[],
  docAggs: DocAgg[],
  total: number,
  cited: number[],
  metadata?: Map<string, Record<string, unknown>>,
): ChatReference {
  const citedDocs = new Set(cited.map((i) => chunks[i]?.document_id).filter(Boolean));
  const aggs = citedDocs.size ? docAggs.filter((d) => citedDocs.has(d.doc_id)) : docAggs;
  return {
    chunks: chunks.map((c) => referenceChunk(c, metadata ? (metadata.get(c.document_id) ?? {}) : undefined)),
    doc_aggs: aggs.length ? aggs : docAggs,
    total,
  };
}

/** A document's meta_fields, restricted to `fields` when given. */
export function pickMetadata(meta: Record<string, unknown>, fields?: string[]): Record<string, unknown> {
  if (!fields) return meta;
  return Object.fromEntries(fields.filter((f) => Object.hasOwn(meta, f)).map((f) => [f, meta[f]]));
}
