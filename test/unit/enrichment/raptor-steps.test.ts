import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { raptorActivities, type RaptorRef, type RaptorRuntime } from '../../../activities/raptor.js';
import type { ActivityDeps } from '../../../activities/deps.js';
import { FsBlobStore } from '../../../src/blobs/fs-blob-store.js';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { NO_PROGRESS, type TaskProgress } from '../../../src/store/enrichment.js';
import type { ChatMessage, ChatModel, EmbeddingModel } from '../../../src/models/types.js';
import type { ModelClients } from '../../../src/services/model-clients.js';
import type { SqliteChunkIndex } from '../../../src/index/chunks/sqlite-index.js';
import type { IndexedChunk } from '../../../src/index/chunks/chunk-index.js';
import { RaptorChunks } from '../../../src/enrichment/raptor/summary-chunks.js';
import { newId } from '../../../src/ids.js';
import { chunk, memoryIndex } from '../index/helpers.js';
import { openTestMetaDb } from '../../support/meta-store.js';

/** The cluster's texts in a prompt of the default template. */
const clusterOf = (prompt: string) => prompt.slice(prompt.indexOf('Paragraphs:\n') + 'Paragraphs:\n'.length);

/** A chat model answering "Summary: <the cluster's texts, one line>" (or what `answer` says), counting calls. */
function fakeChat(answer: (prompt: string) => string = (p) => `Summary: ${clusterOf(p).replaceAll('\n', ' | ')}`) {
  const asked: string[] = [];
  let failAfter = Infinity;
  const model = {
    id: 'fake-chat@Test',
    async complete(messages: ChatMessage[]) {
      const prompt = messages.at(-1)!.content;
      if (asked.length >= failAfter) throw new Error('worker killed');
      asked.push(prompt);
      return answer(prompt);
    },
    stream() {
      throw new Error('not used');
    },
  } as unknown as ChatModel;
  return { model, asked, failAfter: (n: number) => (failAfter = n) };
}

/** Hashed bag of words, normalised: texts sharing words are near. */
const embedder: EmbeddingModel = {
  id: 'fake-embed@Test',
  async embed(texts) {
    return texts.map((t) => {
      const v = new Array<number>(16).fill(0);
      for (const w of t.toLowerCase().split(/\W+/).filter(Boolean)) v[[...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 16, 7)]! += 1;
      const norm = Math.hypot(...v) || 1;
      return v.map((x) => x / norm);
    });
  },
};

const TOPICS = ['granite cairn trail', 'river salmon spawning', 'volcanic basalt columns'];

/** `n` chunks of a document cycling through the topics, with vectors near their topic's direction. */
function chunks(datasetId: string, documentId: string, n: number): IndexedChunk[] {
  return Array.from({ length: n }, (_, i) => {
    const topic = i % TOPICS.length;
    const vector = new Array<number>(16).fill(0.01);
    vector[topic * 4] = 1;
    vector[topic * 4 + 1] = 0.1 * ((i * 7) % 5);
    const norm = Math.hypot(...vector);
    return chunk({
      id: `${documentId.slice(0, 8)}-${i}`,
      dataset_id: datasetId,
      document_id: documentId,
      document_name: `${documentId.slice(0, 4)}.txt`,
      content: `${TOPICS[topic]} note ${i} of ${documentId.slice(0, 4)}`,
      vector: vector.map((x) => x / norm),
    });
  });
}

const quietRuntime: RaptorRuntime = {
  heartbeat() {},
  signal: () => undefined,
  jobs: () => {
    throw new Error('not used');
  },
  warn() {},
};

