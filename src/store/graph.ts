import type { Kysely, Selectable } from 'kysely';
import type { Database, KnowledgeGraphsTable } from './schema.js';
import type { Graph, GraphCommunity, GraphEntity, GraphRelation, RawEntity, RawRelation, UnitExtraction } from '../enrichment/graph/types.js';

export type PublishedGraph = Selectable<KnowledgeGraphsTable>;

/** Rows per insert: far below PostgreSQL's 65,535 parameters (the widest row here has 11 columns). */
const BATCH = 200;
/** Ids per `in (...)` list. */
const IN_BATCH = 500;

const TABLES = ['graph_extractions', 'graph_entities', 'graph_relations', 'graph_communities'] as const;

type EntityRow = Selectable<Database['graph_entities']>;
type RelationRow = Selectable<Database['graph_relations']>;
type CommunityRow = Selectable<Database['graph_communities']>;

function toEntity(r: EntityRow): GraphEntity {
  return {
    id: r.id, name: r.name, type: r.type, description: r.description, sourceIds: JSON.parse(r.source_ids) as string[],
    mentions: Number(r.mentions), pagerank: Number(r.pagerank), community: Number(r.community),
  };
}

function toRelation(r: RelationRow): GraphRelation {
  return { source: r.source_id, target: r.target_id, description: r.description, weight: Number(r.weight), sourceIds: JSON.parse(r.source_ids) as string[] };
}

function toCommunity(r: CommunityRow): GraphCommunity {
  return {
    id: Number(r.id), entityIds: JSON.parse(r.entity_ids) as string[], weight: Number(r.weight), title: r.title, summary: r.summary,
    findings: JSON.parse(r.findings) as GraphCommunity['findings'], rating: Number(r.rating),
  };
}

/**
 * The knowledge graphs of datasets. A graph job writes a build (extractions, then entities, relations and
 * communities under its build id); `publish` makes it the dataset's graph and drops every other build, so
 * readers always see one whole graph: the previous one until the new one is complete.
 */
