import type { MetaStore } from '../store/index.js';
import type { ChunkIndex } from '../index/types.js';
import type { Principal } from './auth.js';
import type { DatasetService } from './datasets.js';
import type { ModelClients } from './model-clients.js';
import type { MetadataCondition } from '../retrieval/metadata.js';
import type { RetrievalResult } from '../retrieval/types.js';
import { retrieve } from '../retrieval/retrieve.js';
import { badRequest, notFound } from '../errors.js';

export interface RetrieveInput {
  question: string;
  dataset_ids: string[];
  document_ids?: string[] | null;
  page?: number;
  page_size?: number;
  similarity_threshold?: number;
  vector_similarity_weight?: number;
  top_k?: number;
  rerank_id?: string | null;
  keyword?: boolean;
  cross_languages?: string[] | null;
  metadata_condition?: MetadataCondition | null;
  highlight?: boolean;
}

/** The retrieval operation: access checks and model wiring around the pure hybrid retrieval. */
export class RetrievalService {
  constructor(
    private readonly store: MetaStore,
    private readonly datasets: DatasetService,
    private readonly index: ChunkIndex,
    private readonly models: ModelClients,
  ) {}

  async retrieve(p: Principal, input: RetrieveInput): Promise<RetrievalResult> {
    if (!input.dataset_ids?.length) throw badRequest('`dataset_ids` is required');
    const datasets = await Promise.all([...new Set(input.dataset_ids)].map((id) => this.datasets.get(p, id)));
    const documentIds = input.document_ids?.length ? await this.checkDocuments(datasets.map((d) => d.id), input.document_ids) : undefined;
    const scope = documentIds ? datasets.filter((d) => documentIds.datasets.has(d.id)) : datasets;
    const models = [...new Set(scope.map((d) => d.embedding_model))];
    if (models.length > 1) {
      const what = documentIds ? 'The selected documents' : 'The selected datasets';
      throw badRequest(`${what} use different embedding models (${scope.map((d) => `${d.name}: ${d.embedding_model}`).join(', ')}); retrieve from one embedding model at a time`);
    }
    const owner = scope[0].tenant_id;
    const embedder = await this.models.embedding(owner, models[0]);
    const reranker = input.rerank_id ? await this.models.rerank(p.tenantId, input.rerank_id) : undefined;
    const question = await this.expandQuestion(p, input);
    const pagerank = new Map(datasets.map((d) => [d.id, d.pagerank]));

    const result = await retrieve(
      {
        question,
        dataset_ids: scope.map((d) => d.id),
        document_ids: documentIds ? [...documentIds.ids] : undefined,
        page: input.page,
        page_size: input.page_size,
        similarity_threshold: input.similarity_threshold,
        vector_similarity_weight: input.vector_similarity_weight,
        top_k: input.top_k,
        highlight: input.highlight,
        metadata_condition: input.metadata_condition ?? undefined,
      },
      {
        index: this.index,
        embedQuery: async (text) => (await embedder.embed([text]))[0],
        rerank: reranker ? (query, docs) => reranker.rerank(query, docs) : undefined,
        pagerankOf: (id) => pagerank.get(id) ?? 0,
        documentMetadata: (ids) => this.store.documents.metaFields(ids),
      },
    );
    return result;
  }

  /** Documents must belong to the datasets; returns their ids and the datasets they are in. */
  private async checkDocuments(datasetIds: string[], ids: string[]) {
    const found = (await Promise.all(datasetIds.map((d) => this.store.documents.byIds(d, ids)))).flat();
    const missing = ids.filter((id) => !found.some((d) => d.id === id));
    if (missing.length) throw notFound(`The datasets don't own the document(s) ${missing.join(', ')}`);
    return { ids: new Set(found.map((d) => d.id)), datasets: new Set(found.map((d) => d.dataset_id)) };
  }

  /**
   * keyword: keywords extracted from the question by the tenant's chat model are appended;
   * cross_languages: the question translated into each language, all searched together.
   */
  private async expandQuestion(p: Principal, input: RetrieveInput): Promise<string> {
    const parts = [input.question];
    if (!input.question.trim() || (!input.keyword && !input.cross_languages?.length)) return input.question;
    const chat = await this.models.chat(p.tenantId);
    for (const language of input.cross_languages ?? []) {
      parts.push(
        await chat.complete([
          { role: 'system', content: `Translate the user's text into ${language}. Output only the translation.` },
          { role: 'user', content: input.question },
        ]),
      );
    }
    if (input.keyword) {
      parts.push(
        await chat.complete([
          { role: 'system', content: 'Extract the most important keywords from the user\'s question. Output them on one line, separated by commas, nothing else.' },
          { role: 'user', content: input.question },
        ]),
      );
    }
    return parts.map((s) => s.trim()).filter(Boolean).join('\n');
  }
}
