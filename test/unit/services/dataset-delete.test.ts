import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { DatasetService, type DatasetCleanup } from '../../../src/services/datasets.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

const noIndexJobs = { cancelDatasetIndex: async () => {}, waitDatasetIndex: async () => {} };
const models = { defaultEmbeddingModel: async () => 'm@Builtin', checkEmbeddingModel: async (_t: string, id: string) => id };

for (const profile of testProfiles()) describe(`dataset deletion hands off to its workflow [${profile}]`, () => {
  let db: MetaDb;
  let store: MetaStore;
  beforeEach(async () => {
    db = await openTestMetaDb(profile);
    store = new MetaStore(db);
  });
  afterEach(() => db.close());

  it('answers before the workflow is started, and a failed start is tried again', async () => {
    const started: string[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const cleanup: DatasetCleanup = {
      startDeleteDatasets: async (ids) => {
        calls++;
        await gate;
        if (calls === 1) throw new Error('temporal unavailable');
        started.push(ids);
      },
      cancelParse: async () => {},
      ...noIndexJobs,
    };
    const service = new DatasetService(store, models, cleanup);
    const p = tenantPrincipal('t1');
    const ds = (await service.create(p, { name: 'gone' })) as { id: string };
    assert.deepEqual(await service.delete(p, [ds.id], false), { success_count: 1 }, 'the answer does not wait for the hand-off');
    assert.equal(await store.datasets.byId(ds.id), undefined, 'hidden at once');
    assert.equal((await store.datasets.byIdAnyStatus(ds.id))?.status, 'deleting', 'removed later by the workflow');
    release();
    for (let i = 0; i < 40 && started.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(started, [[ds.id]], 'started on the second try');
  });

  it('a hand-off that keeps failing is reported (the next start hands it off again)', async () => {
    const reported: string[][] = [];
    const cleanup: DatasetCleanup = { startDeleteDatasets: async () => Promise.reject(new Error('down')), cancelParse: async () => {}, ...noIndexJobs };
    const service = new DatasetService(store, models, cleanup, { onFailure: (_err, ids) => reported.push(ids), retriesMs: [10, 10] });
    const p = tenantPrincipal('t1');
    const ds = (await service.create(p, { name: 'stuck' })) as { id: string };
    await service.delete(p, [ds.id], false);
    for (let i = 0; i < 500 && reported.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(reported, [[ds.id]]);
    assert.deepEqual(await store.datasets.deletingIds(), [ds.id], 'still marked, for the restart sweep');
  });

  it('stops the running RAPTOR and graph jobs, and waits for them, before the workflow removes the content', async () => {
    const steps: string[] = [];
    let stopRaptor!: () => void;
    const raptorStopped = new Promise<void>((r) => (stopRaptor = r));
    const cleanup: DatasetCleanup = {
      startDeleteDatasets: async (ids) => void steps.push(`delete ${ids.join()}`),
      cancelParse: async () => {},
      cancelDatasetIndex: async (type, id) => {
        steps.push(`cancel ${type} ${id}`);
        if (type === 'raptor') setTimeout(stopRaptor, 50);
      },
      waitDatasetIndex: async (type) => {
        if (type === 'raptor') await raptorStopped;
        steps.push(`stopped ${type}`);
      },
    };
    const service = new DatasetService(store, models, cleanup);
    const p = tenantPrincipal('t1');
    const ds = (await service.create(p, { name: 'enriched' })) as { id: string };
    const idle = (await service.create(p, { name: 'plain' })) as { id: string };
    await store.enrichment.begin(ds.id, 'raptor', 'task-r');
    await store.enrichment.begin(ds.id, 'graph', 'task-g');
    await service.delete(p, [ds.id, idle.id], false);
    for (let i = 0; i < 100 && !steps.some((s) => s.startsWith('delete')); i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(steps, [`cancel raptor ${ds.id}`, `cancel graph ${ds.id}`, 'stopped graph', 'stopped raptor', `delete ${ds.id},${idle.id}`]);
  });

  it('a job that does not stop in time does not hold the removal back', async () => {
    const started: string[][] = [];
    const cleanup: DatasetCleanup = {
      startDeleteDatasets: async (ids) => void started.push(ids),
      cancelParse: async () => {},
      cancelDatasetIndex: async () => {},
      waitDatasetIndex: () => new Promise(() => {}),
    };
    const service = new DatasetService(store, models, cleanup, { indexJobStopMs: 50 });
    const p = tenantPrincipal('t1');
    const ds = (await service.create(p, { name: 'stuck job' })) as { id: string };
    await store.enrichment.begin(ds.id, 'raptor', 'task-r');
    await service.delete(p, [ds.id], false);
    for (let i = 0; i < 100 && started.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(started, [[ds.id]]);
  });
});
