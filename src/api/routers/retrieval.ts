import { route, type RouteSpec } from '../routes.js';
import { MAX_TOP_K, parseDifyRequest, type RetrievalService } from '../../services/retrieval.js';
import type { DatasetSearchService } from '../../services/dataset-search.js';
import type { SearchAppService } from '../../services/searches.js';
import { METADATA_OPERATORS } from '../../retrieval/metadata.js';
import { badRequest } from '../../errors.js';
import { safeJson } from '../envelope.js';
import { anyValue, LIMITS, list, MAX_PAGE, nullableText, text } from '../schemas.js';

const unit = { type: 'number', minimum: 0, maximum: 1 };

const retrievalBody = {
  type: 'object',
  required: ['question', 'dataset_ids'],
  properties: {
    question: text(LIMITS.text),
    dataset_ids: { ...list(text(LIMITS.id), LIMITS.ids), minItems: 1 },
    document_ids: { type: ['array', 'null'], items: text(LIMITS.id), maxItems: LIMITS.ids },
    page: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 },
    page_size: { type: 'integer', minimum: 1, maximum: 100, default: 30 },
    similarity_threshold: { ...unit, default: 0.2 },
    vector_similarity_weight: { ...unit, default: 0.3 },
    top_k: { type: 'integer', minimum: 1, maximum: MAX_TOP_K, default: 1024 },
    rerank_id: nullableText(LIMITS.name),
    keyword: { type: 'boolean', default: false },
    highlight: { type: ['boolean', 'null'] },
    cross_languages: { type: ['array', 'null'], items: text(64, 1), maxItems: 32 },
    /** A malformed condition (unknown key, operator or shape, blank name) is a 400 naming its path. */
    metadata_condition: {
      type: ['object', 'null'],
      additionalProperties: false,
      properties: {
        logic: { enum: ['and', 'or'] },
        conditions: list(
          {
            type: 'object',
            additionalProperties: false,
            required: ['name', 'comparison_operator'],
            properties: { name: text(LIMITS.name, 1), comparison_operator: { enum: [...METADATA_OPERATORS] }, value: anyValue() },
          },
          100,
        ),
      },
    },
    use_kg: { type: ['boolean', 'null'] },
    /** Accepted as RAGFlow's SDK sends it (false); true is refused (no tables of contents). */
    toc_enhance: { type: ['boolean', 'null'] },
  },
};

/** RAGFlow's `meta_data_filter`: `manual` conditions ({key, op, value}); `auto`/`semi_auto` are refused with a 400. */
export const metaDataFilter = {
  type: ['object', 'null'],
  properties: {
    method: { enum: ['manual', 'auto', 'semi_auto', 'disabled'] },
    logic: { enum: ['and', 'or'] },
    manual: list({ type: 'object', required: ['key', 'op'], properties: { key: text(LIMITS.name, 1), op: text(32, 1), value: anyValue() } }, 100),
  },
};

/** RAGFlow's dataset search body (SearchDatasetReq); `dataset_ids` only on the multi-dataset route. */
const searchProperties = {
  question: text(LIMITS.text, 1),
  doc_ids: { type: ['array', 'null'], items: text(LIMITS.id), maxItems: LIMITS.ids },
  page: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 },
  size: { type: 'integer', minimum: 1, maximum: 100, default: 30 },
  top_k: { type: 'integer', minimum: 1, maximum: MAX_TOP_K, default: 1024 },
  similarity_threshold: { ...unit, default: 0 },
  vector_similarity_weight: { ...unit, default: 0.3 },
  use_kg: { type: 'boolean', default: false },
  cross_languages: { ...list(text(64, 1), 32), default: [] },
  keyword: { type: 'boolean', default: false },
  search_id: nullableText(LIMITS.id),
  rerank_id: nullableText(LIMITS.name),
  meta_data_filter: metaDataFilter,
  /** Cairn compiles no knowledge (RAGFlow's wiki pages), so there is nothing for false to leave out. */
  include_knowledge_compilation: { type: 'boolean', default: true },
};
const searchOneBody = { type: 'object', required: ['question'], properties: searchProperties };
const searchManyBody = {
  type: 'object',
  required: ['question', 'dataset_ids'],
  properties: { dataset_ids: { ...list(text(LIMITS.id), LIMITS.ids), minItems: 1 }, ...searchProperties },
};

