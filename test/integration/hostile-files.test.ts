import assert from 'node:assert/strict';
import { workflowIds } from '../../src/engine/task-queues.js';
import { readdirSync, readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../src/config.js';
import { harness } from './harness.js';
import { Api, eventually, newUser } from './client.js';
import { upload, type UploadFile } from './documents-helpers.js';
import {
  deepJson,
  deepPdf,
  docxBomb,
  emlWith,
  heavyDocx,
  manyEntriesDocx,
  pdfStreamBomb,
  pngClaiming,
  pptxBomb,
  textOfSize,
  xlsxBomb,
} from '../fixtures/hostile.js';

const MB = 1024 * 1024;
const HEALTHZ_BUDGET_MS = 100;

/** Resident memory of a process in MB (0 once it is gone). */
function residentMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The worker's parser processes: its children whose command line runs parser-process. */
function parserChildren(workerPid: number): number[] {
  const pids: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${workerPid}/task`)) {
      for (const pid of readFileSync(`/proc/${workerPid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number)) {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('parser-process')) pids.push(pid);
      }
    }
  } catch {
    // a process that ended between two reads
  }
  return pids;
}

/** Attempts of the extract activity in the parse workflow of a document (1 unless Temporal retried it). */
async function extractAttempts(client: Client, datasetId: string, documentId: string): Promise<number> {
  const history = await client.workflow.getHandle(workflowIds.ingestDocument({ id: documentId, dataset_id: datasetId, run_seq: 1, pipeline_id: null })).fetchHistory();
  const attempts = (history.events ?? []).flatMap((e) => (e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt ?? 1] : []));
  return Math.max(...attempts);
}

