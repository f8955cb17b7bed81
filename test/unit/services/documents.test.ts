import assert from 'node:assert/strict';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { DatasetService } from '../../../src/services/datasets.js';
import { DocumentService, type ParseControl } from '../../../src/services/documents.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import type { BlobStore } from '../../../src/blobs/types.js';
import type { ChunkIndex } from '../../../src/index/chunks/chunk-index.js';
import { openTestMetaDb, testProfiles } from '../../support/meta-store.js';

const models = { defaultEmbeddingModel: async () => 'm@Builtin', checkEmbeddingModel: async (_t: string, id: string) => id };
const noCleanup = { startDeleteDatasets: async () => {}, cancelParse: async () => {}, cancelDatasetIndex: async () => {}, waitDatasetIndex: async () => {} };

/** Files in memory. */
class MemoryBlobs implements BlobStore {
  readonly files = new Map<string, Buffer>();
  async put(key: string, bytes: Uint8Array) {
    this.files.set(key, Buffer.from(bytes));
  }
  async get(key: string) {
    return this.files.get(key);
  }
  async delete(key: string) {
    this.files.delete(key);
  }
  async deletePrefix(prefix: string) {
    for (const key of [...this.files.keys()]) if (key.startsWith(prefix)) this.files.delete(key);
  }
}

/** The two calls documents make of the chunk index, recorded. */
function recordingIndex(calls: string[]): ChunkIndex {
  return {
    deleteByDocument: async (id: string) => void calls.push(`delete ${id}`),
    renameDocument: async (id: string, name: string) => void calls.push(`rename ${id} ${name}`),
  } as unknown as ChunkIndex;
}

/** Parse starts and cancels, recorded. */
class FakeParsing implements ParseControl {
  started: { documentId: string; runSeq: number; labels: unknown }[] = [];
  cancelled: string[] = [];
  async startParse(documentId: string, _datasetId: string, runSeq: number, labels: unknown) {
    this.started.push({ documentId, runSeq, labels });
  }
  async cancelParse(documentId: string) {
    this.cancelled.push(documentId);
  }
}

async function refused(call: Promise<unknown>, code: number, message: RegExp): Promise<void> {
  await assert.rejects(call, (err: { status?: number; message: string }) => {
    assert.equal(err.status, code, err.message);
    assert.match(err.message, message);
    return true;
  });
}

const file = (name: string, text = 'some text') => ({ name, bytes: new TextEncoder().encode(text) });

