import { route, type RouteSpec } from '../routes.js';
import type { RetrievalService } from '../../services/retrieval.js';
import { METADATA_OPERATORS } from '../../retrieval/metadata.js';

const unit = { type: 'number', minimum: 0, maximum: 1 };

const retrievalBody = {
  type: 'object',
  required: ['question', 'dataset_ids'],
  properties: {
    question: { type: 'string' },
    dataset_ids: { type: 'array', items: { type: 'string' }, minItems: 1 },
    document_ids: { type: ['array', 'null'], items: { type: 'string' } },
    page: { type: 'integer', minimum: 1, default: 1 },
    page_size: { type: 'integer', minimum: 1, maximum: 100, default: 30 },
    similarity_threshold: { ...unit, default: 0.2 },
    vector_similarity_weight: { ...unit, default: 0.3 },
    top_k: { type: 'integer', minimum: 1, maximum: 10000, default: 1024 },
    rerank_id: { type: ['string', 'null'] },
    keyword: { type: 'boolean', default: false },
    highlight: { type: ['boolean', 'null'] },
    cross_languages: { type: ['array', 'null'], items: { type: 'string', minLength: 1 } },
    metadata_condition: {
      type: ['object', 'null'],
      properties: {
        logic: { enum: ['and', 'or'] },
        conditions: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'comparison_operator'],
            properties: { name: { type: 'string' }, comparison_operator: { enum: [...METADATA_OPERATORS] }, value: {} },
          },
        },
      },
    },
    use_kg: { type: ['boolean', 'null'] },
    toc_enhance: { type: ['boolean', 'null'] },
  },
};

export function retrievalRoutes(retrieval: RetrievalService): RouteSpec[] {
  return [
    route({
      method: 'post', path: '/retrieval', tag: 'retrieval', summary: 'Retrieve chunks by hybrid full-text and vector similarity', body: retrievalBody,
      handler: async ({ principal, body, res }) => {
        const { timings, ...result } = await retrieval.retrieve(principal, { ...body, highlight: body.highlight ?? undefined });
        res.locals.timings = timings;
        return result;
      },
    }),
  ];
}
