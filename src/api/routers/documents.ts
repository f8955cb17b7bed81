import fs from 'node:fs/promises';
import os from 'node:os';
import multer from 'multer';
import type { NextFunction, Request, Response } from 'express';
import { route, Reply, type ResponseDoc, type RouteSpec } from '../routes.js';
import { ERROR_REF } from '../openapi.js';
import { partialReply } from '../partial.js';
import type { DocumentService } from '../../services/documents.js';
import { pagingParams, deleteBody, LIMITS, list, listQuery, text } from '../schemas.js';
import { ApiError, badRequest } from '../../errors.js';
import { PARSER_CONFIG_SCHEMA } from '../../chunking/parser-config.js';
import { CHUNK_METHODS } from '../../chunking/index.js';
import { RUN_STATES } from '../../store/documents.js';
import { firstFew, summarize } from '../../text/summary.js';
import { contentDisposition, safeFileName } from '../../text/file-names.js';

const ORDER_COLUMNS = ['create_time', 'update_time', 'name'];

/** 9999-12-31T23:59:59Z: the latest Unix time in seconds a date filter takes. */
const MAX_UNIX_SECONDS = 253_402_300_799;

/** A metadata value: a scalar or a list of scalars (RAGFlow: `The type is not supported`). */
const metaValue = {
  type: ['string', 'number', 'boolean', 'array', 'null'],
  maxLength: LIMITS.text,
  maxItems: LIMITS.list,
  items: { type: ['string', 'number', 'boolean'], maxLength: LIMITS.text },
};

/** The spec calls the sort parameter order_by for documents; orderby (the SDK's name) works too. */
const listDocumentsQuery = listQuery(ORDER_COLUMNS, {
  order_by: { enum: ORDER_COLUMNS },
  keywords: text(LIMITS.queryText),
  run: list({ enum: RUN_STATES }, 100),
  create_time_from: { type: 'integer', minimum: 0, maximum: MAX_UNIX_SECONDS, default: 0 },
  create_time_to: { type: 'integer', minimum: 0, maximum: MAX_UNIX_SECONDS, default: 0 },
});

const updateBody = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 255 },
    display_name: { type: 'string', maxLength: 255 },
    meta_fields: { type: 'object', additionalProperties: metaValue },
    chunk_method: { enum: [...CHUNK_METHODS] },
    parser_config: { ...PARSER_CONFIG_SCHEMA, type: 'object' },
    /** Counters the parser owns: setting one is a 400 naming it (RAGFlow: can't change `chunk_count`). */
    chunk_count: false,
    token_count: false,
    progress: false,
  },
};

const documentIdsBody = {
  type: 'object',
  required: ['document_ids'],
  properties: { document_ids: { ...list(text(LIMITS.id), LIMITS.ids), minItems: 1 } },
};

/** The most files one upload takes. */
const MAX_FILES = 1000;

/** The upload's multipart body, for the OpenAPI document (multer parses it). */
export const uploadBody = (maxFileBytes: number) => ({
  type: 'object',
  required: ['file'],
  properties: { file: list({ type: 'string', format: 'binary', maxLength: maxFileBytes }, MAX_FILES) },
});

/**
 * Multipart upload into memory; field `file`, repeatable. File names are decoded as UTF-8 and made safe
 * to show (src/text/file-names.ts); a name with nothing readable left becomes `upload`.
 */
export function uploadMiddleware(maxFileBytes: number) {
  // To temporary files first: a file over the limit is refused without its bytes ever being held in
  // memory; accepted files are read back once the whole request has passed the limits.
  const upload = multer({ storage: multer.diskStorage({ destination: os.tmpdir() }), limits: { fileSize: maxFileBytes, files: MAX_FILES }, defParamCharset: 'utf8' }).array('file');
  return (req: Request, res: Response, next: NextFunction) => {
    if (!req.is('multipart/form-data')) return next(badRequest('Upload files as multipart/form-data in the field `file`'));
    upload(req, res, (err: unknown) => {
      if (!err) {
        readBack((req.files as Express.Multer.File[] | undefined) ?? []).then(() => next(), next);
        return;
      }
      const e = err as { code?: string; message?: string };
      if (e.code === 'LIMIT_FILE_SIZE') return next(new ApiError(413, `File too large: the limit is ${maxFileBytes} bytes per file (setting CAIRN_UPLOAD_LIMIT)`));
      if (e.code === 'LIMIT_UNEXPECTED_FILE') return next(badRequest('Files must be sent in the multipart field `file`'));
      next(badRequest(`Malformed multipart body: ${e.message ?? 'unreadable'}`));
    });
  };
}

