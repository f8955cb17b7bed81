import assert from 'node:assert/strict';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';
import { Api, newUser } from './client.js';
import { addModelServer, createChat, datasetWithChunk, userWithModel } from './chat-helpers.js';

describe('chat assistants and sessions over HTTP', function () {
  let fake: FakeOpenAI;
  let api: Api;
  let modelId: string;

  before(async () => {
    fake = await startFakeOpenAI();
    ({ api, modelId } = await userWithModel('chats', fake.baseUrl));
  });

  after(() => fake.close());

  describe('create', () => {
    it("applies the spec's defaults; no llm_id means the tenant's default chat model", async () => {
      const chat = await createChat(api, { name: 'defaults' });
      assert.match(chat.id, /^[0-9a-f]{32}$/);
      assert.equal(chat.name, 'defaults');
      assert.equal(chat.icon, '');
      assert.deepEqual(chat.dataset_ids, []);
      assert.equal(chat.llm_id, modelId);
      assert.deepEqual(chat.llm_setting, { temperature: 0.1, top_p: 0.3, presence_penalty: 0.4, frequency_penalty: 0.7, max_token: 512 });
      assert.equal(chat.prompt_config.quote, true);
      assert.equal(chat.prompt_config.empty_response, '');
      assert.ok(chat.prompt_config.prologue.length > 0);
      assert.match(chat.prompt_config.system, /\{knowledge\}/);
      assert.deepEqual(chat.prompt_config.parameters, [{ key: 'knowledge', optional: true }]);
      assert.equal(chat.similarity_threshold, 0.2);
      assert.equal(chat.vector_similarity_weight, 0.3);
      assert.equal(chat.top_n, 6);
      assert.equal(chat.top_k, 1024);
      assert.equal(chat.rerank_id, '');
      assert.ok(Number.isInteger(chat.create_time) && Math.abs(chat.create_time - Date.now() / 1000) < 60);
    });

    it('keeps given settings and fills the rest of llm_setting and prompt_config with defaults', async () => {
      const chat = await createChat(api, {
        name: 'given',
        llm_id: modelId,
        llm_setting: { temperature: 0.5, max_tokens: 100 },
        prompt_config: { system: 'Be brief.', parameters: [], empty_response: 'Nothing found.' },
        similarity_threshold: 0.4,
        top_n: 3,
      });
      assert.deepEqual(chat.llm_setting, { temperature: 0.5, top_p: 0.3, presence_penalty: 0.4, frequency_penalty: 0.7, max_token: 100 });
      assert.equal(chat.prompt_config.system, 'Be brief.');
      assert.equal(chat.prompt_config.quote, true);
      assert.equal(chat.prompt_config.empty_response, 'Nothing found.');
      assert.equal(chat.similarity_threshold, 0.4);
      assert.equal(chat.top_n, 3);
    });

    it('requires a non-blank, unique name', async () => {
      for (const body of [{}, { name: '   ' }]) {
        const res = await api.post('/chats', body);
        assert.equal(res.status, 400);
        assert.match(res.body.message, /name/);
      }
      await createChat(api, { name: 'taken' });
      const dup = await api.post('/chats', { name: 'taken' });
      assert.equal(dup.status, 400);
      assert.match(dup.body.message, /Duplicated chat name/);
    });

    it('validates llm_id and rerank_id against the configured models', async () => {
      const bad = await api.post('/chats', { name: 'bad-llm', llm_id: 'nope@fake@OpenAI-API-Compatible' });
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /nope/);
      const rerank = await api.post('/chats', { name: 'bad-rerank', rerank_id: 'fake-chat@fake@OpenAI-API-Compatible' });
      assert.equal(rerank.status, 400);
      assert.match(rerank.body.message, /rerank/);
    });

    it('rejects unknown keys and out-of-range values, naming them', async () => {
      const extra = await api.post('/chats', { name: 'x', datset_ids: [] });
      assert.equal(extra.status, 400);
      assert.match(extra.body.message, /datset_ids/);
      const range = await api.post('/chats', { name: 'x', similarity_threshold: 2 });
      assert.equal(range.status, 400);
      assert.match(range.body.message, /similarity_threshold/);
    });

    it("attaches only datasets the caller may manage: another tenant's dataset is 404", async () => {
      const other = await newUser('other-ds');
      const ds = await other.api.post('/datasets', { name: 'theirs' });
      const res = await api.post('/chats', { name: 'foreign-ds', dataset_ids: [ds.body.data.id] });
      assert.equal(res.status, 404);
      const unknown = await api.post('/chats', { name: 'unknown-ds', dataset_ids: ['0'.repeat(32)] });
      assert.equal(unknown.status, 404);
    });

    it("refuses a dataset with no parsed document, with RAGFlow's message, on create and update", async () => {
      const empty = await api.post('/datasets', { name: `unparsed-${Date.now()}` });
      const res = await api.post('/chats', { name: 'over-nothing', dataset_ids: [empty.body.data.id] });
      assert.equal(res.status, 400);
      assert.match(res.body.message, new RegExp(`^The dataset ${empty.body.data.id} doesn't own parsed file`));
      const chat = await createChat(api, { name: 'attach-later' });
      const update = await api.patch(`/chats/${chat.id}`, { dataset_ids: [empty.body.data.id] });
      assert.equal(update.status, 400);
      assert.match(update.body.message, /doesn't own parsed file/);
      assert.deepEqual((await api.get(`/chats/${chat.id}`)).body.data.dataset_ids, []);
    });

    it('refuses datasets that use different embedding models', async () => {
      const user = await newUser('embed-mix');
      await addModelServer(user.api, fake.baseUrl, { embedding: 'fake-embedding' });
      const a = await datasetWithChunk(user.api, { name: 'builtin' });
      const b = await user.api.post('/datasets', { name: 'fake-embedded', embedding_model: 'fake-embedding@fake@OpenAI-API-Compatible' });
      assert.equal(b.status, 200, JSON.stringify(b.body));
      const res = await user.api.post('/chats', { name: 'mixed', dataset_ids: [a.id, b.body.data.id] });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /one embedding model/);
      const ok = await user.api.post('/chats', { name: 'one', dataset_ids: [a.id] });
      assert.deepEqual(ok.body.data.dataset_ids, [a.id]);
      assert.deepEqual(ok.body.data.kb_names, ['builtin']);
    });
  });

  describe('prompt variables (spec rule 5) on create and update', () => {
    it('rejects a parameter missing from the system prompt and a prompt variable missing from the parameters', async () => {
      const extraParam = await api.post('/chats', { name: 'v1', prompt_config: { system: 'Hi {knowledge}', parameters: [{ key: 'knowledge', optional: true }, { key: 'tone', optional: false }] } });
      assert.equal(extraParam.status, 400);
      assert.match(extraParam.body.message, /'tone'/);
      const extraVar = await api.post('/chats', { name: 'v2', prompt_config: { system: 'Speak {language}. {knowledge}' } });
      assert.equal(extraVar.status, 400);
      assert.match(extraVar.body.message, /\{language\}/);
      // Issue 15 item 6: without explicit parameters, the default knowledge parameter applies only when {knowledge} is used.
      const noKnowledge = await api.post('/chats', { name: 'v3', prompt_config: { system: 'No datasets here.' } });
      assert.equal(noKnowledge.status, 200, JSON.stringify(noKnowledge.body));
      assert.deepEqual(noKnowledge.body.data.prompt_config.parameters, []);
    });

    it('accepts variables that agree; an update that breaks the agreement is rejected and changes nothing', async () => {
      const chat = await createChat(api, { name: 'vars', prompt_config: { system: 'Speak {language}. {knowledge}', parameters: [{ key: 'knowledge', optional: true }, { key: 'language' }] } });
      assert.deepEqual(chat.prompt_config.parameters, [{ key: 'knowledge', optional: true }, { key: 'language', optional: false }]);
      const removed = await api.patch(`/chats/${chat.id}`, { prompt_config: { parameters: [{ key: 'knowledge', optional: true }] } });
      assert.equal(removed.status, 400);
      assert.match(removed.body.message, /\{language\}/);
      const added = await api.patch(`/chats/${chat.id}`, { prompt_config: { system: 'Speak {language} to {user}. {knowledge}' } });
      assert.equal(added.status, 400);
      assert.match(added.body.message, /\{user\}/);
      const same = await api.get(`/chats/${chat.id}`);
      assert.deepEqual(same.body.data.prompt_config, chat.prompt_config);
    });
  });

  describe('get, update', () => {
    it('PATCH changes only the keys given and merges llm_setting and prompt_config', async () => {
      const chat = await createChat(api, { name: 'patch-me', prompt_config: { prologue: 'Ahoy!', empty_response: 'Nope.' }, top_n: 4 });
      const res = await api.patch(`/chats/${chat.id}`, { llm_setting: { temperature: 0.9 }, prompt_config: { quote: false } });
      assert.equal(res.status, 200);
      const after = (await api.get(`/chats/${chat.id}`)).body.data;
      assert.deepEqual(after.llm_setting, { ...chat.llm_setting, temperature: 0.9 });
      assert.deepEqual(after.prompt_config, { ...chat.prompt_config, quote: false });
      for (const key of ['name', 'icon', 'llm_id', 'top_n', 'top_k', 'similarity_threshold', 'vector_similarity_weight', 'rerank_id', 'dataset_ids', 'create_time']) {
        assert.deepEqual(after[key], chat[key], key);
      }
    });

    it('PUT behaves the same; renaming keeps names unique', async () => {
      const chat = await createChat(api, { name: 'put-me' });
      const res = await api.put(`/chats/${chat.id}`, { name: 'put-renamed', top_k: 50 });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.name, 'put-renamed');
      assert.equal(res.body.data.top_k, 50);
      assert.deepEqual(res.body.data.prompt_config, chat.prompt_config);
      await createChat(api, { name: 'put-other' });
      const clash = await api.put(`/chats/${chat.id}`, { name: 'put-other' });
      assert.equal(clash.status, 400);
    });

    it("another tenant's chat is 404 for get, update and delete", async () => {
      const chat = await createChat(api, { name: 'private' });
      const other = await userWithModel('other-tenant', fake.baseUrl);
      assert.equal((await other.api.get(`/chats/${chat.id}`)).status, 404);
      assert.equal((await other.api.patch(`/chats/${chat.id}`, { name: 'mine' })).status, 404);
      assert.equal((await other.api.delete('/chats', { ids: [chat.id] })).status, 404);
      assert.equal((await other.api.post(`/chats/${chat.id}/sessions`, {})).status, 404);
      assert.equal((await api.get(`/chats/${chat.id}`)).body.data.name, 'private');
    });
  });

  describe('list', () => {
    let user: Api;
    const ids: Record<string, string> = {};

    before(async () => {
      user = (await userWithModel('lister', fake.baseUrl)).api;
      for (const name of ['Alpha one', 'alpha two', 'Beta']) {
        ids[name] = (await createChat(user, { name })).id;
        await new Promise((r) => setTimeout(r, 5));
      }
    });

    it('returns {chats, total}, newest first by default, with paging', async () => {
      const res = await user.get('/chats');
      assert.equal(res.body.code, 0);
      assert.equal(res.body.data.total, 3);
      assert.deepEqual(res.body.data.chats.map((c: any) => c.name), ['Beta', 'alpha two', 'Alpha one']);
      const page = await user.get('/chats', { page: 2, page_size: 2, desc: false });
      assert.deepEqual(page.body.data.chats.map((c: any) => c.name), ['Beta']);
      assert.equal(page.body.data.total, 3);
      const byName = await user.get('/chats', { orderby: 'name', desc: false });
      assert.deepEqual(byName.body.data.chats.map((c: any) => c.name), ['Alpha one', 'Beta', 'alpha two']);
    });

    it('keywords match names case-insensitively; id and name are exact and take precedence over keywords', async () => {
      const kw = await user.get('/chats', { keywords: 'ALPHA' });
      assert.deepEqual(kw.body.data.chats.map((c: any) => c.name).sort(), ['Alpha one', 'alpha two']);
      const name = await user.get('/chats', { name: 'Beta', keywords: 'alpha' });
      assert.deepEqual(name.body.data.chats.map((c: any) => c.name), ['Beta']);
      const id = await user.get('/chats', { id: ids['alpha two'], keywords: 'beta' });
      assert.deepEqual(id.body.data.chats.map((c: any) => c.name), ['alpha two']);
      const none = await user.get('/chats', { name: 'alpha' });
      assert.deepEqual(none.body.data, { chats: [], total: 0 });
    });

    it('owner_ids filters by owner tenant; parser_id by the chunk method of attached datasets', async () => {
      const me = (await user.get('/users/me')).body.data.tenant_id;
      assert.equal((await user.get('/chats', { owner_ids: me })).body.data.total, 3);
      assert.equal((await user.get('/chats', { owner_ids: ['0'.repeat(32)] })).body.data.total, 0);
      const qa = await datasetWithChunk(user, { name: 'qa', chunk_method: 'qa' });
      await user.patch(`/chats/${ids.Beta}`, { dataset_ids: [qa.id] });
      assert.deepEqual((await user.get('/chats', { parser_id: 'qa' })).body.data.chats.map((c: any) => c.name), ['Beta']);
      assert.equal((await user.get('/chats', { parser_id: 'naive' })).body.data.total, 0);
    });

    it('another tenant sees none of them', async () => {
      assert.equal((await api.get('/chats', { keywords: 'alpha' })).body.data.total, 0);
    });
  });

  describe('delete (shared ids / delete_all rule)', () => {
    it('deletes nothing without ids, the given ids, or everything with delete_all', async () => {
      const user = (await userWithModel('deleter', fake.baseUrl)).api;
      const a = await createChat(user, { name: 'a' });
      const b = await createChat(user, { name: 'b' });
      await createChat(user, { name: 'c' });
      assert.deepEqual((await user.delete('/chats', {})).body.data, { success_count: 0 });
      assert.deepEqual((await user.delete('/chats', { ids: [] })).body.data, { success_count: 0 });
      assert.equal((await user.get('/chats')).body.data.total, 3);
      const unknown = await user.delete('/chats', { ids: ['0'.repeat(32)] });
      assert.equal(unknown.status, 404);
      assert.equal((await user.get('/chats')).body.data.total, 3, 'a failed delete deletes nothing');
      const session = await user.post(`/chats/${a.id}/sessions`, {});
      assert.deepEqual((await user.delete('/chats', { ids: [a.id] })).body.data, { success_count: 1 });
      assert.equal((await user.get(`/chats/${a.id}`)).status, 404);
      assert.equal((await user.get(`/chats/${a.id}/sessions/${session.body.data.id}`)).status, 404);
      assert.deepEqual((await user.delete('/chats', { delete_all: true })).body.data, { success_count: 2 });
      assert.equal((await user.get('/chats')).body.data.total, 0);
      assert.equal((await user.get(`/chats/${b.id}`)).status, 404);
    });

    it('a batch delete with unknown or duplicate ids deletes the valid ones: code 0, data {success_count, errors}; none valid is an error', async () => {
      const user = (await userWithModel('partial-deleter', fake.baseUrl)).api;
      const a = await createChat(user, { name: 'a' });
      const b = await createChat(user, { name: 'b' });
      const keep = await createChat(user, { name: 'keep' });
      const missing = '0'.repeat(32);
      const res = await user.delete('/chats', { ids: [a.id, missing, b.id, a.id] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.code, 0);
      assert.equal(res.body.data.success_count, 2);
      assert.equal(res.body.data.errors.length, 2, JSON.stringify(res.body.data.errors));
      assert.ok(res.body.data.errors.some((e: string) => e.includes(missing)), 'the unknown id is named');
      assert.ok(res.body.data.errors.some((e: string) => /duplicate/i.test(e) && e.includes(a.id)), 'the duplicate id is named');
      assert.match(res.body.message, /Partially deleted 2 chats with 2 errors/);
      assert.equal((await user.get(`/chats/${a.id}`)).status, 404);
      assert.equal((await user.get(`/chats/${b.id}`)).status, 404);
      assert.equal((await user.get(`/chats/${keep.id}`)).status, 200);
      const none = await user.delete('/chats', { ids: [missing, 'f'.repeat(32)] });
      assert.equal(none.status, 404);
      assert.ok(none.body.message.includes(missing) && none.body.message.includes('f'.repeat(32)), none.body.message);
      assert.equal((await user.get(`/chats/${keep.id}`)).status, 200, 'an all-failed delete deletes nothing');
    });
  });

  describe('sessions', () => {
    let chatId: string;

    before(async () => {
      chatId = (await createChat(api, { name: 'sessions', prompt_config: { prologue: 'Welcome aboard.' } })).id;
    });

    it('a new session is named "New session" and opens with the prologue, under messages and message', async () => {
      const res = await api.post(`/chats/${chatId}/sessions`, {});
      assert.equal(res.status, 200);
      const s = res.body.data;
      assert.match(s.id, /^[0-9a-f]{32}$/);
      assert.equal(s.chat_id, chatId);
      assert.equal(s.name, 'New session');
      assert.equal(s.user_id, '');
      assert.equal(s.messages.length, 1);
      assert.equal(s.messages[0].role, 'assistant');
      assert.equal(s.messages[0].content, 'Welcome aboard.');
      assert.deepEqual(s.message, s.messages);
      assert.ok(Number.isInteger(s.create_time) && Number.isInteger(s.update_time));
    });

    it('renames with PATCH (and PUT); the conversation cannot be changed', async () => {
      const s = (await api.post(`/chats/${chatId}/sessions`, { name: 'first' })).body.data;
      const renamed = await api.patch(`/chats/${chatId}/sessions/${s.id}`, { name: 'renamed' });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.body.data.name, 'renamed');
      assert.deepEqual(renamed.body.data.messages, s.messages);
      for (const key of ['messages', 'message', 'reference']) {
        const res = await api.patch(`/chats/${chatId}/sessions/${s.id}`, { [key]: [] });
        assert.equal(res.status, 400);
        assert.match(res.body.message, new RegExp(`\`${key}\` cannot be changed`));
      }
      assert.equal((await api.put(`/chats/${chatId}/sessions/${s.id}`, { name: 'put' })).body.data.name, 'put');
      assert.equal((await api.patch(`/chats/${chatId}/sessions/${s.id}`, { name: ' ' })).status, 400);
    });

    it('lists a plain list with paging, order and id / name / user_id filters; gets one', async () => {
      const chat = (await createChat(api, { name: 'session-list' })).id;
      const a = (await api.post(`/chats/${chat}/sessions`, { name: 'a', user_id: 'u1' })).body.data;
      await new Promise((r) => setTimeout(r, 5));
      const b = (await api.post(`/chats/${chat}/sessions`, { name: 'b', user_id: 'u2' })).body.data;
      const all = await api.get(`/chats/${chat}/sessions`);
      assert.ok(Array.isArray(all.body.data));
      assert.deepEqual(all.body.data.map((s: any) => s.name), ['b', 'a']);
      assert.deepEqual((await api.get(`/chats/${chat}/sessions`, { desc: false, page_size: 1 })).body.data.map((s: any) => s.name), ['a']);
      assert.deepEqual((await api.get(`/chats/${chat}/sessions`, { user_id: 'u2' })).body.data.map((s: any) => s.id), [b.id]);
      assert.deepEqual((await api.get(`/chats/${chat}/sessions`, { name: 'a' })).body.data.map((s: any) => s.id), [a.id]);
      assert.deepEqual((await api.get(`/chats/${chat}/sessions`, { id: b.id })).body.data.map((s: any) => s.id), [b.id]);
      const one = await api.get(`/chats/${chat}/sessions/${a.id}`);
      assert.equal(one.body.data.user_id, 'u1');
      assert.equal((await api.get(`/chats/${chatId}/sessions/${a.id}`)).status, 404, 'a session of another chat');
    });

    it('deletes by ids or delete_all within the chat', async () => {
      const chat = (await createChat(api, { name: 'session-delete' })).id;
      const s1 = (await api.post(`/chats/${chat}/sessions`, {})).body.data;
      await api.post(`/chats/${chat}/sessions`, {});
      await api.post(`/chats/${chat}/sessions`, {});
      const foreign = (await api.post(`/chats/${chatId}/sessions`, {})).body.data;
      assert.deepEqual((await api.delete(`/chats/${chat}/sessions`, {})).body.data, { success_count: 0 });
      assert.equal((await api.delete(`/chats/${chat}/sessions`, { ids: [foreign.id] })).status, 404);
      assert.deepEqual((await api.delete(`/chats/${chat}/sessions`, { ids: [s1.id] })).body.data, { success_count: 1 });
      assert.deepEqual((await api.delete(`/chats/${chat}/sessions`, { delete_all: true })).body.data, { success_count: 2 });
      assert.deepEqual((await api.get(`/chats/${chat}/sessions`)).body.data, []);
      assert.equal((await api.get(`/chats/${chatId}/sessions/${foreign.id}`)).status, 200);
    });

    it('a batch session delete with unknown, foreign or duplicate ids deletes the valid ones: code 0, data {success_count, errors}; none valid is an error', async () => {
      const chat = (await createChat(api, { name: 'session-partial' })).id;
      const s1 = (await api.post(`/chats/${chat}/sessions`, {})).body.data;
      const s2 = (await api.post(`/chats/${chat}/sessions`, {})).body.data;
      const foreign = (await api.post(`/chats/${chatId}/sessions`, {})).body.data;
      const missing = '0'.repeat(32);
      const res = await api.delete(`/chats/${chat}/sessions`, { ids: [s1.id, missing, foreign.id, s1.id] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.code, 0);
      assert.equal(res.body.data.success_count, 1);
      assert.equal(res.body.data.errors.length, 3, JSON.stringify(res.body.data.errors));
      for (const id of [missing, foreign.id, s1.id]) assert.ok(res.body.data.errors.some((e: string) => e.includes(id)), `${id} is named`);
      assert.equal((await api.get(`/chats/${chat}/sessions/${s1.id}`)).status, 404);
      assert.equal((await api.get(`/chats/${chat}/sessions/${s2.id}`)).status, 200);
      assert.equal((await api.get(`/chats/${chatId}/sessions/${foreign.id}`)).status, 200, 'a session of another chat is not deleted');
      const none = await api.delete(`/chats/${chat}/sessions`, { ids: [missing, foreign.id] });
      assert.equal(none.status, 404);
      assert.equal((await api.get(`/chats/${chat}/sessions/${s2.id}`)).status, 200, 'an all-failed delete deletes nothing');
    });
  });
});