export class GraphRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Stores what extraction units found; a unit stored before (a retried batch) is overwritten. */
  async saveExtractions(datasetId: string, buildId: string, units: (UnitExtraction & { key: string })[]): Promise<void> {
    for (let i = 0; i < units.length; i += BATCH) {
      const rows = units.slice(i, i + BATCH).map((u) => ({
        build_id: buildId, unit_key: u.key, dataset_id: datasetId, seq: u.seq,
        chunk_ids: JSON.stringify(u.chunkIds), entities: JSON.stringify(u.entities), relations: JSON.stringify(u.relations),
      }));
      await this.db
        .insertInto('graph_extractions')
        .values(rows)
        .onConflict((oc) => oc.columns(['build_id', 'unit_key']).doUpdateSet((eb) => ({
          seq: eb.ref('excluded.seq'), chunk_ids: eb.ref('excluded.chunk_ids'), entities: eb.ref('excluded.entities'), relations: eb.ref('excluded.relations'),
        })))
        .execute();
    }
  }

  /** The build's extractions in dataset order. */
  async extractions(buildId: string): Promise<UnitExtraction[]> {
    const out: UnitExtraction[] = [];
    let after = -1;
    for (;;) {
      const rows = await this.db.selectFrom('graph_extractions').selectAll().where('build_id', '=', buildId).where('seq', '>', after).orderBy('seq').limit(BATCH).execute();
      for (const r of rows) {
        out.push({ seq: Number(r.seq), chunkIds: JSON.parse(r.chunk_ids) as string[], entities: JSON.parse(r.entities) as RawEntity[], relations: JSON.parse(r.relations) as RawRelation[] });
      }
      if (rows.length < BATCH) return out;
      after = Number(rows.at(-1)!.seq);
    }
  }

  /** Replaces the build's entities and relations (kept in the graph's order). */
  async saveGraph(datasetId: string, buildId: string, graph: Graph): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('graph_entities').where('build_id', '=', buildId).execute();
      await trx.deleteFrom('graph_relations').where('build_id', '=', buildId).execute();
      for (let i = 0; i < graph.entities.length; i += BATCH) {
        await trx
          .insertInto('graph_entities')
          .values(graph.entities.slice(i, i + BATCH).map((e, j) => ({
            build_id: buildId, id: e.id, dataset_id: datasetId, ord: i + j, name: e.name, type: e.type, description: e.description,
            source_ids: JSON.stringify(e.sourceIds), mentions: e.mentions, pagerank: e.pagerank, community: e.community,
          })))
          .execute();
      }
      for (let i = 0; i < graph.relations.length; i += BATCH) {
        await trx
          .insertInto('graph_relations')
          .values(graph.relations.slice(i, i + BATCH).map((r, j) => ({
            build_id: buildId, source_id: r.source, target_id: r.target, dataset_id: datasetId, ord: i + j, description: r.description,
            weight: r.weight, source_ids: JSON.stringify(r.sourceIds),
          })))
          .execute();
      }
    });
  }

  /** The build's whole graph, in its order. */
  async graph(buildId: string): Promise<Graph> {
    const entities = await this.db.selectFrom('graph_entities').selectAll().where('build_id', '=', buildId).orderBy('ord').execute();
    const relations = await this.db.selectFrom('graph_relations').selectAll().where('build_id', '=', buildId).orderBy('ord').execute();
    return { entities: entities.map(toEntity), relations: relations.map(toRelation) };
  }

  /** Replaces the build's communities. */
  async saveCommunities(datasetId: string, buildId: string, communities: GraphCommunity[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('graph_communities').where('build_id', '=', buildId).execute();
      for (let i = 0; i < communities.length; i += BATCH) {
        await trx
          .insertInto('graph_communities')
          .values(communities.slice(i, i + BATCH).map((c) => ({
            build_id: buildId, id: c.id, dataset_id: datasetId, entity_ids: JSON.stringify(c.entityIds), weight: c.weight,
            title: c.title, summary: c.summary, findings: JSON.stringify(c.findings), rating: c.rating,
          })))
          .execute();
      }
    });
  }

  /** Communities of the build with ids in [from, to), by id. */
  async communities(buildId: string, from = 0, to = Number.MAX_SAFE_INTEGER): Promise<GraphCommunity[]> {
    const rows = await this.db.selectFrom('graph_communities').selectAll().where('build_id', '=', buildId).where('id', '>=', from).where('id', '<', to).orderBy('id').execute();
    return rows.map(toCommunity);
  }

  async saveReport(buildId: string, id: number, report: Pick<GraphCommunity, 'title' | 'summary' | 'findings' | 'rating'>): Promise<void> {
    await this.db
      .updateTable('graph_communities')
      .set({ title: report.title, summary: report.summary, findings: JSON.stringify(report.findings), rating: report.rating })
      .where('build_id', '=', buildId)
      .where('id', '=', id)
      .execute();
  }

  /** How many entities, relations and reported communities the build has. */
  async counts(buildId: string): Promise<{ entities: number; relations: number; communities: number }> {
    const count = async (table: 'graph_entities' | 'graph_relations' | 'graph_communities', reported = false) => {
      let q = this.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('build_id', '=', buildId);
      if (reported) q = q.where('summary', '!=', '');
      return Number((await q.executeTakeFirstOrThrow()).n);
    };
    return { entities: await count('graph_entities'), relations: await count('graph_relations'), communities: await count('graph_communities', true) };
  }

  /** Makes the build the dataset's graph and removes every other build of the dataset (and this build's extractions). */
  async publish(datasetId: string, buildId: string, taskId: string, counts: { entities: number; relations: number; communities: number }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = { build_id: buildId, task_id: taskId, ...counts, create_time: Date.now() };
      await trx.insertInto('knowledge_graphs').values({ dataset_id: datasetId, ...row }).onConflict((oc) => oc.column('dataset_id').doUpdateSet(row)).execute();
      for (const table of TABLES) {
        await trx.deleteFrom(table).where('dataset_id', '=', datasetId).where('build_id', '!=', buildId).execute();
      }
      await trx.deleteFrom('graph_extractions').where('build_id', '=', buildId).execute();
    });
  }

  published(datasetId: string): Promise<PublishedGraph | undefined> {
    return this.db.selectFrom('knowledge_graphs').selectAll().where('dataset_id', '=', datasetId).executeTakeFirst();
  }

  async publishedMany(datasetIds: string[]): Promise<PublishedGraph[]> {
    if (!datasetIds.length) return [];
    return this.db.selectFrom('knowledge_graphs').selectAll().where('dataset_id', 'in', datasetIds).execute();
  }

  /** Removes a build that was not published (a cancelled or failed job's work). */
  async discard(datasetId: string, buildId: string): Promise<void> {
    const current = await this.published(datasetId);
    if (current?.build_id === buildId) return;
    for (const table of TABLES) await this.db.deleteFrom(table).where('dataset_id', '=', datasetId).where('build_id', '=', buildId).execute();
  }

  /** Removes the dataset's graph and every build of it. */
  async remove(datasetId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('knowledge_graphs').where('dataset_id', '=', datasetId).execute();
      for (const table of TABLES) await trx.deleteFrom(table).where('dataset_id', '=', datasetId).execute();
    });
  }

  /** The build's `limit` best-ranked entities (pagerank, then graph order). */
  async topEntities(buildId: string, limit: number): Promise<GraphEntity[]> {
    const rows = await this.db.selectFrom('graph_entities').selectAll().where('build_id', '=', buildId).orderBy('pagerank', 'desc').orderBy('ord').limit(limit).execute();
    return rows.map(toEntity);
  }

  /** The build's relations between two of `ids`, heaviest first, at most `limit`. */
  async relationsAmong(buildId: string, ids: string[], limit: number): Promise<GraphRelation[]> {
    if (!ids.length) return [];
    const rows = await this.db
      .selectFrom('graph_relations')
      .selectAll()
      .where('build_id', '=', buildId)
      .where('source_id', 'in', ids)
      .where('target_id', 'in', ids)
      .orderBy('weight', 'desc')
      .orderBy('ord')
      .limit(limit)
      .execute();
    return rows.map(toRelation);
  }

  /** Every entity of the build, in graph order (what retrieval matches a question against). */
  async entities(buildId: string): Promise<GraphEntity[]> {
    const rows = await this.db.selectFrom('graph_entities').selectAll().where('build_id', '=', buildId).orderBy('ord').execute();
    return rows.map(toEntity);
  }

  /** The build's relations with an end among `ids`. */
  async relationsOf(buildId: string, ids: string[]): Promise<GraphRelation[]> {
    const found = new Map<string, GraphRelation>();
    for (let i = 0; i < ids.length; i += IN_BATCH) {
      const batch = ids.slice(i, i + IN_BATCH);
      for (const column of ['source_id', 'target_id'] as const) {
        const rows = await this.db.selectFrom('graph_relations').selectAll().where('build_id', '=', buildId).where(column, 'in', batch).execute();
        for (const r of rows) found.set(`${r.source_id}|${r.target_id}`, toRelation(r));
      }
    }
    return [...found.values()];
  }
}