describe('RAPTOR steps (fake chat model, real store, index and files)', () => {
  let db: MetaDb;
  let store: MetaStore;
  let index: SqliteChunkIndex;
  let dir: string;
  let blobs: FsBlobStore;
  let datasetId: string;
  let docs: string[];
  let chat: ReturnType<typeof fakeChat>;

  async function setRaptor(raptor: Record<string, unknown>) {
    await store.datasets.update(datasetId, { parser_config: JSON.stringify({ raptor: { use_raptor: true, ...raptor } }) });
  }

  function activities(model: ChatModel) {
    const models = {
      providers: {
        resolve: async () => ({ id: model.id, max_tokens: 8192 }),
        resolveDefault: async () => ({ id: model.id, max_tokens: 8192 }),
      },
      chat: async () => model,
      embedding: async () => embedder,
    } as unknown as ModelClients;
    return raptorActivities({ store, index, blobs, models } as unknown as ActivityDeps, quietRuntime);
  }

  /** The raptorIndex workflow's sequence of steps, run directly. */
  async function runTask(model: ChatModel = chat.model): Promise<TaskProgress> {
    const acts = activities(model);
    const ref: RaptorRef = { datasetId, tenantId: 'tenant', taskId: newId(), pass: 1 };
    const progress: TaskProgress = { ...NO_PROGRESS };
    await acts.raptorBegin(ref);
    await acts.raptorPrepare({ ...ref, progress });
    let level = 0;
    let batchesBelow = 0;
    for (;;) {
      const plan = await acts.raptorCluster({ ...ref, level, batchesBelow, progress });
      if (plan.clusters === 0) break;
      progress.total += plan.clusters;
      for (let batch = 0; batch < plan.batches; batch++) {
        const counts = await acts.raptorSummarise({ ...ref, level, batch, batchSize: plan.batchSize, clusters: plan.clusters, progress });
        progress.done += counts.done;
        progress.model_calls += counts.model_calls;
        progress.cached_calls += counts.cached_calls;
      }
      batchesBelow = plan.batches;
      level++;
    }
    await acts.raptorWrite({ ...ref, levels: level, progress });
    await acts.raptorFinish({ ...ref, status: 'done' });
    await acts.raptorRemoveWork(ref);
    return progress;
  }

  async function summaries(): Promise<IndexedChunk[]> {
    const ids = await new RaptorChunks(index, blobs).ids(datasetId);
    return index.getMany(ids);
  }

  beforeEach(async () => {
    db = await openTestMetaDb('embedded');
    store = new MetaStore(db);
    index = memoryIndex().index;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'raptor-steps-'));
    blobs = new FsBlobStore(dir);
    datasetId = newId();
    const now = Date.now();
    await store.datasets.insert({
      id: datasetId, tenant_id: 'tenant', created_by: 'u', name: 'Hikes', name_key: 'hikes', avatar: null, description: null, embedding_model: 'fake-embed@Test',
      permission: 'me', chunk_method: 'naive', parser_config: JSON.stringify({ raptor: { use_raptor: true } }), pagerank: 0, language: 'English', status: 'active', create_time: now, update_time: now,
    });
    docs = [newId(), newId()];
    for (const [i, id] of docs.entries()) {
      await store.documents.insert({
        id, dataset_id: datasetId, tenant_id: 'tenant', name: `${id.slice(0, 4)}.txt`, location: '', size: 1, type: 'doc', suffix: 'txt', chunk_method: 'naive',
        parser_config: '{}', source_type: 'local', created_by: 'u', run: 'DONE', progress: 1, progress_msg: '', process_begin_at: null, process_duration: 0,
        chunk_count: 12, token_count: 100, meta_fields: '{}', run_seq: 1, create_time: now + i, update_time: now,
      });
      await index.upsert(chunks(datasetId, id, 12));
    }
    chat = fakeChat();
  });

  afterEach(async () => {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('builds one tree per document (scope file): summaries indexed, marked with their level, one root each', async () => {
    const progress = await runTask();
    const found = await summaries();
    assert.ok(found.length >= 4, `${found.length} summaries`);
    assert.equal(found.length, chat.asked.length, 'one summary per model call');
    assert.equal(progress.model_calls, chat.asked.length);
    assert.equal(progress.done, progress.total);
    for (const doc of docs) {
      const mine = found.filter((c) => c.document_id === doc);
      const top = Math.max(...mine.map((c) => c.raptor_layer!));
      assert.equal(mine.filter((c) => c.raptor_layer === top).length, 1, 'one root per document');
      assert.ok(mine.every((c) => c.document_name === `${doc.slice(0, 4)}.txt` && c.vector.length === 16 && c.content.startsWith('Summary:')));
    }
    const level1 = found.filter((c) => c.raptor_layer === 1);
    assert.ok(level1.length < 24 && level1.length >= 2, 'clusters gather several chunks');
    const task = await store.enrichment.task(datasetId, 'raptor');
    assert.equal(task?.status, 'done');
    assert.match(task!.progress.stage, /^done: \d+ summaries in \d+ levels?$/);
    assert.equal(await index.countByDocument(docs[0]!), 12 + found.filter((c) => c.document_id === docs[0]).length, 'ordinary chunks untouched');
  });

  it('a second run over the same chunks asks the model nothing and replaces the summaries without copies', async () => {
    await runTask();
    const first = (await summaries()).map((c) => c.id).sort();
    const calls = chat.asked.length;
    const again = await runTask();
    assert.equal(chat.asked.length, calls, 'no new model call');
    assert.equal(again.model_calls, 0);
    assert.equal(again.cached_calls, calls);
    assert.deepEqual((await summaries()).map((c) => c.id).sort(), first, 'the same summaries, once');
    const perDocument = await Promise.all(docs.map((d) => index.countByDocument(d)));
    assert.equal(perDocument.reduce((a, b) => a + b, 0), 24 + first.length);
  });

  it('a batch that dies halfway is redone without asking again what was answered', async () => {
    await setRaptor({ max_cluster: 16, clustering_threshold: 1, clustering_ratio: 1 });
    chat.failAfter(3);
    await assert.rejects(runTask(), /worker killed/);
    assert.equal(chat.asked.length, 3);
    const answered = new Set(chat.asked);
    chat.failAfter(Infinity);
    await runTask();
    const repeated = chat.asked.slice(3).filter((p) => answered.has(p));
    assert.deepEqual(repeated, [], 'answered calls were not made again');
    assert.equal(new Set(chat.asked).size, chat.asked.length);
  });

  it('scope dataset: one tree over all documents, its summaries belong to the dataset (its id and name)', async () => {
    await setRaptor({ scope: 'dataset' });
    await runTask();
    const found = await summaries();
    assert.ok(found.length > 0);
    assert.ok(found.every((c) => c.document_id === datasetId && c.document_name === 'Hikes'));
    const top = Math.max(...found.map((c) => c.raptor_layer!));
    assert.equal(found.filter((c) => c.raptor_layer === top).length, 1, 'one root');
  });

  it('auto_disable_for_structured_data leaves spreadsheets out of the trees; without it they are summarised too', async () => {
    const sheet = newId();
    const now = Date.now();
    await store.documents.insert({
      id: sheet, dataset_id: datasetId, tenant_id: 'tenant', name: 'prices.xlsx', location: '', size: 1, type: 'doc', suffix: 'xlsx', chunk_method: 'naive',
      parser_config: '{}', source_type: 'local', created_by: 'u', run: 'DONE', progress: 1, progress_msg: '', process_begin_at: null, process_duration: 0,
      chunk_count: 12, token_count: 100, meta_fields: '{}', run_seq: 1, create_time: now + 10, update_time: now,
    });
    await index.upsert(chunks(datasetId, sheet, 12));
    await setRaptor({ auto_disable_for_structured_data: true });
    await runTask();
    const skipped = new Set((await summaries()).map((c) => c.document_id));
    assert.ok(skipped.has(docs[0]!) && !skipped.has(sheet), 'prose summarised, the spreadsheet not');
    await setRaptor({ auto_disable_for_structured_data: false });
    await runTask();
    assert.ok(new Set((await summaries()).map((c) => c.document_id)).has(sheet));
  });

  it('max_cluster bounds the clusters of each tree level', async () => {
    await setRaptor({ max_cluster: 2 });
    await runTask();
    const level1 = (await summaries()).filter((c) => c.raptor_layer === 1);
    for (const doc of docs) assert.ok(level1.filter((c) => c.document_id === doc).length <= 2);
  });

  it('an empty answer makes no summary; the tree goes on with the others', async () => {
    let n = 0;
    const blankFirst = fakeChat((p) => (n++ === 0 ? '   ' : `Summary: ${p.length}`));
    await runTask(blankFirst.model);
    const found = await summaries();
    assert.equal(found.length, blankFirst.asked.length - 1);
    assert.ok(found.every((c) => c.content.trim() !== ''));
  });

  it('removing deletes every summary (both scopes) and leaves the chunks', async () => {
    await runTask();
    await setRaptor({ scope: 'dataset' });
    await runTask();
    const raptor = new RaptorChunks(index, blobs);
    await raptor.remove(datasetId);
    assert.deepEqual(await summaries(), []);
    assert.equal(await index.countByDocument(datasetId), 0);
    for (const doc of docs) assert.equal(await index.countByDocument(doc), 12);
  });

  it('reports progress as it goes: the level, summaries done of those planned, calls', async () => {
    const seen: TaskProgress[] = [];
    const report = store.enrichment.report.bind(store.enrichment);
    store.enrichment.report = async (d, t, id, p) => {
      seen.push(p);
      return report(d, t, id, p);
    };
    await runTask();
    const stages = seen.map((p) => p.stage);
    assert.ok(stages.includes('collecting chunks'));
    assert.ok(stages.some((s) => /^level 1: clustering 24 chunks$/.test(s)), stages.join(' | '));
    assert.ok(stages.some((s) => /^level 1: summarising \d+\/\d+$/.test(s)));
    assert.ok(stages.some((s) => /^level 2: /.test(s)));
    const last = seen.filter((p) => p.stage.startsWith('level')).at(-1)!;
    assert.ok(last.model_calls > 0 && last.done <= last.total);
  });
});
