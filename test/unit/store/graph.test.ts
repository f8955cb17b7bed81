import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { newId } from '../../../src/ids.js';
import type { Graph, GraphEntity } from '../../../src/enrichment/graph/types.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

function entity(id: string, pagerank: number, name = id.toUpperCase()): GraphEntity {
  return { id, name, type: 'person', description: `${name} desc`, sourceIds: ['c1'], mentions: 1, pagerank, community: -1 };
}

const graph: Graph = {
  entities: [entity('a', 0.1), entity('b', 0.5), entity('c', 0.3)],
  relations: [
    { source: 'a', target: 'b', description: 'ab', weight: 2, sourceIds: ['c1'] },
    { source: 'b', target: 'c', description: 'bc', weight: 7, sourceIds: ['c2'] },
  ],
};

for (const profile of testProfiles()) {
  describe(`knowledge graph store [${profile}]`, () => {
    let db: MetaDb;
    let store: MetaStore;

    async function dataset(): Promise<string> {
      const id = newId();
      const now = Date.now();
      await store.datasets.insert({
        id, tenant_id: newId(), created_by: newId(), name: id, name_key: id, avatar: null, description: null, embedding_model: 'e@Builtin',
        permission: 'me', chunk_method: 'naive', parser_config: '{}', pagerank: 0, language: 'English', status: 'active', create_time: now, update_time: now,
      });
      return id;
    }

    before(async () => {
      db = await openTestMetaDb(profile);
      store = new MetaStore(db);
    });
    after(() => db.close());

    it('extractions come back in dataset order; a unit saved again is overwritten, not doubled', async () => {
      const ds = await dataset();
      await store.graph.saveExtractions(ds, 'b1', [
        { key: 'u2', seq: 1_000_000, chunkIds: ['c3'], entities: [{ name: 'Late', type: 't', description: '' }], relations: [] },
        { key: 'u1', seq: 0, chunkIds: ['c1', 'c2'], entities: [{ name: 'Old', type: 't', description: '' }], relations: [] },
      ]);
      await store.graph.saveExtractions(ds, 'b1', [{ key: 'u1', seq: 0, chunkIds: ['c1', 'c2'], entities: [{ name: 'New', type: 't', description: '' }], relations: [] }]);
      const found = await store.graph.extractions('b1');
      assert.deepEqual(found.map((u) => [u.seq, u.entities[0]!.name]), [[0, 'New'], [1_000_000, 'Late']]);
    });

    it('a build is invisible until published; publishing replaces the previous graph and drops other builds', async () => {
      const ds = await dataset();
      await store.graph.saveGraph(ds, 'old', graph);
      await store.graph.publish(ds, 'old', 't1', await store.graph.counts('old'));
      await store.graph.saveGraph(ds, 'new', { entities: [entity('z', 1)], relations: [] });
      assert.equal((await store.graph.published(ds))?.build_id, 'old', 'readers still see the old graph while the new one is built');
      assert.deepEqual((await store.graph.topEntities('old', 2)).map((e) => e.id), ['b', 'c'], 'by pagerank');
      assert.deepEqual((await store.graph.relationsAmong('old', ['a', 'b', 'c'], 1)).map((r) => r.description), ['bc'], 'heaviest first');
      await store.graph.publish(ds, 'new', 't2', await store.graph.counts('new'));
      const published = await store.graph.published(ds);
      assert.deepEqual([published?.build_id, published?.task_id, published?.entities, published?.relations], ['new', 't2', 1, 0]);
      assert.equal((await store.graph.graph('old')).entities.length, 0, 'the old build is gone');
    });

    it('discarding a failed build leaves the published graph alone; remove takes everything', async () => {
      const ds = await dataset();
      await store.graph.saveGraph(ds, 'good', graph);
      await store.graph.publish(ds, 'good', 't1', await store.graph.counts('good'));
      await store.graph.saveGraph(ds, 'failed', graph);
      await store.graph.discard(ds, 'failed');
      await store.graph.discard(ds, 'good');
      assert.equal((await store.graph.graph('failed')).entities.length, 0);
      assert.equal((await store.graph.graph('good')).entities.length, 3, 'the published build is never discarded');
      await store.graph.remove(ds);
      assert.equal(await store.graph.published(ds), undefined);
      assert.equal((await store.graph.graph('good')).entities.length, 0);
    });

    it('communities keep their members and reports; only reported ones are counted', async () => {
      const ds = await dataset();
      await store.graph.saveCommunities(ds, 'b', [
        { id: 0, entityIds: ['a', 'b'], weight: 1, title: '', summary: '', findings: [], rating: 0 },
        { id: 1, entityIds: ['c'], weight: 0.5, title: '', summary: '', findings: [], rating: 0 },
      ]);
      await store.graph.saveReport('b', 1, { title: 'T', summary: 'S', findings: [{ summary: 'f', explanation: 'e' }], rating: 7 });
      const [c1] = await store.graph.communities('b', 1, 2);
      assert.deepEqual(c1, { id: 1, entityIds: ['c'], weight: 0.5, title: 'T', summary: 'S', findings: [{ summary: 'f', explanation: 'e' }], rating: 7 });
      assert.equal((await store.graph.counts('b')).communities, 1);
    });

    it("deleting the dataset deletes its graph", async () => {
      const ds = await dataset();
      await store.graph.saveGraph(ds, 'gone', graph);
      await store.graph.publish(ds, 'gone', 't', await store.graph.counts('gone'));
      await store.datasets.remove(ds);
      assert.equal(await store.graph.published(ds), undefined);
      assert.equal((await store.graph.graph('gone')).relations.length, 0);
    });
  });
}
