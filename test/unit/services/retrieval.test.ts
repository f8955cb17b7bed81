import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { DatasetService } from '../../../src/services/datasets.js';
import { RetrievalService } from '../../../src/services/retrieval.js';
import type { ModelClients } from '../../../src/services/model-clients.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import { openIndexDatabase } from '../../../src/index/sqlite-database.js';
import { SqliteChunkIndex } from '../../../src/index/chunks/sqlite-index.js';
import type { ChatMessage, EmbedPurpose } from '../../../src/models/types.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

const catalog = { defaultEmbeddingModel: async () => 'a@Builtin', checkEmbeddingModel: async (_t: string, id: string) => id };
const noCleanup = { startDeleteDatasets: async () => {}, cancelParse: async () => {}, cancelDatasetIndex: async () => {}, waitDatasetIndex: async () => {} };

/** The model side, recorded: which embedding model embedded what, and a chat model that answers by its system prompt. */
class FakeModels {
  embedded: { tenant: string; model: string; texts: string[]; purpose?: EmbedPurpose }[] = [];
  asked: ChatMessage[][] = [];
  /** The tenant's default chat model, when one was chosen. */
  chosen: string | undefined = 'fake-chat@Fake';
  providers = { chosenChatModel: async () => this.chosen };
  answer = (system: string) => (system.startsWith('Translate') ? 'Wann schliesst der Pass?' : system.startsWith('Extract') ? 'pass, winter' : '1. When is the pass open?\n2. Is the pass safe?\nnot a question');
  async embedding(tenant: string, model: string) {
    return {
      embed: async (texts: string[], purpose?: EmbedPurpose) => {
        this.embedded.push({ tenant, model, texts, purpose });
        return texts.map(() => Array.from({ length: 8 }, (_, i) => (i === 0 ? 1 : 0)));
      },
    };
  }
  async chat() {
    return {
      complete: async (messages: ChatMessage[]) => {
        this.asked.push(messages);
        return this.answer(String(messages[0]!.content));
      },
    };
  }
}

async function refused(call: Promise<unknown>, code: number, message: RegExp): Promise<void> {
  await assert.rejects(call, (err: { status?: number; message: string }) => {
    assert.equal(err.status, code, err.message);
    assert.match(err.message, message);
    return true;
  });
}

for (const profile of testProfiles()) describe(`RetrievalService: who may retrieve what, and with which model [${profile}]`, () => {
  let db: MetaDb;
  let indexDb: ReturnType<typeof openIndexDatabase>;
  let models: FakeModels;
  let retrieval: RetrievalService;
  let datasets: DatasetService;
  let dsA: string;
  const owner = tenantPrincipal('a'.repeat(32));
  const stranger = tenantPrincipal('b'.repeat(32));

  beforeEach(async () => {
    db = await openTestMetaDb(profile);
    indexDb = openIndexDatabase(':memory:');
    const store = new MetaStore(db);
    models = new FakeModels();
    datasets = new DatasetService(store, catalog, noCleanup);
    retrieval = new RetrievalService(store, datasets, new SqliteChunkIndex(indexDb), models as unknown as ModelClients);
    dsA = ((await datasets.create(owner, { name: 'a' })) as { id: string }).id;
  });
  afterEach(async () => {
    await db.close();
    indexDb.close();
  });

  const ask = (fields: Record<string, unknown> = {}) => retrieval.retrieve(owner, { question: 'When does the pass close?', dataset_ids: [dsA], ...fields });

  it("embeds the question as a query, with the dataset owner's embedding model", async () => {
    await ask();
    assert.deepEqual(models.embedded, [{ tenant: owner.tenantId, model: 'a@Builtin', texts: ['When does the pass close?'], purpose: 'query' }]);
  });

  it('requires dataset_ids, and refuses datasets of different embedding models, naming each', async () => {
    await refused(retrieval.retrieve(owner, { question: 'q', dataset_ids: [] }), 400, /`dataset_ids` is required/);
    const other = ((await datasets.create(owner, { name: 'b', embedding_model: 'b@Builtin' })) as { id: string }).id;
    await refused(ask({ dataset_ids: [dsA, other] }), 400, /The selected datasets use different embedding models \(a: a@Builtin, b: b@Builtin\)/);
    assert.deepEqual(models.embedded, [], 'nothing was embedded');
  });

  it("another tenant's dataset cannot be searched (404), and documents must belong to the datasets", async () => {
    await refused(retrieval.retrieve(stranger, { question: 'q', dataset_ids: [dsA] }), 404, /not found/);
    await refused(ask({ document_ids: ['f'.repeat(32)] }), 404, /The datasets don't own the document\(s\) f{32}/);
  });

  it('keyword: adds the keywords the chat model extracts to the searched question; cross_languages: its translations', async () => {
    await ask({ keyword: true, cross_languages: ['German'] });
    assert.deepEqual(models.embedded[0]!.texts, ['When does the pass close?\nWann schliesst der Pass?\npass, winter']);
  });

  it('related questions are the numbered lines of the chat model’s answer; an empty question is refused', async () => {
    assert.deepEqual(await retrieval.relatedQuestions(owner, 'mountain pass'), ['When is the pass open?', 'Is the pass safe?']);
    await refused(retrieval.relatedQuestions(owner, ' '), 400, /`question` is required/);
  });

  it('related questions without a chosen chat model (or a search app naming one) are refused at once, not left to the built-in model', async () => {
    models.chosen = undefined;
    await refused(retrieval.relatedQuestions(owner, 'mountain pass'), 400, /no default chat model is set.*the built-in model is not used/);
    assert.deepEqual(models.asked, [], 'no model was asked');
    assert.deepEqual(await retrieval.relatedQuestions(owner, 'mountain pass', { chatModel: 'other@Fake' }), ['When is the pass open?', 'Is the pass safe?']);
  });

  it("Dify's external knowledge route says 'Knowledgebase not found!' for a dataset the caller may not use", async () => {
    await refused(retrieval.difyRetrieve(stranger, { knowledge_id: dsA, query: 'q', top_k: 3, score_threshold: 0 }), 404, /^Knowledgebase not found!$/);
    assert.deepEqual(await retrieval.difyRetrieve(owner, { knowledge_id: dsA, query: 'q', top_k: 3, score_threshold: 0 }), []);
  });
});