describe('hostile files', function () {
  this.timeout(300_000);
  let api: Api;
  let datasetId: string;
  const { memoryMb } = loadConfig().parsing.ceilings;
  /** File name -> the reason its parse must fail with. */
  const reasons = new Map<string, RegExp>([
    ['bomb.docx', /bomb\.docx was refused: "word\/document\.xml" declares 420 MB uncompressed \(limit 256 MB per part, CAIRN_PARSE_INFLATE_ENTRY_MAX_MB\)/],
    ['forged.xlsx', /forged\.xlsx was refused: "xl\/worksheets\/sheet1\.xml" inflates to more than 200 times its compressed size \(limit 200×, CAIRN_PARSE_INFLATE_MAX_RATIO\)/],
    ['bomb.pptx', /bomb\.pptx was refused: "ppt\/slides\/slide1\.xml" declares 420 MB/],
    ['entries.docx', /entries\.docx was refused: it holds 100000 zip entries \(limit 10000, CAIRN_PARSE_ZIP_MAX_ENTRIES\)/],
    ['mail.eml', /mail\.eml has an attachment over a parsing limit: report\.docx was refused/],
    ['deep.pdf', /deep\.pdf was refused: its PDF objects nest deeper than 256 levels \(limit 256, CAIRN_PARSE_MAX_DEPTH\)/],
    ['stream.pdf', /stream\.pdf was refused: a compressed PDF stream inflates to more than 256 MB/],
    ['huge.png', /huge\.png was refused: the image is 100000 × 100000 pixels/],
    ['deep.json', /deep\.json was refused: its JSON nests deeper than 256 levels/],
    ['huge.txt', /huge\.txt was refused: 51 MB of text is more than the limit of 50 MB \(CAIRN_PARSE_TEXT_MAX_MB\)/],
    // Passes every decompression limit; only the memory ceiling of its parser process stops it.
    ['heavy.docx', new RegExp(`heavy\\.docx exceeded the parser memory ceiling of ${memoryMb} MB \\(CAIRN_PARSE_MEMORY_MB\\)`)],
  ]);
  let files: UploadFile[] = [];

  before(async () => {
    // Built before any request: building blocks this process (which also serves the API) for seconds.
    const built: Record<string, Buffer> = {
      'bomb.docx': docxBomb(420),
      'forged.xlsx': xlsxBomb(420, { declaredSize: 4096 }),
      'bomb.pptx': pptxBomb(420),
      'entries.docx': manyEntriesDocx(100_000),
      'mail.eml': await emlWith('report.docx', docxBomb(420)),
      'deep.pdf': deepPdf(1_000_000),
      'stream.pdf': pdfStreamBomb(1024),
      'huge.png': pngClaiming(100_000, 100_000),
      'deep.json': deepJson(1_000_000),
      'huge.txt': textOfSize(51 * MB),
      'heavy.docx': heavyDocx(240),
    };
    files = Object.entries(built).map(([name, bytes]) => ({ name, bytes }));
    api = (await newUser('hostile')).api;
    datasetId = (await api.post('/datasets', { name: 'hostile' })).body.data.id;
  });

  it('each fails with the limit it broke, while healthz stays fast and no process outgrows the ceiling', async () => {
    const h = await harness();
    const uploaded = await upload(api, datasetId, files);
    assert.equal(uploaded.status, 200, JSON.stringify(uploaded.body));
    files = []; // the API process holds no corpus while the parse is watched
    const ids = new Map<string, string>(uploaded.body.data.map((d: { name: string; id: string }) => [d.name, d.id]));

    // Watch the API's latency and every process's memory while the corpus is parsed.
    const workerPid = h.worker.child.pid!;
    const apiRss = () => process.memoryUsage.rss() / MB;
    const base = { api: apiRss(), worker: residentMb(workerPid) };
    const peaks = { api: base.api, worker: base.worker, parser: 0, parsers: new Set<number>() };
    const sampler = setInterval(() => {
      peaks.api = Math.max(peaks.api, apiRss());
      peaks.worker = Math.max(peaks.worker, residentMb(workerPid));
      for (const pid of parserChildren(workerPid)) {
        peaks.parsers.add(pid);
        peaks.parser = Math.max(peaks.parser, residentMb(pid));
      }
    }, 100);
    const latencies: number[] = [];
    let parsing = true;
    const poller = (async () => {
      while (parsing) {
        const started = performance.now();
        const res = await fetch(`${h.url}/api/v1/system/healthz`);
        await res.text();
        latencies.push(performance.now() - started);
        assert.equal(res.status, 200);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    const started = Date.now();
    try {
      const parse = await api.post(`/datasets/${datasetId}/chunks`, { document_ids: [...ids.values()] });
      assert.equal(parse.body.code, 0, JSON.stringify(parse.body));
      // One list call a second: the test's own requests share this process with the API it measures.
      const finals = await eventually(async () => {
        const docs: { name: string; run: string; progress_msg: string; chunk_count: number }[] = (await api.get(`/datasets/${datasetId}/documents`, { page_size: 100 })).body.data.docs;
        return docs.every((d) => ['DONE', 'FAIL', 'CANCEL'].includes(d.run)) ? new Map(docs.map((d) => [d.name, d] as const)) : undefined;
      }, 120_000, 1000);
      const elapsed = (Date.now() - started) / 1000;
      parsing = false;
      await poller;

      for (const [name, reason] of reasons) {
        const doc = finals.get(name)!;
        assert.equal(doc.run, 'FAIL', `${name}: ${doc.run} ${doc.progress_msg}`);
        assert.match(doc.progress_msg, reason, name);
        assert.equal(doc.chunk_count, 0);
      }
      const connection = await Connection.connect({ address: h.temporal.address });
      try {
        const client = new Client({ connection });
        for (const name of reasons.keys()) assert.equal(await extractAttempts(client, datasetId, ids.get(name)!), 1, `${name} was parsed more than once`);
      } finally {
        await connection.close();
      }

      const sorted = [...latencies].sort((a, b) => a - b);
      const p90 = sorted[Math.floor(sorted.length * 0.9)];
      const slowest = sorted[sorted.length - 1];
      console.log(
        `      ${ids.size} files in ${elapsed.toFixed(1)} s; healthz ${latencies.length} calls, p90 ${p90.toFixed(0)} ms, slowest ${slowest.toFixed(0)} ms; ` +
          `RSS before -> peak: API ${base.api.toFixed(0)} -> ${peaks.api.toFixed(0)} MB, worker ${base.worker.toFixed(0)} -> ${peaks.worker.toFixed(0)} MB, ` +
          `parser processes (${peaks.parsers.size}) peak ${peaks.parser.toFixed(0)} MB`,
      );
      assert.ok(latencies.length > 10, 'healthz was polled throughout');
      // The budget is 100 ms. This machine has 2 cores shared with other work, where even an idle Cairn
      // shows scheduling outliers past 100 ms; so 9 answers in 10 must be within budget, and none may
      // stall (parsing on the API's event loop stalled it for seconds to minutes).
      assert.ok(p90 < HEALTHZ_BUDGET_MS, `healthz p90 was ${p90.toFixed(0)} ms`);
      assert.ok(slowest < 10 * HEALTHZ_BUDGET_MS, `healthz took ${slowest.toFixed(0)} ms`);
      assert.ok(peaks.parsers.size > 0, 'the parser processes were seen');
      // The API runs in this test process (which also holds mocha and the corpus): what matters is that parsing adds nothing to it.
      assert.ok(peaks.api - base.api < 100, `the API process grew from ${base.api.toFixed(0)} to ${peaks.api.toFixed(0)} MB`);
      assert.ok(peaks.worker < memoryMb, `the worker process peaked at ${peaks.worker.toFixed(0)} MB`);
      // The watchdog reads memory every 50 ms: a process may pass the ceiling by what it allocates in that time.
      assert.ok(peaks.parser < memoryMb + 64, `a parser process peaked at ${peaks.parser.toFixed(0)} MB`);
    } finally {
      parsing = false;
      clearInterval(sampler);
      await poller.catch(() => undefined);
    }
  });
});
