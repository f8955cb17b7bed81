import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { harness } from './harness.js';
import { Api, newUser, eventually } from './client.js';
import { upload } from './documents-helpers.js';
import { openDatabase } from '../../src/store/db.js';
import { NUL_IN_BODY, NUL_IN_URL } from '../../src/api/nul-guard.js';

describe('datasets over HTTP', function () {
  let api: Api;

  before(async () => {
    api = (await newUser('ds')).api;
  });

  describe('create', () => {
    it('applies the spec defaults: naive, permission me, built-in embedding model, naive parser_config', async () => {
      const res = await api.post('/datasets', { name: 'defaults' });
      assert.equal(res.status, 200);
      assert.equal(res.body.code, 0);
      const ds = res.body.data;
      assert.match(ds.id, /^[0-9a-f]{32}$/);
      assert.equal(ds.chunk_method, 'naive');
      assert.equal(ds.permission, 'me');
      assert.equal(ds.embedding_model, 'BAAI/bge-small-en-v1.5@Builtin');
      assert.equal(ds.pagerank, 0);
      assert.equal(ds.chunk_count, 0);
      assert.equal(ds.parser_config.chunk_token_num, 512);
      assert.equal(ds.parser_config.delimiter, '\n');
      assert.equal(ds.parser_config.html4excel, false);
      assert.equal(ds.parser_config.layout_recognize, true);
      assert.deepEqual(ds.parser_config.raptor, { use_raptor: false });
      assert.deepEqual(ds.parser_config.parent_child, { use_parent_child: false, children_delimiter: '\n' });
      assert.ok(Number.isInteger(ds.create_time) && Math.abs(ds.create_time - Date.now() / 1000) < 60, 'create_time is Unix seconds');
    });

    it('merges a given parser_config over the chunk method defaults', async () => {
      const res = await api.post('/datasets', { name: 'merged', parser_config: { chunk_token_num: 256, raptor: { use_raptor: true } } });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.parser_config.chunk_token_num, 256);
      assert.equal(res.body.data.parser_config.delimiter, '\n');
      assert.equal(res.body.data.parser_config.raptor.use_raptor, true);
    });

    it('gives qa datasets the raptor-only parser_config and table datasets an empty one', async () => {
      const qa = await api.post('/datasets', { name: 'qa-ds', chunk_method: 'qa' });
      assert.deepEqual(qa.body.data.parser_config, { raptor: { use_raptor: false } });
      const table = await api.post('/datasets', { name: 'table-ds', chunk_method: 'table' });
      assert.deepEqual(table.body.data.parser_config, {});
    });

    it('requires a name', async () => {
      const res = await api.post('/datasets', {});
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 400);
      assert.match(res.body.message, /name/);
    });

    it('rejects a name over 128 characters, naming the field', async () => {
      const res = await api.post('/datasets', { name: 'x'.repeat(129) });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /name/);
    });

    it('rejects characters beyond the BMP in names', async () => {
      const res = await api.post('/datasets', { name: 'rocks 🪨' });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /BMP/);
    });

    it('rejects a wrong type with a message naming the field', async () => {
      const res = await api.post('/datasets', { name: 12 });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /`name` must be a string/);
    });

    it('rejects an unknown chunk method, and tag (update only)', async () => {
      for (const chunk_method of ['nope', 'tag']) {
        const res = await api.post('/datasets', { name: `cm-${chunk_method}`, chunk_method });
        assert.equal(res.status, 400);
        assert.match(res.body.message, /chunk_method/);
      }
    });

    it('rejects unknown fields', async () => {
      const res = await api.post('/datasets', { name: 'extra', colour: 'blue' });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /colour/);
    });

    it('rejects an avatar over 65535 characters and a non-image data URI', async () => {
      const big = await api.post('/datasets', { name: 'av1', avatar: 'A'.repeat(65536) });
      assert.equal(big.status, 400);
      assert.match(big.body.message, /avatar/);
      const text = await api.post('/datasets', { name: 'av2', avatar: 'data:text/plain;base64,aGVsbG8=' });
      assert.equal(text.status, 400);
      const ok = await api.post('/datasets', { name: 'av3', avatar: 'data:image/png;base64,iVBORw0KGgo=' });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.data.avatar, 'data:image/png;base64,iVBORw0KGgo=');
    });

    it('validates the embedding model id format and existence', async () => {
      const bad = await api.post('/datasets', { name: 'em1', embedding_model: 'no-factory' });
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /embedding_model.*model_name>@/);
      const long = await api.post('/datasets', { name: 'em2', embedding_model: `${'m'.repeat(250)}@Builtin` });
      assert.equal(long.status, 400);
      const unknown = await api.post('/datasets', { name: 'em3', embedding_model: 'text-embedding-3@Nowhere' });
      assert.equal(unknown.status, 400);
      assert.match(unknown.body.message, /Nowhere/);
    });

    it('keeps names unique per tenant case-insensitively by suffixing', async () => {
      const a = await api.post('/datasets', { name: 'Rivers' });
      const b = await api.post('/datasets', { name: 'rivers' });
      assert.equal(a.body.data.name, 'Rivers');
      assert.equal(b.body.data.name, 'rivers(1)');
    });
  });

  describe('a NUL character is a 400 on every profile (PostgreSQL cannot store it)', () => {
    it('in a JSON string, and nothing is created', async () => {
      const name = `nul-${Date.now()}`;
      const res = await api.post('/datasets', { name: `${name}\u0000x` });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.message, NUL_IN_BODY);
      const names = (await api.get('/datasets', { page_size: 100 })).body.data.map((d: { name: string }) => d.name);
      assert.ok(!names.some((n: string) => n.startsWith(name)), names.join());
    });

    it('in a JSON key', async () => {
      const res = await api.request('POST', '/retrieval', { raw: '{"question": "q", "a\\u0000": 1}', headers: { 'Content-Type': 'application/json' } });
      assert.equal(res.status, 400);
      assert.equal(res.body.message, NUL_IN_BODY);
    });

    it('in a query or a path, and a stranger still gets 401 first', async () => {
      const query = await api.request('GET', '/datasets?name=a%00b');
      assert.equal(query.status, 400);
      assert.equal(query.body.message, NUL_IN_URL);
      const datasetId = (await api.post('/datasets', { name: `nul-path-${Date.now()}` })).body.data.id;
      const path = await api.request('GET', `/datasets/${datasetId}%00/documents`);
      assert.equal(path.status, 400);
      assert.equal(path.body.message, NUL_IN_URL);
      assert.equal((await new Api((await harness()).url).request('GET', '/datasets?name=a%00b')).status, 401);
    });

    it('a backslash followed by u0000 as text is not a NUL and is kept', async () => {
      const name = `not-nul-\\u0000-${Date.now()}`;
      const res = await api.post('/datasets', { name });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.name, name);
    });
  });

  describe('list', () => {
    let lister: Api;
    before(async () => {
      lister = (await newUser('lister')).api;
      for (let i = 0; i < 35; i++) await lister.post('/datasets', { name: `set-${String(i).padStart(2, '0')}` });
    });

    it('pages with page_size 30 by default, newest first', async () => {
      const res = await lister.get('/datasets');
      assert.equal(res.status, 200);
      assert.equal(res.body.data.length, 30);
      assert.equal(res.body.total_datasets, 35);
      assert.equal(res.body.data[0].name, 'set-34');
      const page2 = await lister.get('/datasets', { page: 2 });
      assert.equal(page2.body.data.length, 5);
    });

    it('orders ascending with desc=false (Python sends False)', async () => {
      const res = await lister.get('/datasets', { desc: 'False', page_size: 3 });
      assert.deepEqual(res.body.data.map((d: any) => d.name), ['set-00', 'set-01', 'set-02']);
    });

    it('clamps page_size above 100 to 100 (issue 15 item 4: clamped, not refused)', async () => {
      const res = await lister.get('/datasets', { page_size: 101 });
      assert.equal(res.status, 200);
      assert.ok(res.body.data.length <= 100);
    });

    it('rejects an unknown orderby', async () => {
      const res = await lister.get('/datasets', { orderby: 'name' });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /orderby/);
    });

    it('filters by id and by name (case-insensitive); a missing one is 404', async () => {
      const all = await lister.get('/datasets', { page_size: 1 });
      const one = all.body.data[0];
      const byId = await lister.get('/datasets', { id: one.id });
      assert.deepEqual(byId.body.data.map((d: any) => d.id), [one.id]);
      const byName = await lister.get('/datasets', { name: one.name.toUpperCase() });
      assert.deepEqual(byName.body.data.map((d: any) => d.id), [one.id]);
      const missing = await lister.get('/datasets', { name: 'no-such-set' });
      assert.equal(missing.status, 404);
    });

    it('adds parsing status counts only when include_parsing_status is true', async () => {
      const plain = await lister.get('/datasets', { page_size: 1 });
      assert.equal(plain.body.data[0].unstart_count, undefined);
      const withStatus = await lister.get('/datasets', { page_size: 1, include_parsing_status: true });
      const d = withStatus.body.data[0];
      for (const k of ['unstart_count', 'running_count', 'cancel_count', 'done_count', 'fail_count']) assert.equal(d[k], 0, k);
    });
  });

  describe('get one', () => {
    it("answers RAGFlow's one-dataset view: the list fields, its files' total size in bytes, and connectors", async () => {
      const ds = (await api.post('/datasets', { name: 'one-view' })).body.data;
      const files = [{ name: 'a.txt', bytes: Buffer.from('twelve bytes') }, { name: 'b.txt', bytes: Buffer.from('x'.repeat(1000)) }];
      assert.equal((await upload(api, ds.id, files)).status, 200);
      const res = await api.get(`/datasets/${ds.id}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.id, ds.id);
      assert.equal(res.body.data.document_count, 2);
      assert.equal(res.body.data.size, 1012);
      assert.deepEqual(res.body.data.connectors, [], 'Cairn has no external data-source connectors');
      assert.equal((await api.get(`/datasets/${'0'.repeat(32)}`)).status, 404);
    });
  });

  describe('update', () => {
    it('changes given fields and keeps the others', async () => {
      const ds = (await api.post('/datasets', { name: 'to-update', description: 'old' })).body.data;
      const res = await api.put(`/datasets/${ds.id}`, { name: 'updated', pagerank: 42 });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.name, 'updated');
      assert.equal(res.body.data.pagerank, 42);
      assert.equal(res.body.data.description, 'old');
    });

    it('rejects pagerank outside 0..100', async () => {
      const ds = (await api.post('/datasets', { name: 'pr' })).body.data;
      for (const pagerank of [-1, 101]) {
        const res = await api.put(`/datasets/${ds.id}`, { pagerank });
        assert.equal(res.status, 400);
        assert.match(res.body.message, /pagerank/);
      }
    });

    it('allows tag on update and resets parser_config to the new method defaults', async () => {
      const ds = (await api.post('/datasets', { name: 'to-tag' })).body.data;
      const res = await api.put(`/datasets/${ds.id}`, { chunk_method: 'tag' });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.chunk_method, 'tag');
      assert.deepEqual(res.body.data.parser_config, {});
    });

    it('merges parser_config into the current one', async () => {
      const ds = (await api.post('/datasets', { name: 'pc', parser_config: { chunk_token_num: 300 } })).body.data;
      const res = await api.put(`/datasets/${ds.id}`, { parser_config: { delimiter: '##' } });
      assert.equal(res.body.data.parser_config.chunk_token_num, 300);
      assert.equal(res.body.data.parser_config.delimiter, '##');
    });

    it('changes the embedding model while chunk_count is 0', async () => {
      const ds = (await api.post('/datasets', { name: 'emb' })).body.data;
      const res = await api.put(`/datasets/${ds.id}`, { embedding_model: 'sentence-transformers/all-MiniLM-L6-v2@Builtin' });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.embedding_model, 'sentence-transformers/all-MiniLM-L6-v2@Builtin');
    });

    it('rejects an empty update and a rename onto an existing name', async () => {
      const a = (await api.post('/datasets', { name: 'first-name' })).body.data;
      await api.post('/datasets', { name: 'second-name' });
      const empty = await api.put(`/datasets/${a.id}`, {});
      assert.equal(empty.status, 400);
      const clash = await api.put(`/datasets/${a.id}`, { name: 'SECOND-NAME' });
      assert.equal(clash.status, 400);
      assert.match(clash.body.message, /already exists/);
    });
  });

  describe('delete', () => {
    it('deletes nothing when ids is null or empty and delete_all is false', async () => {
      const user = (await newUser('del0')).api;
      await user.post('/datasets', { name: 'keep' });
      for (const body of [{}, { ids: null }, { ids: [] }]) {
        const res = await user.delete('/datasets', body);
        assert.equal(res.status, 200);
        assert.equal(res.body.data.success_count, 0);
      }
      assert.equal((await user.get('/datasets')).body.data.length, 1);
    });

    it('hides deleted datasets at once and the workflow removes them', async () => {
      const user = (await newUser('del1')).api;
      const a = (await user.post('/datasets', { name: 'a' })).body.data;
      const b = (await user.post('/datasets', { name: 'b' })).body.data;
      const res = await user.delete('/datasets', { ids: [a.id] });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.success_count, 1);
      const left = await user.get('/datasets');
      assert.deepEqual(left.body.data.map((d: any) => d.id), [b.id]);
      assert.equal((await user.get(`/datasets/${a.id}`)).status, 404);
      await eventually(async () => !(await datasetRow(a.id)));
    });

    it('deletes every dataset of the caller with delete_all', async () => {
      const user = (await newUser('del2')).api;
      await user.post('/datasets', { name: 'x' });
      await user.post('/datasets', { name: 'y' });
      const res = await user.delete('/datasets', { delete_all: true });
      assert.equal(res.body.data.success_count, 2);
      assert.equal((await user.get('/datasets')).body.data.length, 0);
    });

    it('deletes nothing when one id is unknown', async () => {
      const user = (await newUser('del3')).api;
      const a = (await user.post('/datasets', { name: 'a' })).body.data;
      const res = await user.delete('/datasets', { ids: [a.id, '0'.repeat(32)] });
      assert.equal(res.status, 404);
      assert.equal((await user.get('/datasets')).body.data.length, 1);
    });

    it('finishes a cleanup that was interrupted by a restart', async () => {
      const h = await harness();
      const user = (await newUser('del4')).api;
      const a = (await user.post('/datasets', { name: 'crash' })).body.data;
      // A crash after the API hid the dataset but before the workflow started leaves it in 'deleting'.
      const db = await openDatabase(h.config.databaseUrl);
      await db.kysely.updateTable('datasets').set({ status: 'deleting' }).where('id', '=', a.id).execute();
      await db.close();
      await h.restart();
      await eventually(async () => !(await datasetRow(a.id)));
    });

    it('runs deleteDatasets as a Temporal workflow that completes', async () => {
      const h = await harness();
      const user = (await newUser('del5')).api;
      const a = (await user.post('/datasets', { name: 'wf' })).body.data;
      await user.delete('/datasets', { ids: [a.id] });
      const connection = await Connection.connect({ address: h.temporal.address });
      try {
        const client = new Client({ connection });
        const found = await eventually(async () => {
          for await (const wf of client.workflow.list({ query: `WorkflowType = 'deleteDatasets' AND ExecutionStatus = 'Completed'` })) {
            const result = await client.workflow.getHandle(wf.workflowId, wf.runId).describe();
            const input = await client.workflow.getHandle(wf.workflowId).fetchHistory();
            const started = input.events?.[0]?.workflowExecutionStartedEventAttributes;
            const payload = started?.input?.payloads?.[0]?.data;
            if (payload && Buffer.from(payload).toString().includes(a.id)) return result;
          }
          return undefined;
        });
        assert.equal(found.status.name, 'COMPLETED');
      } finally {
        await connection.close();
      }
    });
  });
});

async function datasetRow(id: string) {
  const h = await harness();
  const db = await openDatabase(h.config.databaseUrl);
  try {
    return await db.kysely.selectFrom('datasets').selectAll().where('id', '=', id).executeTakeFirst();
  } finally {
    await db.close();
  }
}
