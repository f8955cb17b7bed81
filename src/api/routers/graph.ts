import { route, type RouteSpec } from '../routes.js';
import type { GraphViewService } from '../../enrichment/graph/view.js';
import type { DatasetIndexService } from '../../services/dataset-indexes.js';

const wipeQuery = { type: 'object', properties: { wipe: { type: 'boolean', default: true } } };

/**
 * A dataset's knowledge graph: `GET /datasets/{id}/graph` (and RAGFlow's deprecated `knowledge_graph`
 * spelling). Removal is `DELETE /datasets/{id}/graph` (dataset-indexes.ts); the deprecated
 * `DELETE …/knowledge_graph`, broken in RAGFlow, does the same here.
 */
export function graphRoutes(view: GraphViewService, indexes: DatasetIndexService): RouteSpec[] {
  const get = (path: string, deprecated: boolean) =>
    route({
      method: 'get', path, tag: 'datasets', deprecated,
      summary: deprecated ? "The dataset's knowledge graph (GET …/graph)" : "The dataset's knowledge graph: the 256 best-ranked nodes (pagerank) and the 128 heaviest edges among them; {} when none was built",
      handler: ({ principal, params }) => view.graph(principal, params.dataset_id),
    });
  return [
    get('/datasets/:dataset_id/graph', false),
    get('/datasets/:dataset_id/knowledge_graph', true),
    route({
      method: 'delete', path: '/datasets/:dataset_id/knowledge_graph', tag: 'datasets', deprecated: true, query: wipeQuery,
      summary: "Cancel the dataset's graph job and remove its graph (DELETE …/graph)",
      handler: async ({ principal, params, query }) => {
        await indexes.remove(principal, params.dataset_id, 'graph', query.wipe);
        return true;
      },
    }),
  ];
}
