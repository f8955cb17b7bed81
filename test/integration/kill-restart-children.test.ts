import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Api, eventually } from './client.js';
import { adminKeyOf, isRunning, startCairnProcess, type CairnProcess } from './cairn-process.js';
import { upload } from './documents-helpers.js';
import { makePdf } from '../fixtures/generate.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/index.js';

const DOCUMENTS = 20;

/** Pids of the parser processes of the Cairn serving `dataDir`, from /proc (cmdline and environment). */
function parserProcesses(dataDir: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('parser-process')) continue;
      if (!fs.readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(`CAIRN_DATA_DIR=${dataDir}`)) continue;
      if (isRunning(Number(name))) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** A document's own paragraphs: each chunk's text is unique, so a chunk stored twice shows. */
function paragraphs(doc: number, count: number): Uint8Array {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(`Document ${doc}, paragraph ${i}: the cairn on ridge ${doc} marks crossing ${i}, where walkers log the weather, the wildlife and the path.`);
  return Buffer.from(lines.join('\n\n'));
}

describe('kill -9 of Cairn in the middle of parsing', function () {
  this.timeout(300_000);
  const started: CairnProcess[] = [];
  let dataDir: string;
  let fake: FakeOpenAI;
  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-kill-parse-'));
    fake = await startFakeOpenAI({ dims: 64 });
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') for (const cairn of started) console.log(`cairn ${cairn.child.pid} output:\n${cairn.output().slice(-4000)}`);
  });
  after(async () => {
    for (const cairn of started) await cairn.stop();
    await fake?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('a restart right after the kill works, one parser process runs, and each of 20 documents ends DONE once with each chunk once', async () => {
    const env = { CAIRN_PARSE_PROCESSES: '1' };
    const first = await startCairnProcess(dataDir, undefined, { env });
    started.push(first);
    let api = new Api(first.url, adminKeyOf(dataDir));
    // The embedding model is a remote provider's (the fake): parsing, not embedding, is what this test times.
    const model = await api.post('/providers/OpenAI-API-Compatible/instances', { instance_name: 'fake', base_url: fake.baseUrl, model_info: [{ model_name: 'fake-embed', model_type: 'embedding' }] });
    assert.equal(model.status, 200, JSON.stringify(model.body));
    const ds = (await api.post('/datasets', { name: 'killed-mid-parse', embedding_model: 'fake-embed@fake@OpenAI-API-Compatible' })).body.data.id as string;
    const files: { name: string; bytes: Uint8Array }[] = [{ name: 'slow.pdf', bytes: await makePdf({ pages: 150, paragraphsPerPage: 6 }) }];
    for (let i = 1; i < DOCUMENTS; i++) files.push({ name: `doc-${i}.txt`, bytes: paragraphs(i, 40) });
    const uploaded = await upload(api, ds, files);
    assert.equal(uploaded.status, 200, JSON.stringify(uploaded.body));
    const ids = (uploaded.body.data as { id: string }[]).map((d) => d.id);
    assert.equal((await api.post(`/datasets/${ds}/chunks`, { document_ids: ids })).status, 200);

    // The slow PDF is in its parser process when Cairn is killed.
    const [busyParser] = await eventually(async () => {
      const pids = parserProcesses(dataDir);
      return pids.length > 0 && pids;
    }, 60_000, 50);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.ok(isRunning(busyParser!), 'the parser is at work when Cairn is killed');
    await first.kill();
    const killedAt = Date.now();
    await eventually(async () => !isRunning(busyParser!), 2_000, 20).catch(() => {
      throw new Error(`parser process ${busyParser} outlived its killed Cairn by 2 s`);
    });
    assert.ok(Date.now() - killedAt <= 2_000);

    const second = await startCairnProcess(dataDir, first.ports, { env });
    started.push(second);
    api = new Api(second.url, adminKeyOf(dataDir));
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, parserProcesses(dataDir).length)), 100);
    try {
      await eventually(async () => {
        const docs = (await api.get(`/datasets/${ds}/documents`, { page_size: 100 })).body.data.docs as { run: string }[];
        return docs.every((d) => d.run === 'DONE') && docs;
      }, 240_000, 500);
    } finally {
      clearInterval(sampler);
    }
    assert.equal(most, 1, 'one parser process at most, and one ran');

    for (const id of ids) {
      const doc = (await api.get(`/datasets/${ds}/documents`, { id })).body.data.docs[0];
      assert.equal(doc.run, 'DONE', `${doc.name}: ${doc.progress_msg}`);
      const texts: string[] = [];
      let total = -1;
      for (let page = 1; texts.length !== total; page++) {
        const chunks = await api.get(`/datasets/${ds}/documents/${id}/chunks`, { page, page_size: 100 });
        total = chunks.body.data.total;
        const got = (chunks.body.data.chunks as { content: string }[]).map((c) => c.content);
        if (got.length === 0) break;
        texts.push(...got);
      }
      assert.equal(total, doc.chunk_count, `${doc.name}: chunks listed = chunk_count`);
      assert.equal(texts.length, doc.chunk_count, `${doc.name}: every chunk listed`);
      assert.equal(new Set(texts).size, texts.length, `${doc.name}: no chunk stored twice`);
      assert.ok(doc.chunk_count > 0, `${doc.name} has chunks`);
    }
  });

  it('a document whose parse is cut by more kills than a step has tries (6 against 5) still ends DONE once', async function () {
    this.timeout(600_000);
    const KILLS = 6;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-kill-often-'));
    const env = { CAIRN_PARSE_PROCESSES: '1' };
    try {
      let cairn = await startCairnProcess(dir, undefined, { env });
      started.push(cairn);
      const api = new Api(cairn.url, adminKeyOf(dir));
      await api.post('/providers/OpenAI-API-Compatible/instances', { instance_name: 'fake', base_url: fake.baseUrl, model_info: [{ model_name: 'fake-embed', model_type: 'embedding' }] });
      const ds = (await api.post('/datasets', { name: 'killed-often', embedding_model: 'fake-embed@fake@OpenAI-API-Compatible' })).body.data.id as string;
      const uploaded = await upload(api, ds, [{ name: 'book.pdf', bytes: await makePdf({ pages: 60, paragraphsPerPage: 6 }) }]);
      const id = (uploaded.body.data as { id: string }[])[0]!.id;
      assert.equal((await api.post(`/datasets/${ds}/chunks`, { document_ids: [id] })).status, 200);
      const document = async () => (await api.get(`/datasets/${ds}/documents`, { id })).body.data.docs[0] as { run: string; progress_msg: string; chunk_count: number };

      for (let kill = 1; kill <= KILLS; kill++) {
        // A try of the parse step is under way: this installation's parser process runs (it starts with the first job).
        await eventually(async () => {
          if (parserProcesses(dir).length > 0) return true;
          const doc = await document();
          if (doc.run !== 'RUNNING') throw new Error(`before kill ${kill}, the document is ${doc.run}: ${doc.progress_msg}`);
          return false;
        }, 120_000, 100);
        await cairn.kill();
        cairn = await startCairnProcess(dir, cairn.ports, { env });
        started.push(cairn);
      }

      const doc = await eventually(async () => {
        const d = await document();
        return d.run !== 'RUNNING' && d;
      }, 300_000, 500);
      assert.equal(doc.run, 'DONE', doc.progress_msg);
      const chunks: { content: string }[] = [];
      for (let page = 1; ; page++) {
        const got = (await api.get(`/datasets/${ds}/documents/${id}/chunks`, { page, page_size: 100 })).body.data.chunks as { content: string }[];
        chunks.push(...got);
        if (got.length < 100) break;
      }
      assert.ok(doc.chunk_count > 0);
      assert.equal(chunks.length, doc.chunk_count, 'each chunk listed');
      assert.equal(new Set(chunks.map((c) => c.content)).size, chunks.length, 'no chunk stored twice');
    } finally {
      await started.at(-1)!.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
