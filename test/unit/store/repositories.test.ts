import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { isUniqueViolation } from '../../../src/store/dialect.js';
import type { DatasetRow } from '../../../src/store/datasets.js';
import type { DocumentRow } from '../../../src/store/documents.js';
import type { ChatRow } from '../../../src/store/chats.js';
import type { AgentRow } from '../../../src/store/agents.js';
import type { MemoryRow } from '../../../src/store/memories.js';
import type { StoredMessage } from '../../../src/store/sessions.js';
import { newId } from '../../../src/ids.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

/**
 * The repositories where SQLite and PostgreSQL differ (types, LIKE, collation, upserts, affected-row
 * counts, RETURNING, transactions, concurrency): each rule holds in both profiles.
 */
for (const profile of testProfiles()) {
  describe(`MetaStore repositories behave the same on every database [${profile}]`, () => {
    let db: MetaDb;
    let store: MetaStore;
    const tenant = newId();

    before(async () => {
      db = await openTestMetaDb(profile);
      store = new MetaStore(db);
    });
    after(() => db.close());

    const dataset = (fields: Partial<DatasetRow> = {}): DatasetRow => {
      const name = fields.name ?? `ds-${newId()}`;
      return {
        id: newId(), tenant_id: tenant, created_by: tenant, name, name_key: name.toLowerCase(), avatar: null, description: null,
        embedding_model: 'e@Builtin', permission: 'me', chunk_method: 'naive', parser_config: '{}', pagerank: 0, language: 'English',
        status: 'active', pipeline_id: null, parse_type: null, create_time: Date.now(), update_time: Date.now(), ...fields,
      };
    };
    const document = (datasetId: string, fields: Partial<DocumentRow> = {}): DocumentRow => ({
      id: newId(), dataset_id: datasetId, tenant_id: tenant, pipeline_id: null, name: `doc-${newId()}.txt`, location: newId(), size: 10, type: 'doc', suffix: 'txt',
      chunk_method: 'naive', parser_config: '{}', source_type: 'local', created_by: tenant, run: 'UNSTART', progress: 0, progress_msg: '',
      process_begin_at: null, process_duration: 0, chunk_count: 0, token_count: 0, meta_fields: '{}', run_seq: 0,
      create_time: Date.now(), update_time: Date.now(), ...fields,
    });
    const chat = (fields: Partial<ChatRow> = {}): ChatRow => ({
      id: newId(), tenant_id: tenant, created_by: tenant, name: `chat-${newId()}`, description: '', icon: '', llm_id: null, llm_setting: '{}',
      prompt_config: '{}', similarity_threshold: 0.2, vector_similarity_weight: 0.3, top_n: 6, top_k: 1024, rerank_id: '',
      create_time: Date.now(), update_time: Date.now(), ...fields,
    });
    const agent = (title: string, ownTenant = tenant): AgentRow => ({
      id: newId(), tenant_id: ownTenant, created_by: ownTenant, title, title_key: title.toLowerCase(), description: null, avatar: null,
      permission: 'me', canvas_type: null, canvas_category: 'agent_canvas', dsl: '{}', tags: '', create_time: Date.now(), update_time: Date.now(),
    });
    const memory = (name: string, memoryType: number): MemoryRow => ({
      id: newId(), tenant_id: tenant, created_by: tenant, name, name_key: name.toLowerCase(), avatar: null, description: null,
      memory_type: memoryType, storage_type: 'table', embd_id: 'e', llm_id: 'l', permission: 'me', memory_size: 5 * 1024 * 1024,
      forgetting_policy: 'FIFO', temperature: 0.5, system_prompt: '', user_prompt: '', create_time: Date.now(), update_time: Date.now(),
    });
    const listDocuments = (datasetId: string, fields: { keywords?: string; orderBy?: 'name' | 'create_time' } = {}) =>
      store.documents.list({ datasetId, keywords: fields.keywords, orderBy: fields.orderBy ?? 'create_time', desc: false, offset: 0, limit: 100 });

    it('integers, counts, sums and RETURNING values come back as numbers, beyond 32 bits too', async () => {
      const ds = dataset();
      await store.datasets.insert(ds);
      const big = 5_000_000_000_123;
      const doc = document(ds.id, { size: big, chunk_count: 3_000_000_000, token_count: 7 });
      await store.documents.insert(doc);
      await store.documents.insert(document(ds.id, { chunk_count: 2, token_count: 5 }));
      const row = (await store.documents.byId(doc.id))!;
      assert.equal(row.size, big);
      assert.equal(row.create_time, doc.create_time);
      assert.equal(typeof row.run_seq, 'number');
      assert.deepEqual(await store.documents.totals([ds.id]), new Map([[ds.id, { documents: 2, chunks: 3_000_000_002, tokens: 12 }]]));
      assert.equal((await store.documents.runCounts([ds.id])).get(ds.id)!.UNSTART, 2);
      const listed = await listDocuments(ds.id);
      assert.equal(listed.total, 2);
      assert.equal(typeof (await store.users.count()), 'number');
    });

    it('floats keep double precision', async () => {
      const c = chat({ similarity_threshold: 0.123456789012, vector_similarity_weight: 1 / 3 });
      await store.chats.insert(c, []);
      const row = (await store.chats.byId(c.id))!;
      assert.equal(row.similarity_threshold, 0.123456789012);
      assert.equal(row.vector_similarity_weight, 1 / 3);
    });

    it('strings longer than their declared width are kept whole (SQLite does not enforce varchar lengths)', async () => {
      const ds = dataset();
      await store.datasets.insert(ds);
      const long = `${'n'.repeat(400)}.${'x'.repeat(40)}`;
      const doc = document(ds.id, { name: long, suffix: 'x'.repeat(40) });
      await store.documents.insert(doc);
      assert.equal((await store.documents.byId(doc.id))!.name, long);
    });

    it('beginRun numbers runs atomically with RETURNING and refuses a running document', async () => {
      const ds = dataset();
      await store.datasets.insert(ds);
      const doc = document(ds.id);
      await store.documents.insert(doc);
      const attempts = await Promise.all([1, 2, 3, 4].map(() => store.documents.beginRun(doc.id, Date.now())));
      assert.deepEqual(attempts.filter((a) => a !== undefined), [1], 'one of the concurrent starts wins');
      assert.equal(await store.documents.updateRun(doc.id, 0, { progress: 1 }), false, 'a stale run writes nothing');
      assert.equal(await store.documents.updateRun(doc.id, 1, { run: 'DONE', progress: 1 }, 'RUNNING'), true);
      assert.equal(await store.documents.beginRun(doc.id, Date.now()), 2);
    });

    it('keyword filters are case-insensitive and take % and _ literally', async () => {
      const ds = dataset();
      await store.datasets.insert(ds);
      for (const name of ['Sales 50% off.txt', 'Sales 50x off.txt', 'README.md', 'read_me.txt', 'readme.txt']) {
        await store.documents.insert(document(ds.id, { name }));
      }
      const names = async (keywords: string) => (await listDocuments(ds.id, { keywords })).rows.map((r) => r.name).sort();
      assert.deepEqual(await names('50%'), ['Sales 50% off.txt']);
      assert.deepEqual(await names('ReadMe'), ['README.md', 'readme.txt']);
      assert.deepEqual(await names('_'), ['read_me.txt']);
      assert.deepEqual(await names('\\'), []);

      const prefix = `p${newId().slice(0, 6)}`;
      for (const name of [`${prefix}_a`, `${prefix}xa`, `${prefix}_a(1)`]) await store.datasets.insert(dataset({ name }));
      assert.deepEqual((await store.datasets.namesLike(tenant, `${prefix}_a`)).sort(), [`${prefix}_a`, `${prefix}_a(1)`]);
      const listed = await store.datasets.list({
        visibleTo: { userTenant: tenant, teamTenants: [] }, keywords: `${prefix.toUpperCase()}_`, orderBy: 'create_time', desc: false, offset: 0, limit: 10,
      });
      assert.equal(listed.total, 2);

      const c = chat({ name: `Weekly SYNC ${prefix}` });
      await store.chats.insert(c, []);
      assert.equal(await store.chats.nameTaken(tenant, `weekly sync ${prefix}`), true);
      const chats = await store.chats.list({ tenantId: tenant, keywords: `sync ${prefix}`, orderBy: 'create_time', desc: false, offset: 0, limit: 10 });
      assert.deepEqual(chats.rows.map((r) => r.id), [c.id]);

      const a = agent(`Agent ${prefix} Alpha`);
      await store.agents.insert(a);
      const agents = await store.agents.list({ tenantIds: [tenant], ownTenantId: tenant, keywords: `${prefix} ALPHA`, orderBy: 'create_time', desc: false, offset: 0, limit: 10 });
      assert.deepEqual(agents.map((r) => r.id), [a.id]);
    });

    it('keyword search folds ASCII letters only, as SQLite lower() does (a locale-aware lower() would differ)', async () => {
      const ds = dataset();
      await store.datasets.insert(ds);
      await store.documents.insert(document(ds.id, { name: 'ÉCOLE.txt' }));
      const found = async (keywords: string) => (await listDocuments(ds.id, { keywords })).total;
      assert.equal(await found('COLE'), 1);
      assert.equal(await found('école'), 0, 'the stored É is not folded to é');
    });

    it('names sort by code point (uppercase before lowercase, accents last), whatever the database locale', async () => {
      const ds = dataset();
      await store.datasets.insert(ds);
      for (const name of ['b.txt', 'ä.txt', 'B.txt', 'a.txt', 'A.txt']) await store.documents.insert(document(ds.id, { name }));
      const sorted = (await listDocuments(ds.id, { orderBy: 'name' })).rows.map((r) => r.name);
      assert.deepEqual(sorted, ['A.txt', 'B.txt', 'a.txt', 'b.txt', 'ä.txt']);
    });

    it('upserts update, insert-or-ignore ignores, and affected-row counts are exact', async () => {
      const now = Date.now();
      const user = { id: newId(), email: `${newId()}@x.y`, nickname: 'n', password_hash: 'h', is_admin: 0, create_time: now, update_time: now };
      await store.users.create(user);
      await store.users.addMember(tenant, user.id, now);
      await store.users.addMember(tenant, user.id, now);
      assert.equal((await store.users.listMembers(tenant)).length, 1);
      assert.equal(await store.users.removeMember(tenant, user.id), 1);
      assert.equal(await store.users.removeMember(tenant, user.id), 0);

      await store.providers.setDefault(tenant, 'chat_model', 'a@f', now);
      await store.providers.setDefault(tenant, 'embedding_model', 'e@f', now + 1);
      await store.providers.setDefault(tenant, 'chat_model', 'b@f', now + 2);
      const defaults = (await store.providers.defaults(tenant))!;
      assert.deepEqual([defaults.chat_model, defaults.embedding_model, defaults.update_time], ['b@f', 'e@f', now + 2]);

      const instance = { id: newId(), tenant_id: tenant, factory: 'Ollama', instance_name: 'i', api_key: '', base_url: '', create_time: now, update_time: now };
      await store.providers.insertInstance(instance, []);
      const model = { id: newId(), instance_id: instance.id, model_name: 'm', model_types: '["chat"]', max_tokens: 8192, vision: 0, create_time: now };
      await store.providers.upsertModels([model]);
      await store.providers.upsertModels([{ ...model, id: newId(), max_tokens: 3_000_000_000, vision: 1 }]);
      const models = await store.providers.models([instance.id]);
      assert.deepEqual(models.map((m) => [m.id, m.max_tokens, m.vision]), [[model.id, 3_000_000_000, 1]]);
      assert.equal(await store.providers.deleteModel(instance.id, 'm'), 1);
      assert.equal(await store.providers.deleteModel(instance.id, 'm'), 0);

      const m = memory(`mem-${newId()}`, 1);
      await store.memories.insert(m);
      await store.memories.createTask(m.id, 7, 'queued', now);
      await store.memories.createTask(m.id, 7, 'again', now);
      assert.equal((await store.memories.task(m.id, 7))!.progress_msg, 'queued');
      assert.equal(await store.memories.updateTask(m.id, 7, 1, 'done', now), true);
      assert.equal(await store.memories.updateTask(m.id, 7, 0.5, 'late', now), false, 'an ended task is not reopened');
    });

    it('a transaction that fails leaves nothing behind', async () => {
      const now = Date.now();
      const instance = { id: newId(), tenant_id: tenant, factory: 'Xinference', instance_name: 'tx', api_key: '', base_url: '', create_time: now, update_time: now };
      const model = { id: newId(), instance_id: instance.id, model_name: 'same', model_types: '[]', max_tokens: 1, vision: 0, create_time: now };
      await assert.rejects(store.providers.insertInstance(instance, [model, { ...model, id: newId() }]), (err) => isUniqueViolation(err));
      assert.equal(await store.providers.instance(tenant, 'Xinference', 'tx'), undefined);

      // Model upserts, alone or with an instance update, are one transaction too: the second row reuses the first's id.
      await store.providers.insertInstance(instance, []);
      const rows = [{ ...model, model_name: 'first' }, { ...model, model_name: 'second' }];
      await assert.rejects(store.providers.upsertModels(rows), (err) => isUniqueViolation(err));
      await assert.rejects(store.providers.updateInstance(instance.id, { api_key: 'changed' }, rows), (err) => isUniqueViolation(err));
      assert.deepEqual(await store.providers.models([instance.id]), []);
      assert.equal((await store.providers.instance(tenant, 'Xinference', 'tx'))?.api_key, '');
    });

    it('a unique index refusal is recognised as such', async () => {
      const title = `t-${newId()}`;
      await store.agents.insert(agent(title));
      await assert.rejects(store.agents.insert(agent(title.toUpperCase())), (err) => isUniqueViolation(err));
      assert.equal(isUniqueViolation(new Error('UNIQUE constraint failed')), false, 'the error code decides, not the text');
    });

    it('memory type masks filter with a bitwise and', async () => {
      const tag = newId().slice(0, 8);
      for (const [name, type] of [['raw', 1], ['semantic', 2], ['both', 3], ['episodic', 4]] as const) await store.memories.insert(memory(`${tag}-${name}`, type));
      const { rows } = await store.memories.list({ visibleTo: { userTenant: tenant, teamTenants: [] }, typeMask: 2, keywords: tag, orderBy: 'create_time', desc: false, offset: 0, limit: 10 });
      assert.deepEqual(rows.map((r) => r.name).sort(), [`${tag}-both`, `${tag}-semantic`]);
    });

    it('concurrent appends to one chat session keep every message', async () => {
      const c = chat();
      await store.chats.insert(c, []);
      const session = { id: newId(), chat_id: c.id, name: 's', user_id: '', messages: '[]', create_time: Date.now(), update_time: Date.now() };
      await store.sessions.insert(session);
      const message = (i: number): StoredMessage => ({ id: String(i), role: 'user', content: `m${i}`, created_at: i });
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.sessions.appendMessages(session.id, [message(i)], Date.now())));
      const stored = JSON.parse((await store.sessions.byId(session.id))!.messages) as StoredMessage[];
      assert.deepEqual(stored.map((m) => m.content).sort(), Array.from({ length: 20 }, (_, i) => `m${i}`).sort());
    });

    it('deleting a chat cascades to its sessions and dataset links', async () => {
      const ds = dataset();
      await store.datasets.insert(ds);
      const c = chat();
      await store.chats.insert(c, [ds.id]);
      await store.sessions.insert({ id: newId(), chat_id: c.id, name: 's', user_id: '', messages: '[]', create_time: 1, update_time: 1 });
      assert.equal((await store.chats.datasets([c.id])).get(c.id)!.length, 1);
      await store.chats.delete([c.id]);
      assert.deepEqual(await store.sessions.idsOfChat(c.id), []);
      assert.equal((await store.chats.datasets([c.id])).get(c.id)!.length, 0);
    });

    it('settings are created once: concurrent callers all read the first value', async () => {
      let made = 0;
      const values = await Promise.all(Array.from({ length: 8 }, () => store.settings.getOrCreate('k', () => `v${++made}`)));
      assert.equal(new Set(values).size, 1);
      assert.equal(await store.settings.getOrCreate('k', () => 'other'), values[0]);
    });

    it('ping answers', async () => {
      await store.ping();
    });
  });
}
