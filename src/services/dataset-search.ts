import type { Principal } from './auth.js';
import type { RetrievalService } from './retrieval.js';
import type { SearchAppService } from './searches.js';
import { manualCondition, type MetaDataFilter } from './meta-data-filter.js';
import { badRequest } from '../errors.js';

/** RAGFlow's dataset search body (`POST /datasets/search`, `POST /datasets/{id}/search`). */
export interface DatasetSearchInput {
  dataset_ids: string[];
  question: string;
  doc_ids?: string[];
  page: number;
  size: number;
  top_k: number;
  similarity_threshold: number;
  vector_similarity_weight: number;
  use_kg: boolean;
  cross_languages: string[];
  keyword: boolean;
  /** A search app whose saved settings override the request's (as in RAGFlow). */
  search_id?: string | null;
  rerank_id?: string | null;
  meta_data_filter?: MetaDataFilter | null;
}

/** RAGFlow's retrieval test over datasets: the retrieval operation, answered as {chunks, total, doc_aggs, labels}. */
export class DatasetSearchService {
  constructor(
    private readonly retrieval: RetrievalService,
    private readonly searchApps: SearchAppService,
  ) {}

  async search(p: Principal, input: DatasetSearchInput) {
    if (!input.question.trim()) throw badRequest('`question` is required and must not be blank');
    const app = input.search_id ? await this.searchApps.configOf(p, input.search_id) : undefined;
    const { timings, ...result } = await this.retrieval.retrieve(p, {
      question: input.question,
      dataset_ids: input.dataset_ids,
      document_ids: input.doc_ids,
      page: input.page,
      page_size: input.size,
      similarity_threshold: app?.similarity_threshold ?? input.similarity_threshold,
      vector_similarity_weight: app?.vector_similarity_weight ?? input.vector_similarity_weight,
      top_k: app?.top_k ?? input.top_k,
      use_kg: app?.use_kg ?? input.use_kg,
      cross_languages: app?.cross_languages ?? input.cross_languages,
      keyword: app?.keyword ?? input.keyword,
      rerank_id: input.rerank_id || app?.rerank_id || undefined,
      metadata_condition: manualCondition(app ? app.meta_data_filter : input.meta_data_filter),
    });
    // labels: RAGFlow's tags of the question from tag datasets; Cairn ranks by none, so there are none.
    return { result: { ...result, labels: null }, timings };
  }
}
