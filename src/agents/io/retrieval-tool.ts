import type { ReferenceBucket } from '../dsl.js';
import type { RetrievalService } from '../../services/retrieval.js';
import type { MemoryService } from '../../services/memories.js';
import { tenantPrincipal } from '../../services/access.js';
import type { ReferenceChunk } from '../../retrieval/types.js';
import { recallOrder, recallText } from './memory-recall.js';

/** RAGFlow's Retrieval tool, as an Agent sees it. */
export const RETRIEVAL_TOOL_NAME = 'search_my_dateset';
export const RETRIEVAL_TOOL_DESCRIPTION = 'This tool can be utilized for relevant content searching in the datasets.';

export interface RetrievalOutput {
  formalized_content: string;
  json: Record<string, unknown>[];
  reference: ReferenceBucket;
}

function datasetIds(params: Record<string, unknown>): string[] {
  return stringList(params.kb_ids ?? params.dataset_ids);
}

/** Memory hits are prompt text only: as in RAGFlow they are not added to the turn's references. */
async function retrieveMemories(memories: RetrievalSources['memories'], tenantId: string, query: string, memoryIds: string[], params: Record<string, unknown>): Promise<RetrievalOutput> {
  if (!memoryIds.length) throw new Error('no memory is selected (set memory_ids)');
  const hits = await memories.searchForAgent(tenantId, {
    query,
    memory_ids: memoryIds,
    user_id: params.user_id ? String(params.user_id) : undefined,
    similarity_threshold: typeof params.similarity_threshold === 'number' ? params.similarity_threshold : 0.2,
    keywords_similarity_weight: typeof params.keywords_similarity_weight === 'number' ? params.keywords_similarity_weight : 0.7,
    top_n: Number(params.top_n ?? 8) || 8,
  });
  const ordered = recallOrder(hits);
  const json = ordered.map((h) => ({ ...h })) as Record<string, unknown>[];
  const text = recallText(ordered);
  return { formalized_content: text || String(params.empty_response ?? ''), json, reference: { chunks: {}, doc_aggs: {} } };
}

/** Where a Retrieval component reads: datasets and memories (built by wiring.ts for the activities). */
export interface RetrievalSources {
  datasets: Pick<RetrievalService, 'retrieve'>;
  memories: Pick<MemoryService, 'searchForAgent'>;
}

function stringList(raw: unknown): string[] {
  const list = Array.isArray(raw) ? raw : raw == null ? [] : [raw];
  return list.flatMap((v) => (Array.isArray(v) ? v : [v])).map(String).filter(Boolean);
}

/**
 * Runs a Retrieval component or tool: from datasets (every retrieval parameter of the DSL, references
 * for `message_end`), or with `retrieval_from: memory` (or no datasets but memory_ids) from memories.
 */
export async function runRetrieval(sources: RetrievalSources, tenantId: string, query: string, params: Record<string, unknown>): Promise<RetrievalOutput> {
  const memoryIds = stringList(params.memory_ids);
  if (params.retrieval_from === 'memory' || (!datasetIds(params).length && memoryIds.length)) return retrieveMemories(sources.memories, tenantId, query, memoryIds, params);
  const retrieval = sources.datasets;
  const ids = datasetIds(params);
  if (!ids.length) throw new Error('no dataset is selected (set kb_ids)');
  const keywordsWeight = typeof params.keywords_similarity_weight === 'number' ? params.keywords_similarity_weight : 0.5;
  const result = await retrieval.retrieve(tenantPrincipal(tenantId), {
    question: query,
    dataset_ids: ids,
    page: 1,
    page_size: Number(params.top_n ?? 8) || 8,
    similarity_threshold: typeof params.similarity_threshold === 'number' ? params.similarity_threshold : 0.2,
    vector_similarity_weight: 1 - keywordsWeight,
    top_k: Number(params.top_k ?? 1024) || 1024,
    rerank_id: (params.rerank_id as string) || null,
    cross_languages: Array.isArray(params.cross_languages) && params.cross_languages.length ? (params.cross_languages as string[]) : null,
    use_kg: params.use_kg === true,
  });
  const reference: ReferenceBucket = { chunks: {}, doc_aggs: {} };
  for (const c of result.chunks) reference.chunks[c.id] = referenceOf(c);
  for (const d of result.doc_aggs) reference.doc_aggs[d.doc_name] = { ...d };
  const empty = String(params.empty_response ?? '');
  const formalized = result.chunks.length ? formalize(result.chunks) : empty;
  return { formalized_content: formalized, json: result.chunks.map((c) => referenceOf(c)), reference };
}

function referenceOf(c: ReferenceChunk): Record<string, unknown> {
  return {
    id: c.id,
    content: c.content,
    document_id: c.document_id,
    document_name: c.document_name,
    dataset_id: c.dataset_id,
    image_id: c.image_id,
    positions: c.positions,
    similarity: c.similarity,
    vector_similarity: c.vector_similarity,
    term_similarity: c.term_similarity,
  };
}

/** Prompt-ready text of the chunks, each with its id so a model can cite it. */
function formalize(chunks: ReferenceChunk[]): string {
  return chunks.map((c, i) => `\nID: ${i}\n├── Title: ${c.document_name}\n└── Content:\n${c.content}`).join('\n');
}
