import type { ReferenceBucket } from '../dsl.js';
import type { RetrievalService } from '../../services/retrieval.js';
import type { Principal } from '../../services/auth.js';
import type { ReferenceChunk } from '../../retrieval/types.js';

/** RAGFlow's Retrieval tool, as an Agent sees it. */
export const RETRIEVAL_TOOL_NAME = 'search_my_dateset';
export const RETRIEVAL_TOOL_DESCRIPTION = 'This tool can be utilized for relevant content searching in the datasets.';

export interface RetrievalOutput {
  formalized_content: string;
  json: Record<string, unknown>[];
  reference: ReferenceBucket;
}

/** A principal acting for the agent owner's tenant: runs read the owner's datasets. */
export function tenantPrincipal(tenantId: string): Principal {
  return { userId: tenantId, email: '', nickname: '', tenantId, teamTenants: [], isAdmin: false };
}

function datasetIds(params: Record<string, unknown>): string[] {
  const raw = params.kb_ids ?? params.dataset_ids ?? [];
  const list = Array.isArray(raw) ? raw : [raw];
  return list.flatMap((v) => (Array.isArray(v) ? v : [v])).map(String).filter(Boolean);
}

/** Runs a Retrieval component or tool: every retrieval parameter of the DSL, references for `message_end`. */
export async function runRetrieval(retrieval: RetrievalService, tenantId: string, query: string, params: Record<string, unknown>): Promise<RetrievalOutput> {
  if (params.retrieval_from === 'memory') throw new Error('retrieval from memories is not available yet');
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
