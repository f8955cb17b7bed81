import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Api } from './client.js';
import { startHarness, type Harness } from './harness.js';
import { upload, waitForRun } from './documents-helpers.js';
import { createAgent, messageCanvas, runStream, streamedText } from './agent-helpers.js';
import { openDatabase, type MetaDb } from '../../src/store/db.js';
import { sharedPostgres } from '../support/postgres.js';

/**
 * The whole service (API process + a separate `cairn worker` process) with its metadata on PostgreSQL
 * (CAIRN_DATABASE_URL): accounts, parsing, retrieval, chats and agent runs work, and every row lands
 * in PostgreSQL, none in the embedded SQLite file.
 */
describe('scale-out profile: metadata on PostgreSQL', function () {
  this.timeout(240_000);
  let h: Harness;
  let url: string;
  let pgDb: MetaDb;
  let api: Api;
  let token: string;
  const email = `pg-${process.pid}@example.com`;

  before(async () => {
    url = await (await sharedPostgres()).createDatabase('cairn_smoke');
    h = await startHarness({ env: { CAIRN_DATABASE_URL: url } });
    pgDb = await openDatabase(url);
  });
  after(async () => {
    await pgDb?.close();
    await h?.stop();
  });

  it('reports the PostgreSQL metadata database healthy', async () => {
    const health = await new Api(h.url).get('/system/healthz');
    assert.equal(health.status, 200, JSON.stringify(health.body));
    assert.equal(health.body.database, 'ok');
  });

  it('registers and logs in; the signing secret is a database setting, not a file', async () => {
    const anon = new Api(h.url);
    assert.equal((await anon.post('/users', { email, nickname: 'pg', password: 'pw-123456' })).status, 200);
    const login = await anon.post('/auth/login', { email, password: 'pw-123456' });
    assert.equal(login.status, 200);
    token = login.headers.get('authorization')!;
    const key = await new Api(h.url, token).post('/system/tokens');
    assert.equal(key.status, 200, JSON.stringify(key.body));
    api = new Api(h.url, key.body.data.token);
    assert.equal((await api.get('/users/me')).body.data.email, email);
    const secret = await pgDb.kysely.selectFrom('settings').select('value').where('key', '=', 'jwt-secret').executeTakeFirst();
    assert.equal(Buffer.from(secret!.value, 'base64').byteLength, 32);
    assert.equal(fs.existsSync(path.join(h.config.dataDir, 'jwt-secret')), false);
  });

  let datasetId: string;
  let documentId: string;

  it('uploads and parses a document to DONE (the worker process writes to PostgreSQL), lists its chunks and retrieves from it', async () => {
    const ds = await api.post('/datasets', { name: 'Granite Notes' });
    assert.equal(ds.status, 200, JSON.stringify(ds.body));
    datasetId = ds.body.data.id;
    const text = 'Granite cairns mark the trail across the high moor.\n\nThe river crossing floods every spring, so hikers take the upper bridge.';
    const up = await upload(api, datasetId, [{ name: 'moor.txt', bytes: Buffer.from(text) }]);
    assert.equal(up.status, 200, JSON.stringify(up.body));
    documentId = up.body.data[0].id;
    assert.equal((await api.post(`/datasets/${datasetId}/chunks`, { document_ids: [documentId] })).status, 200);
    const done = await waitForRun(api, datasetId, documentId);
    assert.equal(done.run, 'DONE', done.progress_msg);
    assert.ok(done.chunk_count >= 1);

    const chunks = await api.get(`/datasets/${datasetId}/documents/${documentId}/chunks`);
    assert.equal(chunks.status, 200, JSON.stringify(chunks.body));
    assert.equal(chunks.body.data.chunks.length, done.chunk_count);

    const found = await api.post('/retrieval', { dataset_ids: [datasetId], question: 'granite cairns on the moor', similarity_threshold: 0 });
    assert.equal(found.status, 200, JSON.stringify(found.body));
    assert.match(found.body.data.chunks[0].content, /Granite cairns/);
    assert.equal(found.body.data.chunks[0].document_name, 'moor.txt');

    const listed = await api.get('/datasets', { keywords: 'GRANITE' });
    assert.deepEqual(listed.body.data.map((d: any) => [d.id, d.document_count, d.chunk_count]), [[datasetId, 1, done.chunk_count]]);
    const row = await pgDb.kysely.selectFrom('documents').select(['run', 'chunk_count']).where('id', '=', documentId).executeTakeFirst();
    assert.deepEqual(row, { run: 'DONE', chunk_count: done.chunk_count });
  });

  it('keeps a dataset metadata config (raw SQL in the metadata service)', async () => {
    const config = { metadata: [{ key: 'region', description: 'where', enum: ['north'] }] };
    const put = await api.put(`/datasets/${datasetId}/metadata/config`, config);
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const got = await api.get(`/datasets/${datasetId}/metadata/config`);
    assert.deepEqual(got.body.data.metadata, config.metadata);
  });

  it('creates a chat on the dataset and a session that opens with the prologue', async () => {
    const chat = await api.post('/chats', { name: 'Moor guide', dataset_ids: [datasetId], prompt_config: { prologue: 'Ask me about the moor.' } });
    assert.equal(chat.status, 200, JSON.stringify(chat.body));
    const session = await api.post(`/chats/${chat.body.data.id}/sessions`, { name: 'first' });
    assert.equal(session.status, 200, JSON.stringify(session.body));
    assert.equal(session.body.data.messages[0].content, 'Ask me about the moor.');
    const stored = await pgDb.kysely.selectFrom('chat_sessions').select('name').where('id', '=', session.body.data.id).executeTakeFirst();
    assert.equal(stored?.name, 'first');
  });

  it('creates an agent and streams a run whose events travel from the worker process through PostgreSQL', async () => {
    const agentId = await createAgent(api, messageCanvas('The upper bridge is open.'), 'Trail agent');
    const { events } = await runStream(api, { agent_id: agentId, query: 'is the bridge open?' });
    assert.equal(streamedText(events), 'The upper bridge is open.');
    assert.ok(events.some((e) => e.event === 'workflow_finished'));
    const session = (await api.get(`/agents/${agentId}/sessions/${events[0].session_id}`)).body.data;
    assert.equal(session.message.at(-1).content, 'The upper bridge is open.');
    const logged = await pgDb.kysely.selectFrom('run_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.ok(logged.n > 0, 'the run log is in PostgreSQL');
  });

  it('login tokens outlive a restart (the secret is shared), and the SQLite file holds no metadata', async () => {
    await h.restart();
    assert.equal((await new Api(h.url, token).get('/users/me')).body.data.email, email);
    const sqlite = new Database(path.join(h.config.dataDir, 'cairn.db'), { readonly: true });
    try {
      const tables = (sqlite.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((t) => t.name);
      for (const table of ['users', 'datasets', 'documents', 'chats', 'agents', 'run_events', 'kysely_migration']) assert.ok(!tables.includes(table), `${table} is not in SQLite`);
      assert.ok(tables.includes('chunk_rows'), 'the embedded chunk index is');
    } finally {
      sqlite.close();
    }
  });
});