/** The uploaded files' bytes from their temporary files (removed after), and their names made safe. */
async function readBack(files: Express.Multer.File[]): Promise<void> {
  try {
    for (const f of files) {
      f.buffer = await fs.readFile(f.path);
      f.originalname = safeFileName(f.originalname) || 'upload';
    }
  } finally {
    await Promise.all(files.map((f) => fs.rm(f.path, { force: true })));
  }
}

const ingestionLogsQuery = {
  type: 'object',
  properties: {
    document_id: text(LIMITS.id, 1),
    ...pagingParams(),
  },
};

const ingestBody = {
  type: 'object',
  required: ['doc_ids', 'run'],
  properties: {
    doc_ids: { type: 'array', minItems: 1, maxItems: 1000, items: text(LIMITS.id, 1) },
    run: { enum: ['1', '2', 1, 2] },
    delete: { type: 'boolean' },
    apply_kb: { type: 'boolean' },
    from_step: text(LIMITS.name, 1),
  },
};

/** Parse and stop talk to Temporal: when it cannot be reached nothing changes and the answer is a 503. */
const TEMPORAL_DOWN: Record<string, ResponseDoc> = {
  '503': { description: "Temporal (the workflow service) cannot be reached: nothing was changed; retry after the Retry-After header's seconds", content: { 'application/json': ERROR_REF } },
};

export function documentRoutes(documents: DocumentService, maxFileBytes: number): RouteSpec[] {
  const base = '/datasets/:dataset_id/documents';
  const update = (method: 'patch' | 'put') =>
    route({
      method, path: `${base}/:document_id`, tag: 'documents', summary: method === 'patch' ? 'Update a document' : 'Update a document (deprecated alias of PATCH)', deprecated: method === 'put', body: updateBody,
      handler: ({ principal, params, body }) => documents.update(principal, params.dataset_id, params.document_id, body),
    });
  const parse = (path: string, summary: string) =>
    route({
      method: 'post', path, tag: 'documents', summary, body: documentIdsBody, responses: TEMPORAL_DOWN,
      handler: async ({ principal, params, body }) => runReply(await documents.parse(principal, params.dataset_id, body.document_ids)),
    });
  const stop = (method: 'post' | 'delete', path: string, summary: string) =>
    route({
      method, path, tag: 'documents', summary, body: documentIdsBody, responses: TEMPORAL_DOWN,
      handler: async ({ principal, params, body }) => runReply(await documents.stop(principal, params.dataset_id, body.document_ids)),
    });
  return [
    route({
      method: 'post', path: base, tag: 'documents', summary: 'Upload documents (multipart field `file`, repeatable); a batch succeeds in part', admission: 'long',
      middleware: [uploadMiddleware(maxFileBytes)], multipart: uploadBody(maxFileBytes),
      handler: async ({ principal, params, req }) => {
        const files = ((req.files as Express.Multer.File[] | undefined) ?? []).map((f) => ({ name: f.originalname, bytes: f.buffer }));
        const { docs, errors } = await documents.upload(principal, params.dataset_id, files);
        if (docs.length === 0) throw badRequest(summarize(errors.map((e) => `${e.name}: ${e.message}`), '\n'), { errors });
        return new Reply(docs, errors.length ? { errors } : {});
      },
    }),
    route({
      method: 'get', path: base, tag: 'documents', summary: 'List documents', query: listDocumentsQuery,
      handler: ({ principal, params, query }) => documents.list(principal, params.dataset_id, { ...query, orderby: query.order_by ?? query.orderby }),
    }),
    update('patch'),
    update('put'),
    route({
      method: 'get', path: `${base}/:document_id`, tag: 'documents', summary: 'Download the original file', raw: true, responses: FILE_RESPONSES,
      handler: async ({ principal, params, res }) => sendFile(res, await documents.download(principal, params.dataset_id, params.document_id)),
    }),
    route({
      method: 'get', path: '/documents/:document_id', tag: 'documents', summary: 'Download the original file by document id', raw: true, responses: FILE_RESPONSES,
      handler: async ({ principal, params, res }) => sendFile(res, await documents.downloadById(principal, params.document_id)),
    }),
    route({
      method: 'get', path: '/documents/artifact/:filename', tag: 'documents', raw: true,
      summary: "A file an agent's CodeExec sandbox produced (RAGFlow's sandbox artifacts): Cairn's sandbox keeps no files, so a valid name is a 404 saying so",
      query: { type: 'object', properties: { session_id: text(LIMITS.id) } },
      handler: ({ params }) => artifact(params.filename),
    }),
    route({
      method: 'delete', path: base, tag: 'documents', summary: 'Delete documents (ids, or delete_all)', body: deleteBody,
      handler: async ({ principal, params, body }) => {
        const result = await documents.delete(principal, params.dataset_id, body.ids, body.delete_all ?? false);
        return partialReply(result, 'documents', { deleted: result.deleted }, { deleted: result.deleted });
      },
    }),
    parse('/datasets/:dataset_id/chunks', 'Start parsing documents'),
    parse(`${base}/parse`, 'Start parsing documents'),
    stop('delete', '/datasets/:dataset_id/chunks', 'Stop parsing documents'),
    stop('post', `${base}/stop`, 'Stop parsing documents'),
    route({
      method: 'get', path: '/datasets/:dataset_id/ingestions', tag: 'documents', query: ingestionLogsQuery,
      summary: "RAGFlow's ingestion logs: one log per document run, newest first, with each step's status, duration, output counts and error",
      handler: async ({ principal, params, query }) => documents.ingestionLogs(principal, params.dataset_id, query),
    }),
    route({
      method: 'get', path: '/datasets/:dataset_id/ingestions/summary', tag: 'documents',
      summary: "RAGFlow's ingestion summary: documents, chunks, tokens and the documents by run state",
      handler: async ({ principal, params }) => documents.ingestionSummary(principal, params.dataset_id),
    }),
    route({
      method: 'post', path: '/documents/ingest', tag: 'documents', body: ingestBody, responses: TEMPORAL_DOWN,
      summary: "RAGFlow's ingestion control: run \"1\" starts (or reruns) the documents' ingestion, through their dataset's pipeline or chunk method, \"2\" cancels it; delete removes their chunks first; from_step (Cairn) reruns a pipeline from that component, reusing the stored outputs of the steps before it",
      handler: async ({ principal, body }) => {
        await documents.ingest(principal, { docIds: body.doc_ids, run: body.run, delete: body.delete ?? false, fromStep: body.from_step });
        return true;
      },
    }),
  ];
}

