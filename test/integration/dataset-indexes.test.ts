import assert from 'node:assert/strict';
import { harness } from './harness.js';
import { Api, newUser } from './client.js';

/** The rules every dataset index job type shares (RAPTOR and the graph have their own tests). */
describe('dataset index jobs: POST|GET|DELETE /datasets/{id}/index?type=', () => {
  let api: Api;
  let other: Api;
  let ds: string;

  before(async () => {
    await harness();
    api = (await newUser('indexes')).api;
    other = (await newUser('indexes-other')).api;
    ds = (await api.post('/datasets', { name: 'index-jobs' })).body.data.id;
  });

  it('an unknown type is a 400 naming the valid ones', async () => {
    for (const method of ['post', 'get', 'delete'] as const) {
      const res = await api[method](`/datasets/${ds}/index?type=mindmap`);
      assert.equal(res.status, 400, `${method}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.message, `Invalid index type 'mindmap'. Must be one of ["raptor","graph"]`);
    }
  });

  it('a dataset that never ran a job reports {} for each type, on the deprecated trace routes too', async () => {
    for (const path of ['index?type=raptor', 'index?type=graph', 'trace_raptor', 'trace_graphrag']) {
      const res = await api.get(`/datasets/${ds}/${path}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data, {});
    }
  });

  it('a job over a dataset without documents is refused with RAGFlow\'s message', async () => {
    const res = await api.post(`/datasets/${ds}/index?type=raptor`);
    assert.equal(res.status, 400);
    assert.equal(res.body.message, `No documents in Dataset ${ds}`);
  });

  it("another user's dataset is not found, whatever the route", async () => {
    for (const [method, path] of [['post', 'index?type=graph'], ['get', 'index?type=graph'], ['delete', 'index?type=graph'], ['delete', 'raptor']] as const) {
      const res = await other[method](`/datasets/${ds}/${path}`);
      assert.equal(res.status, 404, `${method} ${path}: ${JSON.stringify(res.body)}`);
    }
  });
});
