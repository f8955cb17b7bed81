import { route, Reply, type RouteSpec } from '../routes.js';
import { DATASET_CHUNK_METHODS, DATASET_UPDATE_CHUNK_METHODS, type DatasetService } from '../../services/datasets.js';
import { deleteBody, LIMITS, listQuery, text } from '../schemas.js';
import { DEFAULT_CHECK_NUM, type EmbeddingCheckService } from '../../services/embedding-check.js';
import { PARSER_CONFIG_SCHEMA } from '../../chunking/parser-config.js';

/**
 * RAGFlow's ParserConfig (the same schema document updates use): unknown keys, wrong types and
 * out-of-range values are a 400 naming the key path, e.g. `parser_config.raptor.max_cluster`.
 * null (like `{}`) means "not given": the chunk method's defaults apply.
 */
const parserConfig = { ...PARSER_CONFIG_SCHEMA, type: ['object', 'null'] };

const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 128 },
    avatar: { type: ['string', 'null'], maxLength: 65535 },
    description: { type: ['string', 'null'], maxLength: 65535 },
    embedding_model: { type: ['string', 'null'], maxLength: 255 },
    permission: { enum: ['me', 'team'] },
    chunk_method: { enum: [...DATASET_CHUNK_METHODS] },
    parser_config: parserConfig,
    parse_type: { type: ['integer', 'null'], minimum: 0, maximum: 64 },
    pipeline_id: { type: ['string', 'null'], maxLength: 64 },
  },
};

const updateBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...createBody.properties,
    chunk_method: { enum: [...DATASET_UPDATE_CHUNK_METHODS] },
    pagerank: { type: 'integer', minimum: 0, maximum: 100 },
    language: { type: 'string', maxLength: 32 },
  },
};

const listDatasetsQuery = listQuery(['create_time', 'update_time'], {
  keywords: text(LIMITS.queryText),
  include_parsing_status: { type: 'boolean', default: false },
});

/** RAGFlow's embedding check: the candidate model and how many chunks to compare. */
const embeddingCheckBody = {
  type: 'object',
  required: ['embd_id'],
  properties: {
    embd_id: text(LIMITS.name, 1),
    check_num: { type: 'integer', minimum: 1, maximum: 100, default: DEFAULT_CHECK_NUM },
  },
};

export function datasetRoutes(datasets: DatasetService, embeddingCheck: EmbeddingCheckService): RouteSpec[] {
  return [
    route({
      method: 'post', path: '/datasets', tag: 'datasets', summary: 'Create a dataset', body: createBody,
      handler: ({ principal, body }) => datasets.create(principal, body),
    }),
    route({
      method: 'get', path: '/datasets', tag: 'datasets', summary: 'List datasets', query: listDatasetsQuery,
      handler: async ({ principal, query }) => {
        const { total, datasets: list } = await datasets.list(principal, query);
        return new Reply(list, { total_datasets: total, total });
      },
    }),
    route({
      method: 'get', path: '/datasets/:dataset_id', tag: 'datasets', summary: 'Get a dataset',
      handler: ({ principal, params }) => datasets.detail(principal, params.dataset_id),
    }),
    route({
      method: 'put', path: '/datasets/:dataset_id', tag: 'datasets', summary: 'Update a dataset', body: updateBody,
      handler: ({ principal, params, body }) => datasets.update(principal, params.dataset_id, body),
    }),
    route({
      method: 'post', path: '/datasets/:dataset_id/embedding/check', tag: 'datasets', admission: 'long', body: embeddingCheckBody,
      summary: "RAGFlow's embedding check: re-embed a few chunks with another model and compare with the stored vectors (compatible at an average cosine of 0.9)",
      handler: ({ principal, params, body }) => embeddingCheck.check(principal, params.dataset_id, body),
    }),
    route({
      method: 'delete', path: '/datasets', tag: 'datasets', summary: 'Delete datasets (ids, or delete_all)', body: deleteBody,
      handler: ({ principal, body }) => datasets.delete(principal, body.ids, body.delete_all ?? false),
    }),
  ];
}
