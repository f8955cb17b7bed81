import { route, type RouteSpec } from '../routes.js';
import type { MetadataService } from '../../services/metadata.js';
import { idList } from '../../services/metadata.js';

/** RAGFlow's AutoMetadataConfig. */
const metadataConfigBody = {
  type: 'object',
  required: ['metadata'],
  properties: {
    metadata: {
      type: 'array',
      items: {
        type: 'object',
        required: ['key'],
        properties: {
          key: { type: 'string', minLength: 1, maxLength: 255 },
          type: { enum: ['string', 'list', 'time', 'number'] },
          description: { type: ['string', 'null'] },
          enum: { type: ['array', 'null'] },
        },
      },
    },
    built_in_metadata: { type: 'array' },
  },
};

const batchBody = {
  type: 'object',
  properties: {
    selector: {
      type: ['object', 'null'],
      properties: {
        document_ids: { type: ['array', 'null'], items: { type: 'string' } },
        metadata_condition: {
          type: ['object', 'null'],
          properties: {
            logic: { enum: ['and', 'or'] },
            conditions: { type: 'array', items: { type: 'object', required: ['name', 'comparison_operator'] } },
          },
        },
      },
    },
    updates: { type: ['array', 'null'] },
    deletes: { type: ['array', 'null'] },
  },
};

/**
 * Dataset metadata and chunk-tag routes. The fixed paths (`/datasets/metadata/flattened`,
 * `/datasets/tags/aggregation`) come first so no `/datasets/:dataset_id...` pattern captures them;
 * register these before the dataset routes.
 */
export function metadataRoutes(metadata: MetadataService): RouteSpec[] {
  return [
    route({
      method: 'get', path: '/datasets/metadata/flattened', tag: 'datasets', summary: "Documents per metadata value across datasets",
      handler: ({ principal, query }) => metadata.flattened(principal, query.dataset_ids),
    }),
    route({
      method: 'get', path: '/datasets/tags/aggregation', tag: 'datasets', summary: 'Chunk tag counts across datasets',
      handler: ({ principal, query }) => metadata.aggregateTags(principal, query.dataset_ids),
    }),
    route({
      method: 'get', path: '/datasets/:dataset_id/metadata/summary', tag: 'datasets', summary: "Metadata values and their document counts",
      handler: ({ principal, params, query }) => metadata.summary(principal, params.dataset_id, idList(query.doc_ids)),
    }),
    ...(['post', 'patch'] as const).map((method) => route({
      method, path: '/datasets/:dataset_id/documents/metadatas', tag: 'documents', summary: 'Batch update documents\' metadata', body: batchBody,
      handler: ({ principal, params, body }) => metadata.batchUpdate(principal, params.dataset_id, body),
    })),
    route({
      method: 'post', path: '/datasets/:dataset_id/metadata/update', tag: 'documents', summary: 'Batch update documents\' metadata', body: batchBody,
      handler: ({ principal, params, body }) => metadata.batchUpdate(principal, params.dataset_id, body),
    }),
    route({
      method: 'get', path: '/datasets/:dataset_id/metadata/config', tag: 'datasets', summary: "The dataset's auto-metadata config",
      handler: ({ principal, params }) => metadata.getConfig(principal, params.dataset_id),
    }),
    route({
      method: 'put', path: '/datasets/:dataset_id/metadata/config', tag: 'datasets', summary: "Set the dataset's auto-metadata config", body: metadataConfigBody,
      handler: ({ principal, params, body }) => metadata.putConfig(principal, params.dataset_id, body),
    }),
    route({
      method: 'get', path: '/datasets/:dataset_id/tags', tag: 'datasets', summary: 'Chunk tags of a dataset with their counts',
      handler: ({ principal, params }) => metadata.listTags(principal, params.dataset_id),
    }),
    route({
      method: 'delete', path: '/datasets/:dataset_id/tags', tag: 'datasets', summary: 'Remove tags from the chunks of a dataset',
      handler: ({ principal, params, body }) => metadata.removeTags(principal, params.dataset_id, body?.tags),
    }),
    route({
      method: 'put', path: '/datasets/:dataset_id/tags', tag: 'datasets', summary: 'Rename a tag in the chunks of a dataset',
      handler: ({ principal, params, body }) => metadata.renameTag(principal, params.dataset_id, body?.from_tag, body?.to_tag),
    }),
  ];
}
