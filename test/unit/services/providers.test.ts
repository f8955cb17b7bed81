import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { ProviderService, maskSecret } from '../../../src/services/providers.js';
import { outboundGuard } from '../../../src/services/outbound-urls.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import { BUILTIN_CHAT_MODEL, BUILTIN_EMBEDDING_MODEL } from '../../../src/services/model-catalog.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

/** Rejects with an ApiError of this HTTP code whose message matches. */
async function refused(call: Promise<unknown>, code: number, message: RegExp): Promise<void> {
  await assert.rejects(call, (err: { code?: number; message: string }) => {
    assert.equal(err.code, code, err.message);
    assert.match(err.message, message);
    return true;
  });
}

const OPENAI = 'OpenAI-API-Compatible';

for (const profile of testProfiles()) describe(`ProviderService: provider instances, their models and the tenant's defaults [${profile}]`, () => {
  let db: MetaDb;
  let providers: ProviderService;
  const alice = tenantPrincipal('a'.repeat(32));
  const bob = tenantPrincipal('b'.repeat(32));

  beforeEach(async () => {
    db = await openTestMetaDb(profile);
    providers = new ProviderService(new MetaStore(db), outboundGuard({ allowPrivate: true }));
  });
  afterEach(() => db.close());

  const local = (name = 'local', fields: Record<string, unknown> = {}) =>
    providers.createInstance(alice, OPENAI, {
      instance_name: name,
      base_url: 'http://127.0.0.1:8000/v1/',
      api_key: 'sk-0123456789abcdef',
      model_info: [{ model_name: 'qwen', model_type: 'chat', max_tokens: 32768 }, { model_name: 'e5', model_type: 'embedding' }],
      ...fields,
    });

  it('never returns an API key in full: at most its first 3 and last 4 characters', async () => {
    const created = await local();
    assert.equal(created.api_key, 'sk-…cdef');
    assert.equal((await providers.getInstance(alice, OPENAI, 'local')).api_key, 'sk-…cdef');
    assert.equal(maskSecret('short'), '*****');
    assert.equal(maskSecret(''), '');
  });

  it('stores the base URL without trailing slashes, and refuses one that is not http(s)', async () => {
    assert.equal((await local()).base_url, 'http://127.0.0.1:8000/v1');
    await refused(local('bad', { base_url: 'ftp://host' }), 400, /`base_url` must be an http\(s\) URL; got 'ftp:\/\/host'/);
  });

  it("refuses an instance without a name, named 'default', or named as one that exists", async () => {
    await local();
    await refused(local(' '), 400, /`instance_name` is required/);
    await refused(local('default'), 400, /instance_name cannot be 'default'/);
    await refused(local('local'), 400, /Instance 'local' of provider OpenAI-API-Compatible already exists/);
  });

  it('requires a base URL of providers that have no default one, and names the configurable providers for an unknown one', async () => {
    await refused(local('nourl', { base_url: '' }), 400, /`base_url` is required for provider OpenAI-API-Compatible/);
    await refused(providers.createInstance(alice, 'NoSuchAI', { instance_name: 'x' }), 404, /Provider NoSuchAI not found; configurable providers: .*OpenAI-API-Compatible/);
    await refused(providers.createInstance(alice, 'Builtin', { instance_name: 'x' }), 404, /Provider Builtin not found/);
  });

  it('refuses a model of an unknown type, without a name, or with @ in its name, storing nothing', async () => {
    await refused(local('t', { model_info: [{ model_name: 'm', model_type: 'speech' }] }), 400, /`model_type` speech is not one of chat, embedding, rerank/);
    await refused(local('n', { model_info: [{ model_name: ' ', model_type: 'chat' }] }), 400, /`model_name` is required/);
    await refused(local('a', { model_info: [{ model_name: 'a@b', model_type: 'chat' }] }), 400, /`model_name` must not contain @/);
    assert.deepEqual(await providers.listInstances(alice, OPENAI), []);
  });

  it('lists the built-in models first, then every configured model under its full id', async () => {
    await local();
    const ids = (await providers.listModels(alice.tenantId)).map((m) => m.model_id);
    assert.equal(ids[0], BUILTIN_CHAT_MODEL);
    assert.ok(ids.includes(BUILTIN_EMBEDDING_MODEL));
    assert.ok(ids.includes(`qwen@local@${OPENAI}`) && ids.includes(`e5@local@${OPENAI}`));
    assert.deepEqual((await providers.listModels(alice.tenantId, 'embedding')).filter((m) => m.provider_name === OPENAI).map((m) => m.name), ['e5']);
  });

  it("keeps each tenant's instances to itself", async () => {
    await local();
    assert.deepEqual(await providers.listInstances(bob, OPENAI), []);
    await refused(providers.getInstance(bob, OPENAI, 'local'), 404, /Instance 'local' of provider OpenAI-API-Compatible not found/);
    await refused(providers.resolve(bob.tenantId, `qwen@local@${OPENAI}`, 'chat'), 400, /Provider OpenAI-API-Compatible \(instance local\) not found/);
  });

  it('resolves a model by its id and type, with the instance it belongs to', async () => {
    await local();
    const chat = await providers.resolve(alice.tenantId, `qwen@local@${OPENAI}`, 'chat');
    assert.deepEqual({ ...chat }, { id: `qwen@local@${OPENAI}`, factory: OPENAI, model_name: 'qwen', model_type: 'chat', base_url: 'http://127.0.0.1:8000/v1', api_key: 'sk-0123456789abcdef', vision: false, max_tokens: 32768 });
    await refused(providers.resolve(alice.tenantId, `qwen@local@${OPENAI}`, 'embedding'), 400, /Model qwen@local@OpenAI-API-Compatible not found for model type embedding/);
  });

  it('chats and embeds with the built-in models until the tenant chooses others; rerank has no default', async () => {
    assert.deepEqual(await providers.getDefaults(alice.tenantId), { chat_model: BUILTIN_CHAT_MODEL, embedding_model: BUILTIN_EMBEDDING_MODEL, rerank_model: null });
    await refused(providers.resolveDefault(alice.tenantId, 'rerank'), 400, /No default rerank model is set/);
  });

  it('sets a default only to a model that resolves, stored under its canonical id', async () => {
    await local();
    const defaults = await providers.setDefault(alice.tenantId, 'chat', `qwen@${OPENAI}`);
    assert.equal(defaults.chat_model, `qwen@local@${OPENAI}`);
    assert.equal((await providers.resolveDefault(alice.tenantId, 'chat')).model_name, 'qwen');
    await refused(providers.setDefault(alice.tenantId, 'embedding', `qwen@local@${OPENAI}`), 400, /not found for model type embedding/);
    assert.equal((await providers.getDefaults(alice.tenantId)).embedding_model, BUILTIN_EMBEDDING_MODEL, 'unchanged by the refused call');
  });

  it('adds and deletes models of an instance; deleting one it lacks is a 404', async () => {
    await local();
    const added = await providers.addModels(alice, OPENAI, 'local', [{ model_name: 'bge-reranker', model_type: 'rerank' }]);
    assert.deepEqual(added.models.map((m) => m.model_name).sort(), ['bge-reranker', 'e5', 'qwen']);
    await providers.deleteModel(alice, OPENAI, 'local', 'qwen');
    assert.deepEqual((await providers.getInstance(alice, OPENAI, 'local')).models.map((m) => m.model_name).sort(), ['bge-reranker', 'e5']);
    await refused(providers.deleteModel(alice, OPENAI, 'local', 'qwen'), 404, /Model qwen not found in instance local/);
  });

  it('keeps the caller’s spelling of an embedding model that names the same model, and refuses an unknown one naming the field', async () => {
    await local();
    assert.equal(await providers.checkEmbeddingModel(alice.tenantId, `e5@${OPENAI}`), `e5@${OPENAI}`);
    assert.equal(await providers.checkEmbeddingModel(alice.tenantId, BUILTIN_EMBEDDING_MODEL), BUILTIN_EMBEDDING_MODEL);
    await refused(providers.checkEmbeddingModel(alice.tenantId, `nope@${OPENAI}`), 400, /^`embedding_model` nope@OpenAI-API-Compatible: Model nope@OpenAI-API-Compatible not found for model type embedding/);
  });

  it('an update stores the new key in full but answers with it masked, normalises the base URL, and upserts models by name', async () => {
    await local();
    const updated = await providers.updateInstance(alice, OPENAI, 'local', {
      api_key: 'sk-new-secret-9876',
      base_url: 'https://llm.example.org/v1///',
      model_info: [{ model_name: 'qwen', model_type: ['chat', 'embedding'], max_tokens: 1000 }],
    });
    assert.equal(updated.api_key, 'sk-…9876');
    assert.equal(updated.base_url, 'https://llm.example.org/v1');
    assert.deepEqual(updated.models.filter((m) => m.model_name === 'qwen'), [{ model_name: 'qwen', model_type: ['chat', 'embedding'], max_tokens: 1000, vision: false }], 'one qwen, replaced');
    const resolved = await providers.resolve(alice.tenantId, `qwen@local@${OPENAI}`, 'embedding');
    assert.deepEqual([resolved.api_key, resolved.base_url], ['sk-new-secret-9876', 'https://llm.example.org/v1']);
    assert.ok((await providers.listInstances(alice, OPENAI)).every((i) => !i.api_key.includes('secret')), 'lists mask it too');
  });

  it('an update with a base URL that is not http(s) is refused and changes nothing', async () => {
    await local();
    await refused(providers.updateInstance(alice, OPENAI, 'local', { api_key: 'sk-other-key-0000', base_url: 'file:///etc' }), 400, /`base_url` must be an http\(s\) URL/);
    const resolved = await providers.resolve(alice.tenantId, `qwen@local@${OPENAI}`, 'chat');
    assert.deepEqual([resolved.api_key, resolved.base_url], ['sk-0123456789abcdef', 'http://127.0.0.1:8000/v1']);
  });

  it('an update refused for a bad model changes nothing, not even the key', async () => {
    await local();
    await refused(providers.updateInstance(alice, OPENAI, 'local', { api_key: 'sk-other-key-0000', model_info: [{ model_name: 'm', model_type: 'speech' }] }), 400, /`model_type` speech/);
    assert.equal((await providers.resolve(alice.tenantId, `qwen@local@${OPENAI}`, 'chat')).api_key, 'sk-0123456789abcdef');
  });

  it('adding or updating models where one is invalid is refused and stores none of them', async () => {
    await local();
    const models = [{ model_name: 'good', model_type: 'chat' }, { model_name: 'b@d', model_type: 'chat' }];
    await refused(providers.addModels(alice, OPENAI, 'local', models), 400, /must not contain @/);
    await refused(providers.updateInstance(alice, OPENAI, 'local', { model_info: models }), 400, /must not contain @/);
    assert.deepEqual((await providers.getInstance(alice, OPENAI, 'local')).models.map((m) => m.model_name).sort(), ['e5', 'qwen']);
  });

  it('a model named twice in model_info is a 400 naming it, not a database error, whichever call gives it', async () => {
    const twice = [{ model_name: 'qwen', model_type: 'chat' }, { model_name: ' qwen ', model_type: 'embedding' }];
    await refused(local('dup', { model_info: twice }), 400, /^model_info names the model 'qwen' more than once/);
    assert.deepEqual(await providers.listInstances(alice, OPENAI), []);
    await local();
    await refused(providers.addModels(alice, OPENAI, 'local', [{ model_name: 'new', model_type: 'chat' }, ...twice]), 400, /'qwen' more than once/);
    await refused(providers.updateInstance(alice, OPENAI, 'local', { model_info: twice }), 400, /'qwen' more than once/);
    const models = (await providers.getInstance(alice, OPENAI, 'local')).models;
    assert.deepEqual(models.map((m) => [m.model_name, m.model_type]).sort(), [['e5', ['embedding']], ['qwen', ['chat']]], 'unchanged');
  });

  it("image2text is a chat model that sees images; max_tokens defaults to 8192", async () => {
    const created = await local('vision', { model_info: [{ model_name: 'llava', model_type: 'image2text' }] });
    assert.deepEqual(created.models, [{ model_name: 'llava', model_type: ['chat'], max_tokens: 8192, vision: true }]);
    assert.equal((await providers.resolve(alice.tenantId, `llava@vision@${OPENAI}`, 'chat')).vision, true);
  });

  it('deleting an instance takes its models with it; an unknown instance or provider is a 404', async () => {
    await local();
    await providers.deleteInstance(alice, OPENAI, 'local');
    await refused(providers.resolve(alice.tenantId, `qwen@local@${OPENAI}`, 'chat'), 400, /Provider OpenAI-API-Compatible \(instance local\) not found/);
    assert.ok(!(await providers.listModels(alice.tenantId)).some((m) => m.provider_name === OPENAI));
    await refused(providers.deleteInstance(alice, OPENAI, 'local'), 404, /^Instance 'local' of provider OpenAI-API-Compatible not found$/);
    await refused(providers.listInstances(alice, 'NoSuchAI'), 404, /^Provider NoSuchAI not found/);
  });

  it('a default set to null goes back to the built-in model; the tenant view shows the defaults and every selectable model', async () => {
    await local();
    await providers.setDefault(alice.tenantId, 'chat', `qwen@local@${OPENAI}`);
    await providers.setDefault(alice.tenantId, 'rerank', null);
    let view = await providers.tenantModels(alice);
    assert.deepEqual([view.llm_id, view.embd_id, view.rerank_id], [`qwen@local@${OPENAI}`, BUILTIN_EMBEDDING_MODEL, '']);
    assert.ok(view.models.some((m) => m.model_id === `e5@local@${OPENAI}`));
    await providers.setDefault(alice.tenantId, 'chat', null);
    view = await providers.tenantModels(alice);
    assert.equal(view.llm_id, BUILTIN_CHAT_MODEL);
    assert.equal((await providers.getDefaults(bob.tenantId)).chat_model, BUILTIN_CHAT_MODEL, "another tenant's defaults are its own");
  });

  it('the built-in provider offers its chat model for chat and its embedding models for embedding only, naming them when refused', async () => {
    assert.equal((await providers.resolve(alice.tenantId, BUILTIN_CHAT_MODEL, 'chat')).id, BUILTIN_CHAT_MODEL);
    assert.equal((await providers.resolve(alice.tenantId, BUILTIN_EMBEDDING_MODEL, 'embedding')).id, BUILTIN_EMBEDDING_MODEL);
    await refused(providers.resolve(alice.tenantId, BUILTIN_CHAT_MODEL, 'embedding'), 400, new RegExp(`not found for model type embedding: the built-in provider offers ${BUILTIN_CHAT_MODEL.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(chat\\)`));
    await refused(providers.resolve(alice.tenantId, 'nope@Builtin', 'chat'), 400, /^Model nope@Builtin not found for model type chat/);
    await refused(providers.resolve(alice.tenantId, BUILTIN_EMBEDDING_MODEL, 'rerank'), 400, /not found for model type rerank/);
  });
});
