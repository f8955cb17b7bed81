import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { DatasetService } from '../../../src/services/datasets.js';
import { ProviderService } from '../../../src/services/providers.js';
import { outboundGuard } from '../../../src/services/outbound-urls.js';
import { ChatService } from '../../../src/services/chats.js';
import { SessionService } from '../../../src/services/sessions.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import { BUILTIN_CHAT_MODEL } from '../../../src/services/model-catalog.js';
import { DEFAULT_LLM_SETTING, defaultPromptConfig } from '../../../src/chat/config.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';
import { anyEmbeddingModel, noCleanup, refused, storedDocument } from './fakes.js';

const OPENAI = 'OpenAI-API-Compatible';
const page = { page: 1, page_size: 30, orderby: 'create_time' as const, desc: false };

type ChatView = Awaited<ReturnType<ChatService['create']>>;

for (const profile of testProfiles()) describe(`ChatService and SessionService: chat assistants and their sessions [${profile}]`, () => {
  let db: MetaDb;
  let store: MetaStore;
  let datasets: DatasetService;
  let providers: ProviderService;
  let chats: ChatService;
  let sessions: SessionService;
  const owner = tenantPrincipal('a'.repeat(32));
  const stranger = tenantPrincipal('b'.repeat(32));

  beforeEach(async () => {
    db = await openTestMetaDb(profile);
    store = new MetaStore(db);
    providers = new ProviderService(store, outboundGuard({ allowPrivate: true }));
    datasets = new DatasetService(store, anyEmbeddingModel, noCleanup);
    chats = new ChatService(store, datasets, providers);
    sessions = new SessionService(store, chats);
  });
  afterEach(() => db.close());

  /** A dataset of `who`, with one parsed document unless `parsed` is false. */
  async function dataset(name: string, opts: { parsed?: boolean; embedding_model?: string; who?: typeof owner } = {}) {
    const ds = (await datasets.create(opts.who ?? owner, { name, embedding_model: opts.embedding_model })) as { id: string; tenant_id: string };
    if (opts.parsed !== false) await storedDocument(store, { id: ds.id, tenant_id: (opts.who ?? owner).tenantId });
    return ds.id;
  }
  const listed = async (p = owner, extra: Record<string, unknown> = {}) => chats.list(p, { ...page, ...extra });

  describe('chats', () => {
    it("a new chat gets the default model settings, prompt and retrieval settings, and the tenant's default chat model", async () => {
      const chat = await chats.create(owner, { name: '  guide  ' });
      assert.equal(chat.name, 'guide', 'the name is trimmed');
      assert.equal(chat.llm_id, BUILTIN_CHAT_MODEL);
      assert.deepEqual(chat.llm_setting, DEFAULT_LLM_SETTING);
      assert.deepEqual(chat.prompt_config, defaultPromptConfig());
      assert.deepEqual(
        { t: chat.similarity_threshold, w: chat.vector_similarity_weight, n: chat.top_n, k: chat.top_k, r: chat.rerank_id, d: chat.dataset_ids },
        { t: 0.2, w: 0.3, n: 6, k: 1024, r: '', d: [] },
      );
      assert.equal(chat.tenant_id, owner.tenantId);
    });

    it('a name is required, at most 255 bytes, and unique in the tenant case-insensitively; a refused chat is not stored', async () => {
      await chats.create(owner, { name: 'Guide' });
      await refused(chats.create(owner, { name: '   ' }), 400, /^`name` is required and must not be blank$/);
      await refused(chats.create(owner, {}), 400, /^`name` is required/);
      await refused(chats.create(owner, { name: 'é'.repeat(128) }), 400, /^`name` must be at most 255 bytes$/);
      await refused(chats.create(owner, { name: 'guide' }), 400, /^Duplicated chat name in creating chat$/);
      assert.equal((await listed()).total, 1);
      assert.equal((await chats.create(stranger, { name: 'guide' })).name, 'guide', 'another tenant may use the name');
    });

    it("a dataset without a parsed document cannot be attached: 400 naming it, and the chat is not created", async () => {
      const empty = await dataset('empty', { parsed: false });
      await refused(chats.create(owner, { name: 'c', dataset_ids: [empty] }), 400, new RegExp(`^The dataset ${empty} doesn't own parsed file`));
      assert.equal((await listed()).total, 0);
      const unparsed = await dataset('unparsed', { parsed: false });
      await storedDocument(store, { id: unparsed, tenant_id: owner.tenantId }, { run: 'UNSTART', chunk_count: 0 });
      await refused(chats.create(owner, { name: 'c', dataset_ids: [unparsed] }), 400, /doesn't own parsed file/);
    });

    it('attaches parsed datasets the caller may manage, showing their ids and names', async () => {
      const a = await dataset('alpha');
      const b = await dataset('beta');
      const chat = await chats.create(owner, { name: 'c', dataset_ids: [a, b] });
      assert.deepEqual(chat.dataset_ids.slice().sort(), [a, b].sort());
      assert.deepEqual(chat.kb_names.slice().sort(), ['alpha', 'beta']);
      assert.deepEqual((await chats.load(owner, chat.id)).datasets.map((d) => d.dataset_id).sort(), [a, b].sort());
    });

    it("refuses a dataset listed twice, another tenant's dataset (404), and datasets on two embedding models", async () => {
      const a = await dataset('alpha');
      const other = await dataset('other', { embedding_model: 'b@Builtin' });
      const theirs = await dataset('theirs', { who: stranger });
      await refused(chats.create(owner, { name: 'c', dataset_ids: [a, a] }), 400, new RegExp(`^\`dataset_ids\` lists dataset '${a}' twice$`));
      await refused(chats.create(owner, { name: 'c', dataset_ids: [theirs] }), 404, /not found/);
      await refused(chats.create(owner, { name: 'c', dataset_ids: [a, other] }), 400, /^The datasets of a chat must use one embedding model; these use a@Builtin, b@Builtin$/);
      assert.equal((await listed()).total, 0);
    });

    it('an update changes only the keys given: llm_setting is merged (max_tokens meaning max_token), the datasets stay', async () => {
      const a = await dataset('alpha');
      const chat = await chats.create(owner, { name: 'c', dataset_ids: [a], top_n: 3 });
      const updated = await chats.update(owner, chat.id, { llm_setting: { temperature: 0.9, max_tokens: 2048 }, description: 'about rivers' });
      assert.deepEqual(updated.llm_setting, { ...DEFAULT_LLM_SETTING, temperature: 0.9, max_token: 2048 });
      assert.equal(updated.description, 'about rivers');
      assert.equal(updated.name, 'c');
      assert.equal(updated.top_n, 3);
      assert.deepEqual(updated.dataset_ids, [a]);
      const both = await chats.update(owner, chat.id, { llm_setting: { max_token: 100, max_tokens: 9999 } });
      assert.equal(both.llm_setting.max_token, 100, 'max_token wins over its alias');
      assert.deepEqual((await chats.update(owner, chat.id, { dataset_ids: [] })).dataset_ids, [], 'an empty list detaches');
    });

    it('prompt_config: a parameter the system prompt does not use, or a {variable} without its parameter, is refused naming it and nothing changes', async () => {
      const chat = await chats.create(owner, { name: 'c' });
      await refused(
        chats.update(owner, chat.id, { prompt_config: { system: 'Plain prompt.', parameters: [{ key: 'tone', optional: true }] } }),
        400,
        /^Parameter 'tone' is in prompt_config.parameters but \{tone\} is not in prompt_config.system/,
      );
      await refused(chats.update(owner, chat.id, { prompt_config: { system: 'Tone: {tone}', parameters: [] } }), 400, /^Variable \{tone\} is in prompt_config.system but not in prompt_config.parameters/);
      await refused(chats.update(owner, chat.id, { prompt_config: { system: 'Q: {question}', parameters: [{ key: 'question', optional: false }] } }), 400, /`question` is reserved/);
      assert.deepEqual((await chats.load(owner, chat.id)).promptConfig, defaultPromptConfig(), 'unchanged');
    });

    it("prompt_config is merged into the current one; a parameter's `value` from RAGFlow's UI is dropped; the knowledge parameter follows {knowledge}", async () => {
      const chat = await chats.create(owner, { name: 'c' });
      const withValue = await chats.update(owner, chat.id, {
        prompt_config: { system: 'Be {tone}. {knowledge}', parameters: [{ key: 'knowledge', optional: true }, { key: 'tone', optional: false, value: 'kind' } as never] },
      });
      assert.deepEqual(withValue.prompt_config.parameters, [{ key: 'knowledge', optional: true }, { key: 'tone', optional: false }]);
      assert.equal(withValue.prompt_config.prologue, defaultPromptConfig().prologue, 'keys not given are kept');
      const noKnowledge = await chats.update(owner, chat.id, { prompt_config: { system: 'Be {tone}.' } });
      assert.deepEqual(noKnowledge.prompt_config.parameters, [{ key: 'tone', optional: false }], 'knowledge dropped when the prompt no longer uses it');
    });

    it('llm_id must name a configured chat model and rerank_id a rerank model; a blank rerank_id clears it', async () => {
      await providers.createInstance(owner, OPENAI, {
        instance_name: 'local',
        base_url: 'http://127.0.0.1:9/v1',
        model_info: [{ model_name: 'qwen', model_type: 'chat' }, { model_name: 'bge-rr', model_type: 'rerank' }],
      });
      await refused(chats.create(owner, { name: 'c', llm_id: `nope@local@${OPENAI}` }), 400, /Model nope@local@OpenAI-API-Compatible not found for model type chat/);
      await refused(chats.create(owner, { name: 'c', rerank_id: `qwen@local@${OPENAI}` }), 400, /not found for model type rerank/);
      const chat = await chats.create(owner, { name: 'c', llm_id: `qwen@local@${OPENAI}`, rerank_id: `bge-rr@local@${OPENAI}` });
      assert.equal(chat.llm_id, `qwen@local@${OPENAI}`);
      assert.equal(chat.rerank_id, `bge-rr@local@${OPENAI}`);
      assert.equal((await chats.update(owner, chat.id, { rerank_id: '  ' })).rerank_id, '');
      assert.equal((await chats.update(owner, chat.id, { llm_id: null })).llm_id, BUILTIN_CHAT_MODEL, 'no model means the tenant default');
      await refused(chats.create(stranger, { name: 'c', llm_id: `qwen@local@${OPENAI}` }), 400, /Provider OpenAI-API-Compatible \(instance local\) not found/);
    });

    it("renaming to another chat's name is refused ('Duplicated chat name'); a chat may take its own name in another case", async () => {
      const a = await chats.create(owner, { name: 'alpha' });
      await chats.create(owner, { name: 'beta' });
      await refused(chats.update(owner, a.id, { name: 'BETA' }), 400, /^Duplicated chat name$/);
      assert.equal((await chats.update(owner, a.id, { name: 'Alpha' })).name, 'Alpha');
    });

    it("another tenant's chat is a 404 on read, update and delete, and is never listed", async () => {
      const chat = await chats.create(owner, { name: 'mine' });
      await refused(chats.get(stranger, chat.id), 404, new RegExp(`^Chat '${chat.id}' not found$`));
      await refused(chats.update(stranger, chat.id, { name: 'x' }), 404, /not found/);
      await refused(chats.delete(stranger, [chat.id], false), 404, /not found/);
      assert.deepEqual(await listed(stranger), { chats: [], total: 0 });
      assert.equal((await chats.get(owner, chat.id)).name, 'mine', 'untouched');
    });

    it('lists by keyword (case-insensitive part of the name) a page at a time, with the total of all matches; an exact name ignores keywords', async () => {
      for (const name of ['River A', 'river b', 'Lake', 'RIVER c']) await chats.create(owner, { name });
      const first = await listed(owner, { keywords: 'river', page_size: 2, orderby: 'name' });
      assert.equal(first.total, 3);
      assert.equal(first.chats.length, 2);
      const second = await listed(owner, { keywords: 'river', page: 2, page_size: 2, orderby: 'name' });
      assert.equal(second.chats.length, 1);
      assert.deepEqual([...first.chats, ...second.chats].map((c) => c.name).sort(), ['RIVER c', 'River A', 'river b']);
      assert.deepEqual((await listed(owner, { name: 'Lake', keywords: 'river' })).chats.map((c) => c.name), ['Lake']);
    });

    it('delete: unknown and duplicate ids are reported and the others go; only unknown ids is a 404; delete_all takes only the caller’s', async () => {
      const a = await chats.create(owner, { name: 'a' });
      const b = await chats.create(owner, { name: 'b' });
      const theirs = await chats.create(stranger, { name: 'theirs' });
      const unknown = 'f'.repeat(32);
      const result = await chats.delete(owner, [a.id, a.id, unknown], false);
      assert.deepEqual(result, { success_count: 1, errors: [`Duplicate ids: '${a.id}'`, `Chat '${unknown}' not found`] });
      await refused(chats.delete(owner, [unknown], false), 404, new RegExp(`^Chat '${unknown}' not found$`));
      assert.deepEqual(await chats.delete(owner, [], false), { success_count: 0, errors: [] }, 'no ids and no delete_all deletes nothing');
      assert.equal((await listed()).total, 1);
      assert.deepEqual(await chats.delete(owner, undefined, true), { success_count: 1, errors: [] });
      await refused(chats.get(owner, b.id), 404, /not found/);
      assert.equal((await chats.get(stranger, theirs.id)).name, 'theirs');
    });
  });

  describe('sessions', () => {
    let chat: ChatView;
    beforeEach(async () => {
      chat = await chats.create(owner, { name: 'guide', prompt_config: { prologue: 'Ask me.' } });
    });

    it("a session opens with the chat's prologue, named 'New session' unless named; a blank name is refused", async () => {
      const s = await sessions.create(owner, chat.id, { user_id: 'hiker' });
      assert.equal(s.name, 'New session');
      assert.equal(s.user_id, 'hiker');
      assert.deepEqual(s.messages.map((m) => [m.role, m.content]), [['assistant', 'Ask me.']]);
      assert.equal((await sessions.create(owner, chat.id, { name: ' trip ' })).name, 'trip');
      await refused(sessions.create(owner, chat.id, { name: '  ' }), 400, /^`name` must not be blank$/);
      const quiet = await chats.create(owner, { name: 'quiet', prompt_config: { prologue: '' } });
      assert.deepEqual((await sessions.create(owner, quiet.id, {})).messages, [], 'no prologue, no opening message');
    });

    it("only a session's name can be changed: its messages are written by the completion routes", async () => {
      const s = await sessions.create(owner, chat.id, {});
      for (const key of ['messages', 'message', 'reference'] as const) {
        await refused(sessions.update(owner, chat.id, s.id, { [key]: [] }), 400, new RegExp(`^\`${key}\` cannot be changed`));
      }
      await refused(sessions.update(owner, chat.id, s.id, { name: ' ' }), 400, /must not be blank/);
      const renamed = await sessions.update(owner, chat.id, s.id, { name: ' renamed ' });
      assert.equal(renamed.name, 'renamed');
      assert.deepEqual(renamed.messages.map((m) => m.content), ['Ask me.'], 'messages untouched');
    });

    it("a session is reached only through its own chat, and another tenant's chat is a 404", async () => {
      const s = await sessions.create(owner, chat.id, {});
      const other = await chats.create(owner, { name: 'other' });
      await refused(sessions.getView(owner, other.id, s.id), 404, new RegExp(`^Session '${s.id}' not found in chat ${other.id}$`));
      await refused(sessions.update(owner, other.id, s.id, { name: 'x' }), 404, /not found in chat/);
      await refused(sessions.create(stranger, chat.id, {}), 404, /^Chat '.*' not found$/);
      await refused(sessions.list(stranger, chat.id, page), 404, /not found/);
    });

    it("lists a chat's sessions, of one user when asked, a page at a time", async () => {
      await sessions.create(owner, chat.id, { name: 's1', user_id: 'u1' });
      await sessions.create(owner, chat.id, { name: 's2', user_id: 'u2' });
      await sessions.create(owner, chat.id, { name: 's3', user_id: 'u1' });
      const other = await chats.create(owner, { name: 'other' });
      await sessions.create(owner, other.id, { name: 'elsewhere', user_id: 'u1' });
      assert.deepEqual((await sessions.list(owner, chat.id, { ...page, user_id: 'u1', orderby: 'name' })).map((s) => s.name), ['s1', 's3']);
      assert.deepEqual((await sessions.list(owner, chat.id, { ...page, page: 2, page_size: 2, orderby: 'name' })).map((s) => s.name), ['s3']);
    });

    it("deleting sessions reports unknown and another chat's ids, and deleting the chat's sessions leaves other chats' alone", async () => {
      const s1 = await sessions.create(owner, chat.id, {});
      const other = await chats.create(owner, { name: 'other' });
      const elsewhere = await sessions.create(owner, other.id, {});
      const result = await sessions.delete(owner, chat.id, [s1.id, elsewhere.id], false);
      assert.equal(result.success_count, 1);
      assert.deepEqual(result.errors, [`Session '${elsewhere.id}' not found in chat ${chat.id}`]);
      await refused(sessions.delete(owner, chat.id, [elsewhere.id], false), 404, /not found in chat/);
      await sessions.create(owner, chat.id, {});
      assert.deepEqual(await sessions.delete(owner, chat.id, null, true), { success_count: 1, errors: [] });
      assert.equal((await sessions.getView(owner, other.id, elsewhere.id)).id, elsewhere.id, 'the other chat keeps its session');
    });
  });
});