export const FILE_RESPONSES = {
  '200': {
    description: "The file's bytes, with its content type (application/octet-stream when unknown) and name (Content-Disposition)",
    content: { '*/*': { type: 'string', format: 'binary' } },
  },
};

/** The file types RAGFlow serves as sandbox artifacts (its ARTIFACT_CONTENT_TYPES). */
const ARTIFACT_EXTENSIONS = ['.png', '.jpg', '.jpeg', '.svg', '.pdf', '.csv', '.json', '.html'];

/**
 * RAGFlow's `GET /documents/artifact/{filename}` serves the files a CodeExec script wrote, from its sandbox
 * artifact storage. Cairn's sandbox has no file system (CodeExec's `_ARTIFACTS` is always []), so no
 * artifact exists: the name is checked as RAGFlow checks it (400), and a valid one is a 404 that says why.
 */
function artifact(filename: string): never {
  if (!/^[\w.-]+$/.test(filename) || filename === '.' || filename === '..') throw badRequest(`Invalid filename: '${filename}' (a file name without a path)`);
  const ext = /\.[^.]+$/.exec(filename.toLowerCase())?.[0];
  if (!ext || !ARTIFACT_EXTENSIONS.includes(ext)) throw badRequest(`Invalid file type: '${filename}' (artifacts are ${ARTIFACT_EXTENSIONS.join(', ')})`);
  throw new ApiError(404, `Artifact '${filename}' not found: Cairn's CodeExec sandbox keeps no files, so agent runs produce no artifacts`);
}

export function sendFile(res: Response, file: { name: string; bytes: Uint8Array; contentType: string }): void {
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Length', String(file.bytes.byteLength));
  res.setHeader('Content-Disposition', contentDisposition('attachment', file.name));
  res.end(file.bytes);
}

/** Parse/stop succeed when at least one document was acted on; the others are listed (the first few) in `errors`. */
function runReply(result: { success_count: number; errors: string[] }) {
  const short = { ...result, errors: firstFew(result.errors) };
  if (result.success_count === 0) throw badRequest(summarize(result.errors), short);
  return result.errors.length ? short : { success_count: result.success_count };
}
