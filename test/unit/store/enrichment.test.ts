import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { NO_PROGRESS } from '../../../src/store/enrichment.js';
import { newId } from '../../../src/ids.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

for (const profile of testProfiles()) {
  describe(`enrichment cache and dataset index tasks [${profile}]`, () => {
    let db: MetaDb;
    let store: MetaStore;
    let datasetId: string;

    before(async () => {
      db = await openTestMetaDb(profile);
      store = new MetaStore(db);
      datasetId = newId();
      const now = Date.now();
      await store.datasets.insert({
        id: datasetId, tenant_id: newId(), created_by: newId(), name: 'd', name_key: 'd', avatar: null, description: null, embedding_model: 'e@Builtin',
        permission: 'me', chunk_method: 'naive', parser_config: '{}', pagerank: 0, language: 'English', status: 'active', create_time: now, update_time: now,
      });
    });
    after(() => db.close());

    it('answers only the keys it holds, and a key stored twice keeps its first value', async () => {
      await store.enrichment.remember([{ key: 'k1', value: 'first' }]);
      await store.enrichment.remember([{ key: 'k1', value: 'second' }, { key: 'k2', value: 'two' }]);
      const found = await store.enrichment.cached(['k1', 'k2', 'missing']);
      assert.deepEqual([...found.entries()].sort(), [['k1', 'first'], ['k2', 'two']]);
    });

    it('a new task replaces the previous one of its type; a stale task id neither reports nor finishes', async () => {
      await store.enrichment.begin(datasetId, 'raptor', 'old');
      await store.enrichment.begin(datasetId, 'raptor', 'new');
      assert.equal(await store.enrichment.report(datasetId, 'raptor', 'old', { ...NO_PROGRESS, done: 9 }), false);
      await store.enrichment.finish(datasetId, 'raptor', 'old', 'failed', 'late');
      const progress = { stage: 'level 1', done: 2, total: 5, model_calls: 3, cached_calls: 1, tokens: 120 };
      assert.equal(await store.enrichment.report(datasetId, 'raptor', 'new', progress), true);
      const running = await store.enrichment.task(datasetId, 'raptor');
      assert.equal(running?.id, 'new');
      assert.equal(running?.status, 'running');
      assert.deepEqual(running?.progress, progress);
      await store.enrichment.finish(datasetId, 'raptor', 'new', 'done');
      const done = await store.enrichment.task(datasetId, 'raptor');
      assert.equal(done?.status, 'done');
      assert.ok(done?.finish_time);
      assert.equal(await store.enrichment.task(datasetId, 'graph'), undefined);
      await store.enrichment.remove(datasetId, 'raptor');
      assert.equal(await store.enrichment.task(datasetId, 'raptor'), undefined);
    });

    it('beginning the recorded task again changes nothing (its starter and its workflow both begin it, in either order)', async () => {
      await store.enrichment.begin(datasetId, 'raptor', 'job');
      const progress = { stage: 'level 1', done: 1, total: 4, model_calls: 1, cached_calls: 0, tokens: 10 };
      await store.enrichment.report(datasetId, 'raptor', 'job', progress);
      await store.enrichment.begin(datasetId, 'raptor', 'job');
      assert.deepEqual((await store.enrichment.task(datasetId, 'raptor'))?.progress, progress);
      await store.enrichment.finish(datasetId, 'raptor', 'job', 'done');
      await store.enrichment.begin(datasetId, 'raptor', 'job');
      assert.equal((await store.enrichment.task(datasetId, 'raptor'))?.status, 'done', 'a late begin does not reopen a finished task');
      await store.enrichment.begin(datasetId, 'raptor', 'next');
      assert.equal((await store.enrichment.task(datasetId, 'raptor'))?.status, 'running');
      await store.enrichment.remove(datasetId, 'raptor');
    });
  });
}
