import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { harness } from './harness.js';
import { startCairn, type Cairn } from '../../src/server.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { Api, newUser, eventually } from './client.js';
import { getDoc, longText, upload, waitForRun } from './documents-helpers.js';
import { makeDocx, makePdf } from '../fixtures/generate.js';
import { documentBlobKey } from '../../src/services/blob-keys.js';
import { startFakeOpenAI } from '../fakes/index.js';
import { addModelServer, FACTORY } from './chat-helpers.js';

describe('documents over HTTP', function () {
  this.timeout(180_000);
  let api: Api;
  let datasetId: string;

  before(async () => {
    api = (await newUser('docs')).api;
    datasetId = (await api.post('/datasets', { name: 'docs' })).body.data.id;
  });

  describe('upload', () => {
    it('stores each file as an UNSTART document with its size and the dataset chunk method', async () => {
      const pdf = await makePdf({ pages: 2, paragraphsPerPage: 2 });
      const res = await upload(api, datasetId, [
        { name: 'report.pdf', bytes: pdf },
        { name: 'notes.txt', bytes: Buffer.from('hello cairn') },
      ]);
      assert.equal(res.status, 200);
      const [a, b] = res.body.data;
      assert.equal(a.name, 'report.pdf');
      assert.equal(a.size, pdf.byteLength);
      assert.equal(a.run, 'UNSTART');
      assert.equal(a.chunk_method, 'naive');
      assert.equal(a.parser_config.chunk_token_num, 128, 'document-level naive default');
      assert.equal(a.source_type, 'local');
      assert.equal(a.progress, 0);
      assert.equal(b.name, 'notes.txt');
    });

    it('keeps the good files of a batch and reports each failed one with its reason', async () => {
      const res = await upload(api, datasetId, [
        { name: 'good.md', bytes: Buffer.from('# Title\n\nbody') },
        { name: 'bad.xyz', bytes: Buffer.from('???') },
        { name: 'empty.txt', bytes: new Uint8Array() },
      ]);
      assert.equal(res.status, 200);
      // A 0-byte file is stored, as in RAGFlow (issue 15 item 6); only the unsupported one fails.
      assert.deepEqual(res.body.data.map((d: any) => d.name), ['good.md', 'empty.txt']);
      assert.deepEqual(res.body.errors.map((e: any) => e.name), ['bad.xyz']);
      assert.match(res.body.errors[0].message, /not been supported/);
    });

    it('answers 400 when every file fails, and stores nothing', async () => {
      const before = (await api.get(`/datasets/${datasetId}/documents`)).body.data.total;
      const res = await upload(api, datasetId, [{ name: 'bad.xyz', bytes: Buffer.from('x') }]);
      assert.equal(res.status, 400);
      assert.match(res.body.message, /bad\.xyz/);
      assert.equal((await api.get(`/datasets/${datasetId}/documents`)).body.data.total, before);
    });

    it('suffixes a duplicate name', async () => {
      const res = await upload(api, datasetId, [{ name: 'report.pdf', bytes: await makePdf({ pages: 1, paragraphsPerPage: 1 }) }]);
      assert.equal(res.body.data[0].name, 'report(1).pdf');
    });

    it('answers 400 to a request without multipart files', async () => {
      const res = await api.post(`/datasets/${datasetId}/documents`, { file: 'x' });
      assert.equal(res.status, 400);
    });
  });

  describe('list', () => {
    let ds: string;
    before(async () => {
      ds = (await api.post('/datasets', { name: 'listing' })).body.data.id;
      for (const name of ['alpha.txt', 'beta.txt', 'gamma.md']) {
        await upload(api, ds, [{ name, bytes: Buffer.from(`content of ${name}`) }]);
        await new Promise((r) => setTimeout(r, 5));
      }
    });

    it('matches keywords on names, pages, and orders', async () => {
      const kw = await api.get(`/datasets/${ds}/documents`, { keywords: 'ALPHA' });
      assert.deepEqual(kw.body.data.docs.map((d: any) => d.name), ['alpha.txt']);
      const paged = await api.get(`/datasets/${ds}/documents`, { page: 2, page_size: 2, order_by: 'name', desc: false });
      assert.equal(paged.body.data.total, 3);
      assert.deepEqual(paged.body.data.docs.map((d: any) => d.name), ['gamma.md']);
    });

    it('filters by creation time in Unix seconds, 0 meaning no filter', async () => {
      const now = Math.floor(Date.now() / 1000);
      const none = await api.get(`/datasets/${ds}/documents`, { create_time_from: now + 3600 });
      assert.equal(none.body.data.total, 0);
      const all = await api.get(`/datasets/${ds}/documents`, { create_time_from: 0, create_time_to: 0 });
      assert.equal(all.body.data.total, 3);
      const until = await api.get(`/datasets/${ds}/documents`, { create_time_to: now + 3600 });
      assert.equal(until.body.data.total, 3);
    });
  });

  describe('download', () => {
    it('returns the original bytes with the filename and content type', async () => {
      const docx = await makeDocx();
      const doc = (await upload(api, datasetId, [{ name: 'letter.docx', bytes: docx }])).body.data[0];
      const res = await fetch(`${api.url}/api/v1/datasets/${datasetId}/documents/${doc.id}`, { headers: { Authorization: `Bearer ${api.key}` } });
      assert.equal(res.status, 200);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(docx), 'byte-exact');
      assert.match(res.headers.get('content-type')!, /wordprocessingml/);
      assert.match(res.headers.get('content-disposition')!, /letter\.docx/);
    });

    it('answers 404 when the file is missing from storage', async () => {
      const doc = (await upload(api, datasetId, [{ name: 'gone.txt', bytes: Buffer.from('soon gone') }])).body.data[0];
      await (await storage()).blobs.delete(documentBlobKey(datasetId, doc.id));
      const res = await api.get(`/datasets/${datasetId}/documents/${doc.id}`);
      assert.equal(res.status, 404);
      assert.match(res.body.message, /missing from storage/);
    });
  });

  describe('parsing', () => {
    it('parses a document to DONE with chunks, tokens, progress and timings; dataset counts follow', async () => {
      const ds = (await api.post('/datasets', { name: 'parse-ok' })).body.data.id;
      const doc = (await upload(api, ds, [{ name: 'guide.pdf', bytes: await makePdf({ pages: 3, paragraphsPerPage: 3 }) }])).body.data[0];
      const start = await api.post(`/datasets/${ds}/chunks`, { document_ids: [doc.id] });
      assert.equal(start.status, 200);
      const done = await waitForRun(api, ds, doc.id);
      assert.equal(done.run, 'DONE', done.progress_msg);
      assert.equal(done.progress, 1);
      assert.ok(done.chunk_count > 0);
      assert.ok(done.token_count > 0);
      assert.ok(done.process_duration > 0);
      assert.ok(done.process_begin_at);
      assert.match(done.progress_msg, /^Task done: \d+ chunks?, \d+ tokens? in [\d.]+ s$/, "RAGFlow's words first, then the figures");
      const list = await api.get('/datasets', { id: ds, include_parsing_status: true });
      assert.equal(list.body.data[0].done_count, 1);
      assert.equal(list.body.data[0].chunk_count, done.chunk_count);
    });

    it("a parse run's workflow carries the file's and the dataset's names (and the dataset id) in its memo, for operators in the Temporal UI", async () => {
      const ds = (await api.post('/datasets', { name: 'memo-names' })).body.data.id;
      const doc = (await upload(api, ds, [{ name: 'Trail notes.txt', bytes: Buffer.from('Cairns mark the trail.') }])).body.data[0];
      assert.equal((await api.post(`/datasets/${ds}/chunks`, { document_ids: [doc.id] })).status, 200);
      await waitForRun(api, ds, doc.id);
      const connection = await Connection.connect({ address: (await harness()).temporal.address });
      try {
        const described = await new Client({ connection }).workflow.getHandle(`ingest-${ds}-${doc.id}-1-chunk-method`).describe();
        assert.deepEqual(described.memo, { document_name: 'Trail notes.txt', dataset_name: 'memo-names', dataset_id: ds });
      } finally {
        await connection.close();
      }
    });

    it('does not start a second run for a running document', async () => {
      const ds = (await api.post('/datasets', { name: 'parse-twice' })).body.data.id;
      const doc = (await upload(api, ds, [{ name: 'long.txt', bytes: longText(200) }])).body.data[0];
      assert.equal((await api.post(`/datasets/${ds}/documents/parse`, { document_ids: [doc.id] })).status, 200);
      const again = await api.post(`/datasets/${ds}/documents/parse`, { document_ids: [doc.id] });
      assert.equal(again.status, 400);
      assert.match(again.body.message, /already being parsed/);
      const done = await waitForRun(api, ds, doc.id);
      assert.equal(done.run, 'DONE');
    });

    it('stops a running parse: CANCEL, partial chunks removed', async () => {
      const ds = (await api.post('/datasets', { name: 'parse-stop' })).body.data.id;
      const doc = (await upload(api, ds, [{ name: 'long.txt', bytes: longText(4000) }])).body.data[0];
      await api.post(`/datasets/${ds}/chunks`, { document_ids: [doc.id] });
      await eventually(async () => (await getDoc(api, ds, doc.id)).progress > 0.45, 60_000, 100);
      const stopped = await api.delete(`/datasets/${ds}/chunks`, { document_ids: [doc.id] });
      assert.equal(stopped.status, 200);
      const t0 = Date.now();
      const end = await waitForRun(api, ds, doc.id, ['CANCEL', 'DONE', 'FAIL'], 30_000);
      assert.equal(end.run, 'CANCEL');
      assert.ok(Date.now() - t0 < 10_000, 'the cancel is prompt');
      assert.equal(end.chunk_count, 0);
      assert.equal(await indexedChunks(doc.id), 0);
    });

    it('a stopped parse stops embedding at the batch in hand and writes nothing more to the document', async () => {
      const fake = await startFakeOpenAI({ embedDelayMs: 300 });
      try {
        const { api: user } = await newUser('stop-embed');
        await addModelServer(user, fake.baseUrl, { embedding: 'fake-embed', setDefault: false });
        const ds = (await user.post('/datasets', { name: 'stop-embed', embedding_model: `fake-embed@fake@${FACTORY}` })).body.data.id;
        const doc = (await upload(user, ds, [{ name: 'long.txt', bytes: longText(4000) }])).body.data[0];
        const embeddingRequests = () => fake.requests.filter((r) => r.path === '/v1/embeddings').length;
        await user.post(`/datasets/${ds}/chunks`, { document_ids: [doc.id] });
        await eventually(async () => embeddingRequests() >= 2, 60_000, 50);
        assert.equal((await user.delete(`/datasets/${ds}/chunks`, { document_ids: [doc.id] })).status, 200);
        const stopped = await waitForRun(user, ds, doc.id, ['CANCEL', 'DONE', 'FAIL'], 30_000);
        assert.equal(stopped.run, 'CANCEL');
        const sentByThen = embeddingRequests();
        await sleep(3000); // ten batches' time at the fake's pace
        // The embedding step learns of the stop when it writes its progress after the batch in hand; the one
        // request it keeps in flight beside that batch may still arrive.
        assert.ok(embeddingRequests() <= sentByThen + 1, `embedding went on after the stop: ${embeddingRequests() - sentByThen} requests`);
        const later = await getDoc(user, ds, doc.id);
        assert.deepEqual([later.run, later.progress, later.progress_msg], [stopped.run, stopped.progress, stopped.progress_msg]);
      } finally {
        await fake.close();
      }
    });

    it('a document left RUNNING without a workflow (Cairn killed between marking it and starting it) can be stopped to CANCEL and parsed again to DONE', async () => {
      const { store } = await storage();
      const ds = (await api.post('/datasets', { name: 'parse-orphan' })).body.data.id;
      const docs = (await upload(api, ds, [
        { name: 'stopped.txt', bytes: Buffer.from('Cairns mark the trail across the moor.') },
        { name: 'reparsed.txt', bytes: Buffer.from('Hikers add a stone to each cairn they pass.') },
      ])).body.data;
      // What a kill -9 right after the first write leaves: RUNNING, and no workflow was ever started.
      for (const d of docs) assert.ok(await store.documents.beginRun(d.id, Date.now()));
      const [stopped, reparsed] = docs.map((d: any) => d.id);

      const stop = await api.post(`/datasets/${ds}/documents/stop`, { document_ids: [stopped] });
      assert.equal(stop.status, 200, JSON.stringify(stop.body));
      const cancelled = await getDoc(api, ds, stopped);
      assert.equal(cancelled.run, 'CANCEL', 'marked at once: no workflow would have');
      assert.match(cancelled.progress_msg, /^Cancelled: parsing was stopped/);
      assert.equal((await api.post(`/datasets/${ds}/chunks`, { document_ids: [stopped] })).status, 200);
      assert.equal((await waitForRun(api, ds, stopped)).run, 'DONE');

      const parse = await api.post(`/datasets/${ds}/chunks`, { document_ids: [reparsed] });
      assert.equal(parse.status, 200, JSON.stringify(parse.body));
      const done = await waitForRun(api, ds, reparsed);
      assert.equal(done.run, 'DONE', done.progress_msg);
      assert.equal(await indexedChunks(reparsed), done.chunk_count);
      assert.ok(done.chunk_count > 0);
    });

    it('a document left RUNNING without a workflow ends DONE with no user action once unchanged for CAIRN_ORPHANED_RUN_AGE_SEC', async () => {
      const h = await harness();
      const { store } = await storage();
      const ds = (await api.post('/datasets', { name: 'parse-orphan-repair' })).body.data.id;
      const [doc] = (await upload(api, ds, [{ name: 'forgotten.txt', bytes: Buffer.from('A cairn left alone still marks the way.') }])).body.data;
      // What a kill -9 right after the first write left, seconds ago: RUNNING, no workflow ever started. Older
      // than the replica's age, younger than the default 300 s of the shared Cairn (which leaves it alone).
      assert.ok(await store.documents.beginRun(doc.id, Date.now() - 5_000));
      const replicaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-orphan-repair-'));
      // An API process of the shared installation with a short age: its repair passes run every second.
      const replica = await startCairn({ ...h.config, dataDir: replicaDir, port: 0, embeddedWorker: false, orphanedRunAgeSec: 2 }, { log: pino({ level: 'silent' }) });
      try {
        const done = await waitForRun(api, ds, doc.id, ['DONE', 'FAIL', 'CANCEL'], 60_000);
        assert.equal(done.run, 'DONE', done.progress_msg);
        assert.ok(done.chunk_count > 0);
        assert.equal(await indexedChunks(doc.id), done.chunk_count);
      } finally {
        await replica.stop();
        fs.rmSync(replicaDir, { recursive: true, force: true });
      }
    });

    describe('while Temporal cannot be reached', () => {
      let proxy: TcpProxy;
      let replica: Cairn;
      let replicaDir: string;

      before(async () => {
        const h = await harness();
        proxy = await startTcpProxy(h.temporal.address);
        replicaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-no-temporal-'));
        // An API process of the shared installation (its database, files, worker) reaching Temporal through the proxy.
        replica = await startCairn({ ...h.config, dataDir: replicaDir, port: 0, temporalAddress: proxy.address, embeddedWorker: false }, { log: pino({ level: 'silent' }) });
      });
      after(async () => {
        await replica?.stop();
        await proxy?.close();
        if (replicaDir) fs.rmSync(replicaDir, { recursive: true, force: true });
      });

      it('a parse answers 503 with Retry-After naming Temporal, leaves the documents as they were, and they parse once it is back', async () => {
        const ds = (await api.post('/datasets', { name: 'parse-no-temporal' })).body.data.id;
        const docs = (await upload(api, ds, [
          { name: 'new.txt', bytes: Buffer.from('A cairn is a pile of stones.') },
          { name: 'parsed.txt', bytes: Buffer.from('Cairns guide walkers in fog.') },
        ])).body.data;
        const [fresh, parsed] = docs.map((d: any) => d.id);
        await api.post(`/datasets/${ds}/chunks`, { document_ids: [parsed] });
        const before = await waitForRun(api, ds, parsed);
        assert.equal(before.run, 'DONE');
        const viaReplica = new Api(replica.url, api.key);

        await proxy.down();
        const res = await viaReplica.post(`/datasets/${ds}/chunks`, { document_ids: [fresh, parsed] });
        assert.equal(res.status, 503, JSON.stringify(res.body));
        assert.equal(res.body.code, 503);
        assert.match(res.body.message, /^Could not start parsing: the workflow service \(Temporal at 127\.0\.0\.1:\d+\) cannot be reached/);
        assert.ok(Number(res.headers.get('retry-after')) > 0, `Retry-After ${res.headers.get('retry-after')}`);
        const stop = await viaReplica.post(`/datasets/${ds}/documents/stop`, { document_ids: [fresh] });
        assert.equal(stop.status, 400, 'not RUNNING: nothing to stop');
        const afterFresh = await getDoc(api, ds, fresh);
        assert.deepEqual([afterFresh.run, afterFresh.progress], ['UNSTART', 0]);
        const afterParsed = await getDoc(api, ds, parsed);
        assert.deepEqual([afterParsed.run, afterParsed.chunk_count, afterParsed.progress_msg], [before.run, before.chunk_count, before.progress_msg], 'the parsed one keeps its chunks');
        assert.equal(await indexedChunks(parsed), before.chunk_count);

        await proxy.up();
        const again = await api.post(`/datasets/${ds}/chunks`, { document_ids: [fresh, parsed] });
        assert.equal(again.status, 200, JSON.stringify(again.body));
        for (const id of [fresh, parsed]) assert.equal((await waitForRun(api, ds, id)).run, 'DONE');
      });
    });

    it('refuses to stop a document that is not running', async () => {
      const ds = (await api.post('/datasets', { name: 'stop-idle' })).body.data.id;
      const doc = (await upload(api, ds, [{ name: 'a.txt', bytes: Buffer.from('idle') }])).body.data[0];
      const res = await api.post(`/datasets/${ds}/documents/stop`, { document_ids: [doc.id] });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /not RUNNING/);
    });

    it('recovers when the worker is killed mid-parse: DONE, no duplicate chunks', async () => {
      const h = await harness();
      // The lighter built-in embedder (6 layers to bge's 12) keeps 100+ chunks quick: the recovery is what is tested.
      const ds = (await api.post('/datasets', { name: 'parse-kill', embedding_model: 'sentence-transformers/all-MiniLM-L6-v2@Builtin' })).body.data.id;
      const doc = (await upload(api, ds, [{ name: 'long.txt', bytes: longText(1200) }])).body.data[0];
      await api.post(`/datasets/${ds}/chunks`, { document_ids: [doc.id] });
      await eventually(async () => (await getDoc(api, ds, doc.id)).progress > 0.5, 60_000, 100);
      await h.killWorker();
      const done = await waitForRun(api, ds, doc.id, ['DONE', 'FAIL', 'CANCEL'], 150_000);
      assert.equal(done.run, 'DONE', done.progress_msg);
      assert.equal(await indexedChunks(doc.id), done.chunk_count);
      assert.ok(done.chunk_count >= 100, `${done.chunk_count} chunks`);
    });

    it('re-parsing a DONE document replaces its chunks', async () => {
      const ds = (await api.post('/datasets', { name: 'reparse' })).body.data.id;
      const doc = (await upload(api, ds, [{ name: 'r.md', bytes: Buffer.from('# Cairns\n\nStacks of stones mark trails.\n\n## Use\n\nHikers follow them.') }])).body.data[0];
      await api.post(`/datasets/${ds}/chunks`, { document_ids: [doc.id] });
      const first = await waitForRun(api, ds, doc.id);
      assert.equal(first.run, 'DONE');
      const firstIds = await indexedChunkIds(doc.id);
      await api.post(`/datasets/${ds}/chunks`, { document_ids: [doc.id] });
      const second = await waitForRun(api, ds, doc.id);
      assert.equal(second.chunk_count, first.chunk_count);
      const secondIds = await indexedChunkIds(doc.id);
      assert.equal(secondIds.length, first.chunk_count);
      assert.ok(secondIds.every((id) => !firstIds.includes(id)), 'old chunks are gone');
    });

    it('fails a corrupt file with the reason in progress_msg and keeps the others', async () => {
      const ds = (await api.post('/datasets', { name: 'parse-fail' })).body.data.id;
      const docs = (await upload(api, ds, [
        { name: 'broken.pdf', bytes: Buffer.from('%PDF-1.7 this is not really a pdf') },
        { name: 'fine.txt', bytes: Buffer.from('a perfectly fine file') },
      ])).body.data;
      await api.post(`/datasets/${ds}/chunks`, { document_ids: docs.map((d: any) => d.id) });
      const broken = await waitForRun(api, ds, docs[0].id);
      const fine = await waitForRun(api, ds, docs[1].id);
      assert.equal(broken.run, 'FAIL');
      assert.match(broken.progress_msg, /broken\.pdf/);
      assert.equal(fine.run, 'DONE');
      const counts = (await api.get('/datasets', { id: ds, include_parsing_status: true })).body.data[0];
      assert.equal(counts.fail_count, 1);
      assert.equal(counts.done_count, 1);
    });

    it('changing the chunk method resets the parse state and removes the chunks', async () => {
      const ds = (await api.post('/datasets', { name: 'method-change' })).body.data.id;
      const doc = (await upload(api, ds, [{ name: 'm.txt', bytes: Buffer.from('one line\nanother line') }])).body.data[0];
      await api.post(`/datasets/${ds}/chunks`, { document_ids: [doc.id] });
      assert.equal((await waitForRun(api, ds, doc.id)).run, 'DONE');
      const res = await api.patch(`/datasets/${ds}/documents/${doc.id}`, { chunk_method: 'one' });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.run, 'UNSTART');
      assert.equal(res.body.data.chunk_count, 0);
      assert.equal(res.body.data.chunk_method, 'one');
      assert.equal(await indexedChunks(doc.id), 0);
    });
  });

  describe('update and delete', () => {
    it('renames (keeping the extension) and sets meta_fields', async () => {
      const doc = (await upload(api, datasetId, [{ name: 'rename-me.txt', bytes: Buffer.from('x') }])).body.data[0];
      const res = await api.patch(`/datasets/${datasetId}/documents/${doc.id}`, { name: 'renamed.txt', meta_fields: { author: 'Ada', year: 1843 } });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.name, 'renamed.txt');
      assert.deepEqual(res.body.data.meta_fields, { author: 'Ada', year: 1843 });
      const ext = await api.patch(`/datasets/${datasetId}/documents/${doc.id}`, { name: 'renamed.pdf' });
      assert.equal(ext.status, 400);
    });

    it('deletes documents with their chunks and stored files; the shared rule applies', async () => {
      const ds = (await api.post('/datasets', { name: 'delete-docs' })).body.data.id;
      const docs = (await upload(api, ds, [
        { name: 'd1.txt', bytes: Buffer.from('first document about cairns') },
        { name: 'd2.txt', bytes: Buffer.from('second document about trails') },
      ])).body.data;
      await api.post(`/datasets/${ds}/chunks`, { document_ids: [docs[0].id] });
      await waitForRun(api, ds, docs[0].id);
      assert.equal((await api.delete(`/datasets/${ds}/documents`, {})).body.data.deleted, 0);
      const res = await api.delete(`/datasets/${ds}/documents`, { ids: [docs[0].id] });
      assert.equal(res.body.data.deleted, 1);
      assert.equal(await indexedChunks(docs[0].id), 0);
      assert.equal(await (await storage()).blobs.get(documentBlobKey(ds, docs[0].id)), undefined, 'the stored file is gone');
      assert.equal((await api.delete(`/datasets/${ds}/documents`, { ids: ['0'.repeat(32)] })).status, 404);
      assert.equal((await api.delete(`/datasets/${ds}/documents`, { delete_all: true })).body.data.deleted, 1);
    });

    it('a batch document delete with unknown or duplicate ids deletes the valid ones: code 0, data {success_count, errors}; none valid is an error', async () => {
      const ds = (await api.post('/datasets', { name: 'delete-docs-partial' })).body.data.id;
      const docs = (await upload(api, ds, [
        { name: 'p1.txt', bytes: Buffer.from('first partial document') },
        { name: 'p2.txt', bytes: Buffer.from('second partial document') },
      ])).body.data;
      const missing = '0'.repeat(32);
      const res = await api.delete(`/datasets/${ds}/documents`, { ids: [docs[0].id, missing, docs[0].id] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.code, 0);
      assert.equal(res.body.data.success_count, 1);
      assert.equal(res.body.data.errors.length, 2, JSON.stringify(res.body.data.errors));
      assert.ok(res.body.data.errors.some((e: string) => e.includes(missing)), 'the unknown id is named');
      assert.ok(res.body.data.errors.some((e: string) => /duplicate/i.test(e) && e.includes(docs[0].id)), 'the duplicate id is named');
      const left = (await api.get(`/datasets/${ds}/documents`)).body.data.docs.map((d: any) => d.id);
      assert.deepEqual(left, [docs[1].id]);
      const none = await api.delete(`/datasets/${ds}/documents`, { ids: [missing] });
      assert.equal(none.status, 404);
      assert.equal((await api.get(`/datasets/${ds}/documents`)).body.data.total, 1, 'an all-failed delete deletes nothing');
    });

    it('parsing with any unknown document id is an error naming the ids, and starts nothing', async () => {
      const ds = (await api.post('/datasets', { name: 'parse-unknown' })).body.data.id;
      const doc = (await upload(api, ds, [{ name: 'ok.txt', bytes: Buffer.from('a parseable document') }])).body.data[0];
      const missing = ['0'.repeat(32), 'f'.repeat(32)];
      for (const path of [`/datasets/${ds}/chunks`, `/datasets/${ds}/documents/parse`]) {
        const res = await api.post(path, { document_ids: [doc.id, ...missing] });
        assert.equal(res.status, 404, JSON.stringify(res.body));
        assert.notEqual(res.body.code, 0);
        for (const id of missing) assert.ok(res.body.message.includes(id), res.body.message);
        assert.equal((await getDoc(api, ds, doc.id)).run, 'UNSTART', 'nothing started');
      }
    });
  });

  describe('tenant isolation', () => {
    it('hides another tenant’s documents on every route', async () => {
      const other = (await newUser('intruder')).api;
      const doc = (await upload(api, datasetId, [{ name: 'secret.txt', bytes: Buffer.from('secret') }])).body.data[0];
      const checks = [
        await upload(other, datasetId, [{ name: 'x.txt', bytes: Buffer.from('x') }]),
        await other.get(`/datasets/${datasetId}/documents`),
        await other.patch(`/datasets/${datasetId}/documents/${doc.id}`, { name: 'mine.txt' }),
        await other.get(`/datasets/${datasetId}/documents/${doc.id}`),
        await other.delete(`/datasets/${datasetId}/documents`, { ids: [doc.id] }),
        await other.post(`/datasets/${datasetId}/chunks`, { document_ids: [doc.id] }),
        await other.delete(`/datasets/${datasetId}/chunks`, { document_ids: [doc.id] }),
        await other.post(`/datasets/${datasetId}/documents/parse`, { document_ids: [doc.id] }),
      ];
      for (const res of checks) assert.equal(res.status, 404);
      assert.equal((await getDoc(api, datasetId, doc.id)).name, 'secret.txt');
    });
  });
});

/** The index and file store behind the shared Cairn, whichever profile it runs on. */
async function storage() {
  return (await harness()).backends();
}

async function indexedChunkIds(documentId: string): Promise<string[]> {
  const { chunks } = await (await storage()).index.list(documentId, { page: 1, pageSize: 100_000 });
  return chunks.map((c) => c.id);
}

async function indexedChunks(documentId: string): Promise<number> {
  return (await indexedChunkIds(documentId)).length;
}
