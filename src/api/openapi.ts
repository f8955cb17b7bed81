import type { RouteSpec } from './routes.js';
import type { JsonSchema } from './validation.js';

/** OpenAPI 3.1 document generated from the same schemas that validate requests. */
export function buildOpenApi(routes: RouteSpec[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = '/api/v1' + r.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const pathParams = [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
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
      responses: {
        '200': { description: 'Success: {"code":0,"data":...}', content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } } },
        '400': { description: 'Invalid request', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        '401': { description: 'Missing or invalid credentials' },
        '403': { description: 'Authenticated without access' },
        '404': { description: 'Not found' },
      },
    };
    if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: r.body } } };
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
        Error: { type: 'object', properties: { code: { type: 'integer' }, message: { type: 'string' } }, required: ['code', 'message'] },
      },
    },
  };
}
