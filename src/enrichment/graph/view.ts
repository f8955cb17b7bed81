import type { MetaStore } from '../../store/index.js';
import type { Principal } from '../../services/auth.js';
import type { DatasetService } from '../../services/datasets.js';

/** RAGFlow's limits on `GET /datasets/{id}/graph`: the best-ranked nodes and the heaviest edges among them. */
export const GRAPH_NODE_LIMIT = 256;
export const GRAPH_EDGE_LIMIT = 128;

export interface GraphNodeView {
  id: string;
  entity_name: string;
  entity_type: string;
  description: string;
  pagerank: number;
  /** Chunks the entity was found in. */
  source_id: string[];
  /** Its community's number, or null when it has none (or communities were not asked for). */
  community: number | null;
}

export interface GraphEdgeView {
  source: string;
  target: string;
  description: string;
  weight: number;
  source_id: string[];
}

export interface DatasetGraphView {
  /** `{}` while the dataset has no graph, as in RAGFlow. */
  graph: { directed: false; multigraph: false; nodes: GraphNodeView[]; edges: GraphEdgeView[] } | Record<string, never>;
  mind_map: Record<string, never>;
}

/** The dataset's published knowledge graph as RAGFlow's graph route answers it. */
export class GraphViewService {
  constructor(
    private readonly store: MetaStore,
    private readonly datasets: DatasetService,
  ) {}

  async graph(p: Principal, datasetId: string): Promise<DatasetGraphView> {
    const dataset = await this.datasets.get(p, datasetId);
    const published = await this.store.graph.published(dataset.id);
    if (!published) return { graph: {}, mind_map: {} };
    const entities = await this.store.graph.topEntities(published.build_id, GRAPH_NODE_LIMIT);
    // A node's id is its name, as in RAGFlow; a name that two types share gets its type too.
    const seen = new Map<string, number>();
    for (const e of entities) seen.set(e.name, (seen.get(e.name) ?? 0) + 1);
    const nodeId = new Map(entities.map((e) => [e.id, seen.get(e.name)! > 1 ? `${e.name} (${e.type})` : e.name]));
    const relations = await this.store.graph.relationsAmong(published.build_id, entities.map((e) => e.id), GRAPH_EDGE_LIMIT);
    return {
      graph: {
        directed: false,
        multigraph: false,
        nodes: entities.map((e) => ({
          id: nodeId.get(e.id)!,
          entity_name: e.name,
          entity_type: e.type,
          description: e.description,
          pagerank: e.pagerank,
          source_id: e.sourceIds,
          community: e.community >= 0 ? e.community : null,
        })),
        edges: relations.map((r) => ({ source: nodeId.get(r.source)!, target: nodeId.get(r.target)!, description: r.description, weight: r.weight, source_id: r.sourceIds })),
      },
      mind_map: {},
    };
  }
}
