import { route, type RouteSpec } from '../routes.js';
import type { MetadataService } from '../../services/metadata.js';
import { idList } from '../../services/metadata.js';
import { anyValue, LIMITS, list, nullableText, queryList, text } from '../schemas.js';

/** RAGFlow's AutoMetadataConfig. */
const metadataConfigBody = {
  type: 'object',
  required: ['metadata'],
  properties: {
    metadata: list(
      {
        type: 'object',
        required: ['key'],
        properties: {
          key: { type: 'string', minLength: 1, maxLength: 255 },
          type: { enum: ['string', 'list', 'time', 'number'] },
          description: nullableText(LIMITS.text),
          enum: { type: ['array', 'null'], maxItems: LIMITS.list, items: anyValue(LIMITS.name) },
        },
      },
      256,
    ),
    built_in_metadata: list(anyValue(LIMITS.name), 256),
  },
};

const batchBody = {
  type: 'object',
  properties: {
    selector: {
      type: ['object', 'null'],
      properties: {
        document_ids: { type: ['array', 'null'], items: text(LIMITS.id), maxItems: LIMITS.ids },
        metadata_condition: {
          type: ['object', 'null'],
          properties: {
            logic: { enum: ['and', 'or'] },
            conditions: list({ type: 'object', required: ['name', 'comparison_operator'] }, 100),
          },
        },
      },
    },
    updates: { type: ['array', 'null'], maxItems: LIMITS.list },
    deletes: { type: ['array', 'null'], maxItems: LIMITS.list },
  },
};

/** Datasets to look at: repeated or comma-separated ids (all the caller's when absent). */
const datasetIdsQuery = { type: 'object', properties: { dataset_ids: queryList } };

/** The tags to remove; the service checks the type (RAGFlow: `tags must be a list of strings`). */
const removeTagsBody = { type: 'object', properties: { tags: { ...anyValue(LIMITS.name), items: anyValue(LIMITS.name) } } };
const renameTagBody = { type: 'object', properties: { from_tag: anyValue(LIMITS.name), to_tag: anyValue(LIMITS.name) } };

/**
 * Dataset metadata and chunk-tag routes. The fixed paths (`/datasets/metadata/flattened`,
 * `/datasets/tags/aggregation`) come first so no `/datasets/:dataset_id...` pattern captures them;
 * register these before the dataset routes.
 */
export function metadataRoutes(metadata: MetadataService): RouteSpec[] {
  return [
    route({
      method: 'get', path: '/datasets/metadata/flattened', tag: 'datasets', summary: "Documents per metadata value across datasets", query: datasetIdsQuery,
      handler: ({ principal, query }) => metadata.flattened(principal, query.dataset_ids),
    }),
    route({
      method: 'get', path: '/datasets/tags/aggregation', tag: 'datasets', summary: 'Chunk tag counts across datasets', query: datasetIdsQuery,
      handler: ({ principal, query }) => metadata.aggregateTags(principal, query.dataset_ids),
    }),
    route({
      method: 'get', path: '/datasets/:dataset_id/metadata/summary', tag: 'datasets', summary: "Metadata values and their document counts",
      query: { type: 'object', properties: { doc_ids: queryList } },
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
      method: 'delete', path: '/datasets/:dataset_id/tags', tag: 'datasets', summary: 'Remove tags from the chunks of a dataset', body: removeTagsBody,
      handler: ({ principal, params, body }) => metadata.removeTags(principal, params.dataset_id, body?.tags),
    }),
    route({
      method: 'put', path: '/datasets/:dataset_id/tags', tag: 'datasets', summary: 'Rename a tag in the chunks of a dataset', body: renameTagBody,
      handler: ({ principal, params, body }) => metadata.renameTag(principal, params.dataset_id, body?.from_tag, body?.to_tag),
    }),
  ];
}