for (const profile of testProfiles()) describe(`DocumentService: uploads, renames, parse runs and deletes [${profile}]`, () => {
  let db: MetaDb;
  let store: MetaStore;
  let blobs: MemoryBlobs;
  let parsing: FakeParsing;
  let indexCalls: string[];
  let documents: DocumentService;
  let datasetId: string;
  const owner = tenantPrincipal('a'.repeat(32));
  const stranger = tenantPrincipal('b'.repeat(32));

  beforeEach(async () => {
    db = await openTestMetaDb(profile);
    store = new MetaStore(db);
    blobs = new MemoryBlobs();
    parsing = new FakeParsing();
    indexCalls = [];
    const datasets = new DatasetService(store, models, noCleanup);
    documents = new DocumentService(store, datasets, recordingIndex(indexCalls), blobs, parsing);
    datasetId = ((await datasets.create(owner, { name: 'docs' })) as { id: string }).id;
  });
  afterEach(() => db.close());

  const upload = async (...names: string[]) => (await documents.upload(owner, datasetId, names.map((n) => file(n)))).docs;

  it('stores each file as an UNSTART document with its bytes; a taken name gets a (1) suffix, case-insensitively', async () => {
    const [a, b] = await upload('notes.txt', 'NOTES.txt');
    assert.equal(a!.name, 'notes.txt');
    assert.equal(b!.name, 'NOTES(1).txt');
    assert.equal(a!.run, 'UNSTART');
    const { bytes } = await documents.download(owner, datasetId, a!.id);
    assert.equal(Buffer.from(bytes).toString(), 'some text');
  });

  it('reports a file it does not support and keeps the others', async () => {
    const result = await documents.upload(owner, datasetId, [file('a.exe'), file('b.md')]);
    assert.deepEqual(result.docs.map((d) => d.name), ['b.md']);
    assert.deepEqual(result.errors, [{ name: 'a.exe', message: 'This type of file has not been supported yet: exe' }]);
    await refused(documents.upload(owner, datasetId, []), 400, /No file part/);
  });

  it("keeps a tenant's documents from strangers: 404 on listing, reading and uploading", async () => {
    const [doc] = await upload('a.txt');
    await refused(documents.upload(stranger, datasetId, [file('x.txt')]), 404, /not found/);
    await refused(documents.download(stranger, datasetId, doc!.id), 404, /not found/);
    await refused(documents.list(stranger, datasetId, { page: 1, page_size: 10, orderby: 'create_time', desc: true }), 404, /not found/);
  });

  it('renames keeping the extension, refuses a sibling’s exact name, and renames the chunks too', async () => {
    const [a] = await upload('a.txt', 'b.txt');
    await refused(documents.update(owner, datasetId, a!.id, { name: 'a.pdf' }), 400, /The extension of a file can't be changed \(a\.txt -> a\.pdf\)/);
    await refused(documents.update(owner, datasetId, a!.id, { name: 'b.txt' }), 400, /Duplicated document name in the same dataset: b\.txt/);
    await refused(documents.update(owner, datasetId, a!.id, { name: ' ' }), 400, /`name` must not be empty/);
    const renamed = await documents.update(owner, datasetId, a!.id, { name: 'B.txt' });
    assert.equal(renamed.name, 'B.txt', 'a case variant of a sibling is allowed, as in RAGFlow');
    assert.deepEqual(indexCalls, [`rename ${a!.id} B.txt`]);
  });

  it('a new chunk method removes the chunks and resets the document to UNSTART for the next run', async () => {
    const [a] = await upload('a.txt');
    await documents.parse(owner, datasetId, [a!.id]);
    const updated = await documents.update(owner, datasetId, a!.id, { chunk_method: 'qa' });
    assert.equal(updated.chunk_method, 'qa');
    assert.equal(updated.run, 'UNSTART');
    assert.deepEqual(parsing.cancelled, [a!.id], 'the running parse is stopped');
    assert.deepEqual(indexCalls, [`delete ${a!.id}`]);
  });

  it('starts a parse run once per document, labelled with the file and dataset names; a running one is reported', async () => {
    const [a] = await upload('a.txt');
    assert.deepEqual(await documents.parse(owner, datasetId, [a!.id]), { success_count: 1, errors: [] });
    assert.deepEqual(parsing.started, [{ documentId: a!.id, runSeq: 1, labels: { document_name: 'a.txt', dataset_name: 'docs' } }]);
    const again = await documents.parse(owner, datasetId, [a!.id]);
    assert.deepEqual(again, { success_count: 0, errors: [`Document ${a!.id} is already being parsed`] });
    assert.equal(parsing.started.length, 1);
  });

  it('starts nothing when any id is unknown, naming them all', async () => {
    const [a] = await upload('a.txt');
    await refused(documents.parse(owner, datasetId, [a!.id, 'f'.repeat(32)]), 404, /Documents not found: f{32}/);
    await refused(documents.parse(owner, datasetId, []), 400, /`document_ids` is required/);
    assert.deepEqual(parsing.started, []);
  });

  it('stops only running documents and reports the others', async () => {
    const [a, b] = await upload('a.txt', 'b.txt');
    await documents.parse(owner, datasetId, [a!.id]);
    const result = await documents.stop(owner, datasetId, [a!.id, b!.id]);
    assert.equal(result.success_count, 1);
    assert.deepEqual(result.errors, [`Can't stop parsing document ${b!.id}: it is UNSTART, not RUNNING`]);
    assert.deepEqual(parsing.cancelled, [a!.id]);
  });

  it('deletes documents with their chunks and files, stopping a running parse, and reports unknown ids', async () => {
    const [a, b] = await upload('a.txt', 'b.txt');
    await documents.parse(owner, datasetId, [a!.id]);
    const result = await documents.delete(owner, datasetId, [a!.id, 'f'.repeat(32)], false);
    assert.equal(result.success_count, 1);
    assert.equal(result.errors?.length, 1);
    assert.deepEqual(parsing.cancelled, [a!.id]);
    assert.deepEqual(indexCalls, [`delete ${a!.id}`]);
    assert.equal(blobs.files.size, 1, 'only b.txt is left');
    assert.deepEqual((await documents.list(owner, datasetId, { page: 1, page_size: 10, orderby: 'create_time', desc: true })).docs.map((d) => d.id), [b!.id]);
  });
});
