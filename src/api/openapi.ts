import { servedPath, type ResponseDoc, type RouteSpec } from './routes.js';
import type { JsonSchema } from './validation.js';
import { MAX_ERROR_MESSAGE } from './envelope.js';
import { LIMITS } from './schemas.js';

export const ENVELOPE_REF = { $ref: '#/components/schemas/Envelope' };
export const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** Path parameters are ids and names: Cairn's ids are 32 hex, provider, model and instance names longer. */
const PATH_PARAM = { type: 'string', minLength: 1, maxLength: LIMITS.name };

const ENVELOPE_200: ResponseDoc = { description: 'Success: {"code":0,"data":...}', content: { 'application/json': ENVELOPE_REF } };

/** One server-sent event: its `data:` line, a JSON frame (or `[DONE]`, `true` at the end of some streams). */
export const SSE_EVENT = { type: 'object', required: ['data'], properties: { data: { type: 'string' }, event: { type: 'string' } } };

/** A route that answers the envelope, or with stream: true server-sent events (`data:` frames). */
export function envelopeOrStream(description: string, json: JsonSchema = ENVELOPE_REF): Record<string, ResponseDoc> {
  return { '200': { description, content: { 'application/json': json, 'text/event-stream': SSE_EVENT } } };
}

/**
 * OpenAPI 3.1 document generated from the same schemas that validate requests. Each operation lists
 * the statuses it can answer: 200 as the route produces it, and the 4xx (and admission's 503) it can
 * give, all in the error envelope unless the route answers errors in its own shape (`errors`).
 */
export function buildOpenApi(routes: RouteSpec[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = servedPath(r).replace(/:([A-Za-z_]+)/g, '{$1}');
    const pathParams = [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: PATH_PARAM }));
    const queryProps = (r.query?.properties ?? {}) as Record<string, JsonSchema>;
    const queryRequired = new Set((r.query?.required as string[] | undefined) ?? []);
    const queryParams = Object.entries(queryProps).map(([name, schema]) => ({
      name,
      in: 'query',
      required: queryRequired.has(name),
      schema,
    }));
    const op: Record<string, unknown> = {
      summary: r.summary,
      tags: [r.tag],
      operationId: `${r.method}${r.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      parameters: [...pathParams, ...queryParams],
      responses: { ...errorResponses(r), ...successResponses(r) },
    };
    if (r.deprecated) op.deprecated = true;
    if (r.body) {
      const required = ((r.body.required as string[] | undefined) ?? []).length > 0;
      op.requestBody = { required, content: { 'application/json': { schema: r.body } } };
    } else if (r.multipart) {
      op.requestBody = { required: true, content: { 'multipart/form-data': { schema: r.multipart } } };
    }
    if (r.public) op.security = [];
    (paths[path] ??= {})[r.method] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Cairn API', version, description: 'RAGFlow-compatible retrieval-augmented chat service.' },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key or a login token' } },
      schemas: {
        Envelope: { type: 'object', properties: { code: { const: 0 }, data: {} }, required: ['code'] },
        Error: {
          type: 'object',
          properties: {
            code: { type: 'integer', not: { const: 0 } },
            message: { type: 'string', maxLength: MAX_ERROR_MESSAGE },
            data: {},
          },
          required: ['code', 'message'],
        },
      },
    },
  };
}

function successResponses(r: RouteSpec): Record<string, unknown> {
  const ok = r.produces ? { description: r.produces.description, content: { [r.produces.contentType]: { type: 'string' } } } : ENVELOPE_200;
  const docs: Record<string, ResponseDoc> = { '200': ok, ...r.responses };
  return Object.fromEntries(Object.entries(docs).map(([status, doc]) => [status, response(doc)]));
}

/**
 * The errors a route can answer: 400 (malformed JSON, validation, the service's own checks), 401 unless
 * public, 403, 404, 409 for writes, 413/415 for routes that take a body, 503 for admission-controlled
 * routes, 431 for routes with a query string.
 */
function errorResponses(r: RouteSpec): Record<string, unknown> {
  const schema = r.errors?.schema ?? ERROR_REF;
  const error = (description: string, body: JsonSchema = schema) => response({ description, content: { 'application/json': body } });
  const takesBody = r.method !== 'get';
  const out: Record<string, unknown> = {
    '400': error('Invalid request: the message names the fields at fault'),
    '403': error('Authenticated without access'),
    '404': error('Not found'),
  };
  if (!r.public) out['401'] = error('Missing or invalid credentials');
  if (takesBody) {
    out['409'] = error('Conflicts with the current state (e.g. a turn still running)');
    out['413'] = error('Request body too large');
    out['415'] = error('Unsupported content encoding or charset');
  }
  // Admission control answers in the envelope whatever the route's own error shape.
  if (r.admission) out['503'] = error('Service busy: retry after the Retry-After header\'s seconds', ERROR_REF);
  // Node itself refuses a request line and headers over its 16 KiB limit, with no body.
  if (r.query) out['431'] = { description: 'Request line and headers over 16 KiB (answered by Node, no body)' };
  return out;
}

function response(doc: ResponseDoc): Record<string, unknown> {
  return { description: doc.description, content: Object.fromEntries(Object.entries(doc.content).map(([type, schema]) => [type, { schema }])) };
}
