import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import type { DatasetRow } from '../../../src/store/datasets.js';
import { SEARCH_CONFIG_DEFAULTS, SearchAppService, type SearchAppAnswers, type SearchAppDatasets, type SearchAppModels } from '../../../src/services/searches.js';
import type { Principal } from '../../../src/services/auth.js';
import { ApiError } from '../../../src/errors.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

const owner: Principal = { userId: 'u-owner', email: '', nickname: '', tenantId: 't1', teamTenants: [], isAdmin: false };
const member: Principal = { userId: 'u-member', email: '', nickname: '', tenantId: 't2', teamTenants: ['t1'], isAdmin: false };
const stranger: Principal = { userId: 'u-stranger', email: '', nickname: '', tenantId: 't3', teamTenants: [], isAdmin: false };

/** Datasets by id with their embedding model; any other id is the dataset service's 404. */
function fakeDatasets(models: Record<string, string>): SearchAppDatasets {
  return {
    get: async (_p, id) => {
      if (!models[id]) throw new ApiError(404, `Dataset '${id}' not found`);
      return { id, name: `ds-${id}`, embedding_model: models[id] } as DatasetRow;
    },
  };
}

const knownModels: SearchAppModels = {
  resolve: async (_tenant, modelId) => {
    if (modelId.startsWith('unknown')) throw new ApiError(400, `Model ${modelId} not found`);
    return {} as Awaited<ReturnType<SearchAppModels['resolve']>>;
  },
};

/** Records what each question asked of the conversation service. */
function recordingAnswers(): SearchAppAnswers & { asked: Parameters<SearchAppAnswers['ask']>[] } {
  const asked: Parameters<SearchAppAnswers['ask']>[] = [];
  return {
    asked,
    ask: async (...args) => {
      asked.push(args);
      return { ids: { id: 'turn', session_id: '', chat_id: args[1].row.id }, timings: {}, events: async function* () {} };
    },
  };
}

async function rejectsWith(promise: Promise<unknown>, status: number, message: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.status, status);
    assert.match(err.message, message);
    return true;
  });
}

for (const profile of testProfiles()) describe(`search apps [${profile}]`, () => {
  let db: MetaDb;
  let service: SearchAppService;
  let answers: ReturnType<typeof recordingAnswers>;
  beforeEach(async () => {
    db = await openTestMetaDb(profile);
    answers = recordingAnswers();
    service = new SearchAppService(new MetaStore(db), fakeDatasets({ a: 'bge@Builtin', b: 'bge@Builtin', c: 'other@Builtin' }), knownModels, answers);
  });
  afterEach(() => db.close());

  it('a new app gets RAGFlow\'s search_config defaults under what was given, and a taken name a (1) suffix', async () => {
    const { search_id } = await service.create(owner, { name: '  Trails ', search_config: { kb_ids: ['a'], top_k: 64 } });
    const app = await service.detail(owner, search_id);
    assert.equal(app.name, 'Trails');
    assert.deepEqual(app.search_config, { ...SEARCH_CONFIG_DEFAULTS, kb_ids: ['a'], top_k: 64 });
    const again = await service.create(owner, { name: 'trails' });
    assert.equal((await service.detail(owner, again.search_id)).name, 'trails(1)');
  });

  it('refuses a blank name, datasets on two embedding models, and unknown models, naming the problem', async () => {
    await rejectsWith(service.create(owner, { name: '  ' }), 400, /can't be empty/);
    await rejectsWith(service.create(owner, { name: 'x', search_config: { kb_ids: ['a', 'c'] } }), 400, /one embedding model; these use bge@Builtin, other@Builtin/);
    await rejectsWith(service.create(owner, { name: 'x', search_config: { chat_id: 'unknown-chat@X' } }), 400, /unknown-chat@X not found/);
    await rejectsWith(service.create(owner, { name: 'x', search_config: { kb_ids: ['zzz'] } }), 404, /zzz/);
  });

  it('workspace members see an app; only its creator changes, deletes or asks it; others get 404', async () => {
    const { search_id } = await service.create(owner, { name: 'shared', search_config: { kb_ids: ['a'] } });
    assert.equal((await service.detail(member, search_id)).id, search_id);
    assert.equal((await service.list(member, { page: 1, page_size: 30, orderby: 'create_time', desc: true })).total, 1);
    await rejectsWith(service.detail(stranger, search_id), 404, /not found/);
    await rejectsWith(service.update(member, search_id, { name: 'mine' }), 403, /only the creator/);
    await rejectsWith(service.delete(member, search_id), 403, /only the creator/);
    await rejectsWith(service.ask(member, search_id, 'q'), 403, /only the creator/);
    assert.equal(await service.delete(owner, search_id), true);
    await rejectsWith(service.detail(owner, search_id), 404, /not found/);
  });

  it('an update merges search_config into the saved one and refuses a name another app has', async () => {
    const { search_id } = await service.create(owner, { name: 'first', search_config: { kb_ids: ['a'], top_k: 64 } });
    await service.create(owner, { name: 'second' });
    const updated = await service.update(owner, search_id, { name: 'renamed', search_config: { highlight: true } });
    assert.equal(updated.name, 'renamed');
    assert.deepEqual([updated.search_config.kb_ids, updated.search_config.top_k, updated.search_config.highlight], [['a'], 64, true]);
    await rejectsWith(service.update(owner, search_id, { name: 'SECOND', search_config: {} }), 400, /Duplicated search name/);
  });

  it('asks over the app\'s own datasets with its settings; the request\'s kb_ids only when the app names none', async () => {
    const scoped = await service.create(owner, {
      name: 'scoped',
      search_config: { kb_ids: ['a', 'b'], doc_ids: ['d1'], keyword: true, similarity_threshold: 0.4, vector_similarity_weight: 0.6, chat_id: 'gpt@X' },
    });
    await service.ask(owner, scoped.search_id, 'where?', ['c']);
    const [, chat, question, scope] = answers.asked[0]!;
    assert.equal(question, 'where?');
    assert.deepEqual(chat.datasets.map((d) => d.dataset_id), ['a', 'b'], 'the request\'s kb_ids are not used');
    assert.deepEqual([chat.row.similarity_threshold, chat.row.vector_similarity_weight, chat.row.llm_id], [0.4, 0.6, 'gpt@X']);
    assert.deepEqual([scope?.document_ids, scope?.keyword], [['d1'], true]);

    const open = await service.create(owner, { name: 'open' });
    await rejectsWith(service.ask(owner, open.search_id, 'where?'), 400, /`kb_ids` is required/);
    await service.ask(owner, open.search_id, 'where?', ['c']);
    assert.deepEqual(answers.asked[1]![1].datasets.map((d) => d.dataset_id), ['c']);
    assert.equal(answers.asked[1]![1].row.llm_id, null, 'no chat_id: the workspace default chat model');
  });
});
