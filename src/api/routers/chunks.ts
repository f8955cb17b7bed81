import { route, type RouteSpec } from '../routes.js';
import { partialReply } from '../partial.js';
import type { ChunkService } from '../../services/chunks.js';
import { LIMITS, list, pagingQuery, text } from '../schemas.js';

/** Keywords, questions, tags of a chunk. */
const strings = list(text(LIMITS.text));
/** Chunk ids in one delete: a document can have thousands of chunks. */
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp', 'image/tiff', 'application/octet-stream'];

const chunkIds = { ...list(text(LIMITS.id), LIMITS.chunkIds), type: ['array', 'null'] };

const addBody = {
  type: 'object',
  required: ['content'],
  properties: {
    content: text(LIMITS.longText, 1),
    important_keywords: strings,
    questions: strings,
    tag_kwd: strings,
    image_base64: { type: ['string', 'null'], maxLength: LIMITS.image },
  },
};

const updateBody = {
  type: 'object',
  properties: {
    content: text(LIMITS.longText),
    important_keywords: strings,
    questions: strings,
    tag_kwd: strings,
    /** [page, x0, x1, top, bottom] per place the chunk was found. */
    positions: list(list({ type: 'number' }, 16), LIMITS.list),
    /** RAGFlow takes a bool or 0/1 (its available_int). */
    available: { enum: [true, false, 0, 1] },
    image_base64: text(LIMITS.image, 1),
  },
};

const listQuery = {
  type: 'object',
  properties: { ...pagingQuery.properties, keywords: text(LIMITS.queryText), id: text(LIMITS.id) },
};

const deleteBody = {
  type: 'object',
  properties: {
    chunk_ids: chunkIds,
    ids: chunkIds,
    delete_all: { type: 'boolean', default: false },
  },
};

export function chunkRoutes(chunks: ChunkService): RouteSpec[] {
  const base = '/datasets/:dataset_id/documents/:document_id/chunks';
  const update = (method: 'patch' | 'put') =>
    route({
      method, path: `${base}/:chunk_id`, tag: 'chunks', summary: method === 'patch' ? 'Update a chunk' : 'Update a chunk (deprecated alias of PATCH)', deprecated: method === 'put',
      body: updateBody, bodyErrorCode: 1002,
      handler: async ({ principal, params, body }) => {
        const input = body.available === undefined ? body : { ...body, available: Boolean(body.available) };
        await chunks.update(principal, params.dataset_id, params.document_id, params.chunk_id, input);
        return null;
      },
    });
  return [
    route({
      method: 'get', path: base, tag: 'chunks', summary: 'List the chunks of a document', query: listQuery,
      handler: ({ principal, params, query }) => chunks.list(principal, params.dataset_id, params.document_id, query),
    }),
    route({
      method: 'post', path: base, tag: 'chunks', summary: 'Add a chunk (embedded and searchable at once)', body: addBody,
      handler: ({ principal, params, body }) => chunks.add(principal, params.dataset_id, params.document_id, body),
    }),
    route({
      method: 'get', path: `${base}/:chunk_id`, tag: 'chunks', summary: 'One chunk of a document',
      handler: ({ principal, params }) => chunks.get(principal, params.dataset_id, params.document_id, params.chunk_id),
    }),
    update('patch'),
    update('put'),
    route({
      method: 'delete', path: base, tag: 'chunks', summary: 'Delete chunks (chunk_ids, or delete_all)', body: deleteBody,
      handler: async ({ principal, params, body }) => {
        const result = await chunks.delete(principal, params.dataset_id, params.document_id, body.chunk_ids ?? body.ids, body.delete_all ?? false);
        return partialReply(result, 'chunks', { deleted: result.deleted }, { deleted: result.deleted });
      },
    }),
    route({
      method: 'get', path: '/documents/images/:image_id', tag: 'chunks', raw: true, beta: true,
      summary: "An image by id `{dataset_id}-{chunk_id}` (chunks' image_id, references' img_id), or an image document's file by `{dataset_id}-{document_id}`; an API key's beta token is accepted",
      responses: { '200': { description: 'The image (PNG, JPEG, GIF, WebP, BMP or TIFF; other stored bytes as application/octet-stream)', content: Object.fromEntries(IMAGE_TYPES.map((t) => [t, { type: 'string', format: 'binary' }])) } },
      handler: async ({ principal, params, res }) => {
        const { bytes, contentType } = await chunks.image(principal, params.image_id);
        res.setHeader('Content-Type', contentType);
        res.setHeader('Content-Length', String(bytes.byteLength));
        res.setHeader('X-Content-Type-Options', 'nosniff');
        res.end(bytes);
      },
    }),
  ];
}
