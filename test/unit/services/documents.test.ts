import assert from 'node:assert/strict';
import type { IngestRunRef } from '../../../src/engine/task-queues.js';
import type { MetaDb } from '../../../src/store/db.js';
import { MetaStore } from '../../../src/store/index.js';
import { DatasetService } from '../../../src/services/datasets.js';
import { DocumentService, type ParseControl } from '../../../src/services/documents.js';
import { tenantPrincipal } from '../../../src/services/access.js';
import { ServiceUnavailable } from '../../../src/errors.js';
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
  cancelledRuns: number[] = [];
  /** Runs whose workflow is gone (as after a crash, or never started): neither open nor cancelled. */
  gone = new Set<string>();
  /** Set: the next starts fail with it (Temporal unreachable). */
  startFailure: Error | undefined;
  async startParse(run: IngestRunRef, labels: unknown) {
    if (this.startFailure) throw this.startFailure;
    this.started.push({ documentId: run.id, runSeq: run.run_seq, labels });
  }
  async cancelParse(run: IngestRunRef) {
    if (!(await this.parseOpen(run))) return false;
    this.cancelled.push(run.id);
    this.cancelledRuns.push(run.run_seq);
    return true;
  }
  async parseOpen(run: IngestRunRef) {
    return this.started.some((s) => s.documentId === run.id && s.runSeq === run.run_seq) && !this.gone.has(`${run.id}/${run.run_seq}`);
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

  it('a document RUNNING without a workflow (a crash between the two writes) is stopped to CANCEL, or started anew by parse', async () => {
    const [a, b] = await upload('a.txt', 'b.txt');
    // As a kill -9 right after beginRun leaves them: RUNNING, no workflow.
    const runA = await store.documents.beginRun(a!.id, Date.now());
    await store.documents.beginRun(b!.id, Date.now());
    assert.deepEqual(await documents.stop(owner, datasetId, [a!.id]), { success_count: 1, errors: [] });
    const stopped = (await documents.get(owner, datasetId, a!.id)).doc;
    assert.equal(stopped.run, 'CANCEL');
    assert.match(stopped.progress_msg, /^Cancelled: parsing was stopped/);
    assert.equal(stopped.run_seq, runA);
    assert.deepEqual(indexCalls, [`delete ${a!.id}`], 'as the workflow would: no partial chunks');
    assert.deepEqual(parsing.cancelled, [], 'no workflow to cancel');

    assert.deepEqual(await documents.parse(owner, datasetId, [b!.id]), { success_count: 1, errors: [] });
    assert.deepEqual(parsing.started.map((r) => [r.documentId, r.runSeq]), [[b!.id, 2]], 'a new run, so a late start of run 1 is stale');
    assert.deepEqual(await documents.parse(owner, datasetId, [b!.id]), { success_count: 0, errors: [`Document ${b!.id} is already being parsed`] }, 'its workflow is open now');
    parsing.gone.add(`${b!.id}/2`);
    assert.deepEqual(await documents.parse(owner, datasetId, [b!.id]), { success_count: 1, errors: [] }, 'a workflow that closed without marking it: taken over too');
  });

  it('the orphaned-run repair parses anew only RUNNING rows unchanged for the age with no open workflow, a page at a time', async () => {
    const [orphan, open, young, idle, second] = await upload('orphan.txt', 'open.txt', 'young.txt', 'idle.txt', 'second.txt');
    const old = Date.now() - 10 * 60 * 1000;
    // As a kill -9 right after beginRun leaves them, ten minutes ago (and one just now).
    await store.documents.beginRun(orphan!.id, old);
    await store.documents.beginRun(second!.id, old + 1);
    await store.documents.beginRun(young!.id, Date.now());
    // Parsed by its workflow, which has written nothing for ten minutes (a long wait for a parser).
    await documents.parse(owner, datasetId, [open!.id]);
    await store.documents.update(open!.id, { update_time: old });
    const updatedBefore = Date.now() - 5 * 60 * 1000;

    const first = await documents.restartOrphaned(updatedBefore, 2);
    assert.deepEqual(first.restarted, [orphan!.id], 'the open one is checked and left alone');
    assert.deepEqual(first.failed, []);
    assert.ok(first.last, 'a full page: the next pass goes on after it');
    const next = await documents.restartOrphaned(updatedBefore, 2, first.last);
    assert.deepEqual(next.restarted, [second!.id]);
    assert.equal(next.last, undefined, 'the end: the next pass starts over');

    assert.deepEqual(parsing.started.map((r) => [r.documentId, r.runSeq]), [[open!.id, 1], [orphan!.id, 2], [second!.id, 2]], 'new runs, so a late start of run 1 is stale');
    const repaired = (await documents.get(owner, datasetId, orphan!.id)).doc;
    assert.equal(repaired.run, 'RUNNING');
    assert.equal(repaired.progress_msg, 'Queued for parsing');
    assert.equal((await documents.get(owner, datasetId, young!.id)).doc.run_seq, 1, 'a young row may be a request between its two writes: untouched');
    assert.equal((await documents.get(owner, datasetId, idle!.id)).doc.run, 'UNSTART');
    assert.deepEqual(await documents.restartOrphaned(updatedBefore, 2), { restarted: [], failed: [], last: undefined }, 'a restarted row is young again');
    await store.documents.updateRun(orphan!.id, 2, { run: 'DONE' });
    assert.equal(await store.documents.takeOverRun(orphan!.id, Date.now(), null, 2), undefined, 'a run that ended since it was read is not taken over');
  });

  it('a workflow that cannot start puts the document back as it was and fails the request with the 503, naming Temporal', async () => {
    const [a, b] = await upload('a.txt', 'b.txt');
    await documents.parse(owner, datasetId, [a!.id]);
    await store.documents.updateRun(a!.id, 1, { run: 'DONE', progress: 1, progress_msg: 'Done', chunk_count: 3 });
    const before = (await documents.get(owner, datasetId, a!.id)).doc;
    parsing.startFailure = new ServiceUnavailable('Could not start parsing: the workflow service (Temporal at x) cannot be reached', 5);
    await refused(documents.parse(owner, datasetId, [a!.id, b!.id]), 503, /Temporal at x\) cannot be reached/);
    const afterA = (await documents.get(owner, datasetId, a!.id)).doc;
    assert.deepEqual({ ...afterA, run_seq: 0, update_time: 0 }, { ...before, run_seq: 0, update_time: 0 }, 'DONE with its chunks, as before');
    assert.equal(afterA.run_seq, 2, 'the run number moved on: a start that happened after all is stale');
    const afterB = (await documents.get(owner, datasetId, b!.id)).doc;
    assert.equal(afterB.run, 'UNSTART');
    assert.equal(afterB.progress_msg, '');

    // One RUNNING without a workflow whose new start fails too ends FAIL with the reason, not RUNNING again.
    await store.documents.updateRun(b!.id, afterB.run_seq, { run: 'RUNNING' });
    await refused(documents.parse(owner, datasetId, [b!.id]), 503, /cannot be reached/);
    const failed = (await documents.get(owner, datasetId, b!.id)).doc;
    assert.equal(failed.run, 'FAIL');
    assert.match(failed.progress_msg, /^Failed: parsing could not start: Could not start parsing: .*cannot be reached/);

    parsing.startFailure = undefined;
    assert.deepEqual(await documents.parse(owner, datasetId, [a!.id, b!.id]), { success_count: 2, errors: [] }, 'both parse once Temporal is back');
  });

  it("ingest with delete removes a document's chunks only once its run is the request's; a start that then fails leaves it FAIL with no chunks, not DONE without them", async () => {
    const [a] = await upload('a.txt');
    await documents.parse(owner, datasetId, [a!.id]);
    await store.documents.updateRun(a!.id, 1, { run: 'DONE', progress: 1, chunk_count: 3, token_count: 30 });
    parsing.startFailure = new ServiceUnavailable('Could not start parsing: Temporal cannot be reached', 5);
    await refused(documents.ingest(owner, { docIds: [a!.id], run: '1', delete: true }), 503, /cannot be reached/);
    assert.deepEqual(indexCalls, [`delete ${a!.id}`]);
    const failed = (await documents.get(owner, datasetId, a!.id)).doc;
    assert.deepEqual([failed.run, failed.chunk_count, failed.token_count], ['FAIL', 0, 0]);
    assert.match(failed.progress_msg, /^Failed: parsing could not start: /);
    parsing.startFailure = undefined;
    await documents.ingest(owner, { docIds: [a!.id], run: '1', delete: true });
    assert.deepEqual(parsing.started.map((r) => r.runSeq), [1, 3]);
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

  const listAll = async (extra: Record<string, unknown> = {}) => documents.list(owner, datasetId, { page: 1, page_size: 30, orderby: 'name', desc: false, ...extra });

  it('files of the same name in one upload each get their own (n) suffix; the type follows the extension and the method the dataset', async () => {
    const docs = await upload('scan.PNG', 'a.txt', 'a.txt', 'A.txt', 'paper.pdf');
    assert.deepEqual(docs.map((d) => d.name), ['scan.PNG', 'a.txt', 'a(1).txt', 'A(2).txt', 'paper.pdf']);
    assert.deepEqual(docs.map((d) => d.type), ['visual', 'doc', 'doc', 'doc', 'pdf']);
    assert.ok(docs.every((d) => d.chunk_method === 'naive' && d.dataset_id === datasetId && d.chunk_count === 0 && d.progress === 0));
    assert.equal(blobs.files.size, 5);
  });

  it('refuses a file without a name, without an extension, or with a name over 255 bytes, storing nothing of it', async () => {
    const result = await documents.upload(owner, datasetId, [file(''), file('Makefile'), file(`${'é'.repeat(126)}.txt`)]);
    assert.deepEqual(result.docs, []);
    assert.deepEqual(result.errors, [
      { name: '', message: 'No file selected: the file has no name' },
      { name: 'Makefile', message: 'This type of file has not been supported yet: (no extension)' },
      { name: `${'é'.repeat(126)}.txt`, message: 'File name must be 255 bytes or less.' },
    ]);
    assert.equal(blobs.files.size, 0);
    assert.equal((await listAll()).total, 0);
  });

  it('a rename takes display_name over name, refuses more than 255 bytes, and leaves the chunks alone when the name is unchanged', async () => {
    const [a] = await upload('a.txt');
    await refused(documents.update(owner, datasetId, a!.id, { name: `${'x'.repeat(252)}.txt` }), 400, /^File name must be 255 bytes or less\.$/);
    const renamed = await documents.update(owner, datasetId, a!.id, { name: 'ignored.txt', display_name: ' shown.txt ' });
    assert.equal(renamed.name, 'shown.txt');
    await documents.update(owner, datasetId, a!.id, { name: 'shown.txt' });
    assert.deepEqual(indexCalls, [`rename ${a!.id} shown.txt`], 'renamed once');
  });

  it('meta_fields are stored as given and listed; a parser_config change of the same method merges and keeps the chunks and the run', async () => {
    const [a] = await upload('a.txt');
    await documents.parse(owner, datasetId, [a!.id]);
    const before = await documents.update(owner, datasetId, a!.id, { meta_fields: { author: 'Ann', year: 2020 } });
    assert.deepEqual(before.meta_fields, { author: 'Ann', year: 2020 });
    const updated = await documents.update(owner, datasetId, a!.id, { parser_config: { chunk_token_num: 64 } });
    assert.equal(updated.parser_config.chunk_token_num, 64);
    for (const [k, v] of Object.entries(before.parser_config as Record<string, unknown>)) if (k !== 'chunk_token_num') assert.deepEqual(updated.parser_config[k], v, `${k} kept`);
    assert.equal(updated.run, 'RUNNING', 'the run goes on');
    assert.deepEqual(indexCalls, [], 'no chunk removed');
    assert.deepEqual(parsing.cancelled, []);
    assert.deepEqual((await listAll()).docs[0]!.meta_fields, { author: 'Ann', year: 2020 });
  });

  it('a chunk-method change bumps the run number, so the next run is a new one and the old run cannot write back', async () => {
    const [a] = await upload('a.txt');
    await documents.parse(owner, datasetId, [a!.id]);
    await documents.update(owner, datasetId, a!.id, { chunk_method: 'qa' });
    assert.deepEqual(parsing.cancelledRuns, [1], 'the running run 1 was cancelled');
    await documents.parse(owner, datasetId, [a!.id]);
    assert.deepEqual(parsing.started.map((s) => s.runSeq), [1, 3]);
    assert.equal(await store.documents.updateRun(a!.id, 1, { progress: 0.5 }), false, 'run 1 writes nothing');
  });

  it('parse: a duplicate id is reported and started once; some unknown ids are a 404 naming only them, and nothing starts', async () => {
    const [a, b] = await upload('a.txt', 'b.txt');
    const unknown = 'f'.repeat(32);
    await refused(documents.parse(owner, datasetId, [a!.id, b!.id, unknown]), 404, new RegExp(`^Documents not found: ${unknown}$`));
    assert.deepEqual(parsing.started, []);
    assert.equal((await documents.get(owner, datasetId, a!.id)).doc.run, 'UNSTART', 'not marked running');
    const result = await documents.parse(owner, datasetId, [a!.id, a!.id]);
    assert.deepEqual(result, { success_count: 1, errors: [`Duplicate document ids: ${a!.id}`] });
    assert.equal(parsing.started.length, 1);
  });

  it("stop: only unknown ids is a 404; a document of another dataset is unknown here; the cancel names the document's current run", async () => {
    const [a] = await upload('a.txt');
    const otherDs = ((await new DatasetService(store, models, noCleanup).create(owner, { name: 'other' })) as { id: string }).id;
    const [elsewhere] = (await documents.upload(owner, otherDs, [file('x.txt')])).docs;
    await refused(documents.stop(owner, datasetId, ['f'.repeat(32)]), 404, /^Documents not found: f{32}$/);
    await refused(documents.stop(owner, datasetId, [elsewhere!.id]), 404, /Documents not found/);
    await refused(documents.stop(owner, datasetId, []), 400, /`document_ids` is required/);
    await documents.parse(owner, datasetId, [a!.id]);
    const result = await documents.stop(owner, datasetId, [a!.id, 'e'.repeat(32)]);
    assert.deepEqual(result, { success_count: 1, errors: [`Documents not found: ${'e'.repeat(32)}`] });
    assert.deepEqual(parsing.cancelledRuns, [1]);
  });

  it("delete_all removes every document of this dataset only; only unknown ids is a 404 and removes nothing", async () => {
    await upload('a.txt', 'b.txt');
    const otherDs = ((await new DatasetService(store, models, noCleanup).create(owner, { name: 'other' })) as { id: string }).id;
    const [kept] = (await documents.upload(owner, otherDs, [file('x.txt')])).docs;
    await refused(documents.delete(owner, datasetId, [kept!.id], false), 404, new RegExp(`^Document ${kept!.id} does not belong to dataset ${datasetId} or was not found$`));
    assert.equal((await listAll()).total, 2);
    const keptFile = (await documents.get(owner, otherDs, kept!.id)).doc.location;
    const result = await documents.delete(owner, datasetId, null, true);
    assert.deepEqual(result, { deleted: 2, success_count: 2, errors: [] });
    assert.equal((await listAll()).total, 0);
    assert.deepEqual([...blobs.files.keys()], [keptFile], "only the other dataset's file is left");
    assert.deepEqual(await documents.delete(owner, datasetId, [], false), { deleted: 0, success_count: 0, errors: [] }, 'no ids, no delete_all: nothing');
  });

  it('a document whose file is gone from storage is a 404 on download; by id alone the dataset rules apply', async () => {
    const [a] = await upload('a.txt');
    assert.equal((await documents.downloadById(owner, a!.id)).name, 'a.txt');
    await refused(documents.downloadById(stranger, a!.id), 404, /not found/);
    await refused(documents.downloadById(owner, 'f'.repeat(32)), 404, /^Document 'f{32}' not found$/);
    blobs.files.clear();
    await refused(documents.download(owner, datasetId, a!.id), 404, /^The file of document a\.txt is missing from storage$/);
  });

  it('lists by state and by keyword; an unknown id filter is a 404', async () => {
    const [a] = await upload('river.txt', 'lake.txt', 'River-2.txt');
    await documents.parse(owner, datasetId, [a!.id]);
    assert.deepEqual((await listAll({ run: ['RUNNING'] })).docs.map((d) => d.name), ['river.txt']);
    assert.deepEqual((await listAll({ keywords: 'river' })).docs.map((d) => d.name).sort(), ['River-2.txt', 'river.txt']);
    assert.equal((await listAll({ page_size: 2 })).total, 3);
    await refused(listAll({ id: 'f'.repeat(32) }), 404, new RegExp(`^Document 'f{32}' not found in dataset ${datasetId}$`));
  });
});