export function retrievalRoutes(retrieval: RetrievalService, datasetSearch: DatasetSearchService, searchApps: SearchAppService): RouteSpec[] {
  return [
    route({
      method: 'post', path: '/datasets/search', tag: 'retrieval', summary: "Search datasets (RAGFlow's retrieval test): {chunks, total, doc_aggs, labels}", body: searchManyBody, admission: 'short',
      handler: async ({ principal, body, res }) => {
        const { result, timings } = await datasetSearch.search(principal, body);
        res.locals.timings = timings;
        return result;
      },
    }),
    route({
      method: 'post', path: '/datasets/:dataset_id/search', tag: 'retrieval', summary: "Search one dataset (RAGFlow's retrieval test): {chunks, total, doc_aggs, labels}", body: searchOneBody, admission: 'short',
      handler: async ({ principal, params, body, res }) => {
        const { result, timings } = await datasetSearch.search(principal, { ...body, dataset_ids: [params.dataset_id] });
        res.locals.timings = timings;
        return result;
      },
    }),
    route({
      method: 'post', path: '/retrieval', tag: 'retrieval', summary: 'Retrieve chunks by hybrid full-text and vector similarity', body: retrievalBody, admission: 'short',
      handler: async ({ principal, body, res }) => {
        // RAGFlow's SDK sends toc_enhance: false; true asks for a table-of-contents pass Cairn has nothing for.
        if (body.toc_enhance) throw badRequest("`toc_enhance` is not supported: it ranks by each document's table of contents, which Cairn does not build; leave it false");
        const { timings, ...result } = await retrieval.retrieve(principal, { ...body, highlight: body.highlight ?? undefined });
        res.locals.timings = timings;
        return result;
      },
    }),
    // Dify's external-knowledge API: no envelope on success; errors are {code, message} with the HTTP status.
    ...(['post', 'get'] as const).map((method) =>
      route({
        method, path: '/dify/retrieval', tag: 'retrieval', summary: "Dify external-knowledge retrieval over a dataset (knowledge_id)", raw: true, admission: 'short',
        responses: { '200': { description: "Dify's answer: {records: [{content, score, title, metadata}]}", content: { 'application/json': { type: 'object', required: ['records'], properties: { records: { type: 'array' } } } } } },
        handler: async ({ principal, req, res }) => {
          const input = method === 'get' ? (req.query as Record<string, unknown>) : (req.body as Record<string, unknown> | undefined);
          if (input !== undefined && (typeof input !== 'object' || input === null || Array.isArray(input))) throw badRequest('invalid or malformed arguments: body; ');
          const records = await retrieval.difyRetrieve(principal, parseDifyRequest(input));
          res.status(200).type('application/json').send(safeJson({ records }));
        },
      }),
    ),
    route({
      method: 'get', path: '/dify/retrieval/health', tag: 'retrieval', summary: 'Dify external-knowledge health check', public: true, raw: true,
      handler: ({ res }) => void res.status(200).json({ code: 0, message: 'success', data: true }),
    }),
    route({
      method: 'post', path: '/searchbots/related_questions', tag: 'retrieval', admission: 'long', beta: true,
      summary: "Related search questions from the chat model (a search app's, with search_id); an API key's beta token is accepted",
      body: { type: 'object', required: ['question'], properties: { question: text(LIMITS.text, 1), search_id: nullableText(LIMITS.id) } },
      handler: async ({ principal, body }) => {
        const app = body.search_id ? await searchApps.configOf(principal, body.search_id) : undefined;
        return retrieval.relatedQuestions(principal, body.question, app && { chatModel: app.chat_id || undefined, llmSetting: app.llm_setting });
      },
    }),
  ];
}
