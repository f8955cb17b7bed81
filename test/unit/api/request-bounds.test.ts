import assert from 'node:assert/strict';
import type { RouteSpec } from '../../../src/api/routes.js';
import { buildOpenApi } from '../../../src/api/openapi.js';
import { systemRoutes } from '../../../src/api/routers/system.js';
import { accountRoutes } from '../../../src/api/routers/accounts.js';
import { metadataRoutes } from '../../../src/api/routers/metadata.js';
import { datasetRoutes } from '../../../src/api/routers/datasets.js';
import { documentRoutes } from '../../../src/api/routers/documents.js';
import { chunkRoutes } from '../../../src/api/routers/chunks.js';
import { searchRoutes } from '../../../src/api/routers/searches.js';
import { retrievalRoutes } from '../../../src/api/routers/retrieval.js';
import { providerRoutes } from '../../../src/api/routers/providers.js';
import { chatRoutes } from '../../../src/api/routers/chats.js';
import { openaiRoutes } from '../../../src/api/routers/openai.js';
import { agentRoutes } from '../../../src/api/routers/agents.js';
import { agentTriggerRoutes } from '../../../src/api/routers/agent-triggers.js';
import { memoryRoutes } from '../../../src/api/routers/memories.js';
import { mcpServerRoutes } from '../../../src/api/routers/mcp-servers.js';
import { unboundedFields, unboundedInOpenApi } from '../../support/schema-bounds.js';

/** Every route of the API, as server.ts registers them; the services are never called here. */
function allRoutes(): RouteSpec[] {
  const none = {} as never;
  const routes: RouteSpec[] = [];
  routes.push(
    ...systemRoutes([{ name: 'database', check: async () => {} }], () => routes),
    ...accountRoutes(none),
    ...metadataRoutes(none),
    ...datasetRoutes(none, none),
    ...documentRoutes(none, 100 * 1024 * 1024),
    ...chunkRoutes(none),
    ...retrievalRoutes(none, none, none),
    ...searchRoutes(none),
    ...providerRoutes(none),
    ...chatRoutes(none, none, none),
    ...openaiRoutes(none),
    ...agentRoutes(none, none, none),
    ...agentTriggerRoutes(none, none),
    ...memoryRoutes(none),
    ...mcpServerRoutes(none),
  );
  return routes;
}

describe('request bounds (issue 19)', () => {
  const routes = allRoutes();

  it('finds unbounded strings, lists and integers, so the checks below can fail', () => {
    const loose = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        ids: { type: 'array', items: { type: 'string', maxLength: 32 } },
        page: { type: 'integer', minimum: 1 },
        value: {},
        either: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        id: { type: 'string', pattern: '^[0-9a-f]{32}$' },
        kind: { enum: ['a', 'b'] },
      },
    };
    assert.deepEqual(unboundedFields(loose, 'body'), [
      'body.name: string without maxLength',
      'body.ids: list without maxItems',
      'body.page: integer without minimum and maximum',
      'body.value: string without maxLength',
      'body.value: list without maxItems',
      'body.either<anyOf 0>: string without maxLength',
    ]);
  });

  it('bounds every string, list and integer of every route\'s body and query', () => {
    const found = routes.flatMap((r) => {
      const where = `${r.method.toUpperCase()} ${r.path}`;
      return [
        ...unboundedFields(r.body, `${where} body`),
        ...unboundedFields(r.query, `${where} query`),
        ...unboundedFields(r.multipart, `${where} multipart`),
      ];
    });
    assert.deepEqual(found, []);
  });

  it('bounds every parameter and request body of the OpenAPI document', () => {
    const doc = buildOpenApi(routes, 'test') as { paths: Record<string, Record<string, any>> };
    assert.ok(Object.keys(doc.paths).length > 50, 'the document has the routes');
    assert.deepEqual(unboundedInOpenApi(doc), []);
  });

  it('documents the statuses each route answers: 401 unless public, 413 and 415 where a body is read, 503 under admission control', () => {
    const doc = buildOpenApi(routes, 'test') as { paths: Record<string, Record<string, any>> };
    const create = doc.paths['/api/v1/datasets']!.post;
    assert.deepEqual(Object.keys(create.responses).sort(), ['200', '400', '401', '403', '404', '409', '413', '415']);
    assert.deepEqual(create.responses['400'].content['application/json'].schema, { $ref: '#/components/schemas/Error' });
    const ping = doc.paths['/api/v1/system/ping']!.get;
    assert.deepEqual(ping.security, []);
    assert.equal(ping.responses['401'], undefined);
    assert.deepEqual(Object.keys(ping.responses['200'].content), ['text/plain']);
  });

  it('documents the routes that answer outside the envelope as they answer', () => {
    const doc = buildOpenApi(routes, 'test') as { paths: Record<string, Record<string, any>> };
    const health = doc.paths['/api/v1/system/healthz']!.get.responses;
    assert.equal(health['200'].content['application/json'].schema.properties.status.const, 'ok');
    assert.equal(health['500'].content['application/json'].schema.properties.status.const, 'nok');
    const download = doc.paths['/api/v1/datasets/{dataset_id}/documents/{document_id}']!.get.responses['200'];
    assert.deepEqual(Object.keys(download.content), ['*/*']);
    const openai = doc.paths['/api/v1/openai/{chat_id}/chat/completions']!.post.responses;
    assert.deepEqual(Object.keys(openai['200'].content), ['application/json', 'text/event-stream']);
    assert.deepEqual(openai['401'].content['application/json'].schema.required, ['error']);
    const completions = doc.paths['/api/v1/chats/{chat_id}/completions']!.post.responses['200'];
    assert.deepEqual(Object.keys(completions.content), ['application/json', 'text/event-stream']);
    const upload = doc.paths['/api/v1/datasets/{dataset_id}/documents']!.post.requestBody;
    assert.deepEqual(Object.keys(upload.content), ['multipart/form-data']);
  });
});
