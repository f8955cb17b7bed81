import { route, type RouteSpec } from '../routes.js';
import { checkIndexType, type DatasetIndexService } from '../../services/dataset-indexes.js';
import type { DatasetIndexType } from '../../store/enrichment.js';

/** `type` is checked by the service, so an unknown one gets RAGFlow's message listing the valid types. */
const typeQuery = { type: 'object', properties: { type: { type: 'string', maxLength: 64 } } };
const deleteQuery = { type: 'object', properties: { type: { type: 'string', maxLength: 64 }, wipe: { type: 'boolean', default: true } } };
const wipeQuery = { type: 'object', properties: { wipe: { type: 'boolean', default: true } } };

/**
 * RAGFlow's dataset index jobs: `POST|GET|DELETE /datasets/{id}/index?type=raptor|graph`, the
 * `DELETE /datasets/{id}/raptor|graph` spellings and the deprecated run_/trace_ routes.
 */
export function datasetIndexRoutes(indexes: DatasetIndexService): RouteSpec[] {
  const routes: RouteSpec[] = [
    route({
      method: 'post', path: '/datasets/:dataset_id/index', tag: 'datasets', summary: 'Start a RAPTOR or knowledge-graph job over the dataset', query: typeQuery,
      handler: ({ principal, params, query }) => indexes.start(principal, params.dataset_id, checkIndexType(query.type)),
    }),
    route({
      method: 'get', path: '/datasets/:dataset_id/index', tag: 'datasets', summary: "The dataset's latest job of the type, with its progress ({} if none)", query: typeQuery,
      handler: ({ principal, params, query }) => indexes.status(principal, params.dataset_id, checkIndexType(query.type)),
    }),
    route({
      method: 'delete', path: '/datasets/:dataset_id/index', tag: 'datasets', summary: 'Cancel a running job and remove what the type built (wipe=false: cancel only)', query: deleteQuery,
      handler: async ({ principal, params, query }) => {
        await indexes.remove(principal, params.dataset_id, checkIndexType(query.type), query.wipe);
        return true;
      },
    }),
  ];
  for (const type of ['raptor', 'graph'] as DatasetIndexType[]) {
    const old = type === 'graph' ? 'graphrag' : 'raptor';
    routes.push(
      route({
        method: 'delete', path: `/datasets/:dataset_id/${type}`, tag: 'datasets', summary: `Cancel the dataset's ${type} job and remove what it built`, query: wipeQuery,
        handler: async ({ principal, params, query }) => {
          await indexes.remove(principal, params.dataset_id, type, query.wipe);
          return true;
        },
      }),
      route({
        method: 'post', path: `/datasets/:dataset_id/run_${old}`, tag: 'datasets', deprecated: true, summary: `Start the ${type} job (POST …/index?type=${type})`,
        handler: ({ principal, params }) => indexes.start(principal, params.dataset_id, type),
      }),
      route({
        method: 'get', path: `/datasets/:dataset_id/trace_${old}`, tag: 'datasets', deprecated: true, summary: `The ${type} job's progress (GET …/index?type=${type})`,
        handler: ({ principal, params }) => indexes.status(principal, params.dataset_id, type),
      }),
    );
  }
  return routes;
}
