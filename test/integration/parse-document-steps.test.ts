import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { Client, Connection } from '@temporalio/client';
import { startDevServer, type DevServer } from '../../src/engine/dev-server.js';
import { startWorker, type RunningWorker } from '../../src/engine/worker.js';
import { extractTaskQueue } from '../../src/engine/task-queues.js';
import { startWorkflow } from '../../src/engine/workflow-starts.js';
import { loadConfig } from '../../src/config.js';
import { chunkMethodPlan } from '../../src/pipelines/plan.js';
import type { PipelineRun } from '../../src/pipelines/run-types.js';

/**
 * The steps the current parseDocument code takes, run live on a Temporal dev server against activities
 * that record their calls (the replay test proves old histories still replay; this proves what new runs do).
 */
describe('parseDocument runs a document in its steps', function () {
  this.timeout(120_000);
  const rootDir = loadConfig().rootDir;
  const taskQueue = `parse-steps-${process.pid}`;
  let dataDir: string;
  let temporal: DevServer;
  let connection: Connection;
  let client: Client;
  const workers: RunningWorker[] = [];
  let calls: string[] = [];
  /** What the next run's activities do: enrich or not, and whether extraction fails. */
  let scenario: { enrich: boolean; extractFails?: string } = { enrich: false };

  const record = (name: string, result: unknown) => async () => {
    calls.push(name);
    return result;
  };
  const activities = {
    extractAndChunk: async () => {
      calls.push('extractAndChunk');
      if (scenario.extractFails) throw ApplicationFailure.nonRetryable(scenario.extractFails, 'CorruptFileError');
      return { chunksKey: 'chunks', chunks: 3, tokens: 30, pages: 1, sections: 2, enrich: scenario.enrich ? { keywords: 2, questions: 0 } : { keywords: 0, questions: 0 } };
    },
    enrichChunks: record('enrichChunks', { chunksKey: 'enriched' }),
    embedAndIndex: record('embedAndIndex', { chunks: 3, tokens: 30, raptor: false, graph: false }),
    raptorAfterParse: record('raptorAfterParse', undefined),
    requestGraphAfterParse: record('requestGraphAfterParse', undefined),
    markFailed: record('markFailed', undefined),
    markCancelled: record('markCancelled', undefined),
    removeWorkFiles: record('removeWorkFiles', undefined),
    /** A pipeline step: named by its component and the key it read; the index step stores the chunks. */
    runPipelineStep: async (input: { step: { id: string; component: string }; inputKey?: string }) => {
      calls.push(`${input.step.component}<${input.inputKey ?? '-'}`);
      const stores = input.step.component === 'Index' || input.step.component === 'Tokenizer';
      return { counts: {}, outputKey: `${input.step.id}-out`, ...(stores ? { indexed: { chunks: 3, tokens: 30 }, after: { raptor: input.step.component === 'Index', graph: false } } : {}) };
    },
  };

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-parse-steps-'));
    temporal = await startDevServer({ rootDir, dbFile: path.join(dataDir, 'temporal.db'), port: 0 });
    const common = { address: temporal.address, namespace: 'default', rootDir, activities };
    workers.push(await startWorker({ ...common, taskQueue }));
    workers.push(await startWorker({ ...common, taskQueue: extractTaskQueue(taskQueue), workflows: false }));
    connection = await Connection.connect({ address: temporal.address });
    client = new Client({ connection });
  });
  after(async () => {
    for (const w of workers) await w.stop();
    await connection?.close();
    await temporal?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function run(name: string, pipeline?: PipelineRun) {
    calls = [];
    const handle = await startWorkflow(client, 'parseDocument', { taskQueue, workflowId: `${name}-${Date.now()}`, args: [{ documentId: 'd', datasetId: 'ds', runSeq: 1, ...(pipeline ? { pipeline } : {}) }] });
    return { outcome: await handle.result(), calls };
  }

  it('a chunk method runs as the pipeline it makes: its steps in order, each reading the one before, then RAPTOR when the index step asks', async () => {
    const steps = chunkMethodPlan('naive', { keywords: 2, questions: 0 });
    const { outcome, calls } = await run('chunk-method', { id: '', title: 'Chunk method naive', steps, fromIndex: 0 });
    assert.deepEqual(outcome, { status: 'DONE', chunks: 3, tokens: 30 });
    assert.deepEqual(calls, ['ChunkMethod<-', 'Enrichment<ChunkMethod:naive-out', 'Index<Enrichment:keywords_questions-out', 'raptorAfterParse']);
  });

  it('a pipeline rerun from a named step starts there', async () => {
    const steps = [
      { id: 'Parser:A', component: 'Parser' as const, params: {} },
      { id: 'TokenChunker:B', component: 'TokenChunker' as const, params: {} },
      { id: 'Tokenizer:C', component: 'Tokenizer' as const, params: {} },
    ];
    const { outcome, calls } = await run('rerun', { id: 'p', title: 'P', steps, fromIndex: 1 });
    assert.equal(outcome.status, 'DONE');
    assert.deepEqual(calls, ['TokenChunker<-', 'Tokenizer<TokenChunker:B-out']);
  });

  it('parses a plain document in two activities: extract-and-chunk, then embed-and-index', async () => {
    scenario = { enrich: false };
    const { outcome, calls } = await run('plain');
    assert.deepEqual(outcome, { status: 'DONE', chunks: 3, tokens: 30 });
    assert.deepEqual(calls, ['extractAndChunk', 'embedAndIndex']);
  });

  it('generates keywords between the two when the dataset asks for them', async () => {
    scenario = { enrich: true };
    const { outcome, calls } = await run('enriched');
    assert.equal(outcome.status, 'DONE');
    assert.deepEqual(calls, ['extractAndChunk', 'enrichChunks', 'embedAndIndex']);
  });

  it('a file that cannot be read marks the document failed with the reason and removes the work files', async () => {
    scenario = { enrich: false, extractFails: 'report.pdf is not a PDF' };
    const { outcome, calls } = await run('fail');
    assert.deepEqual(outcome, { status: 'FAIL', message: 'report.pdf is not a PDF' });
    assert.deepEqual(calls, ['extractAndChunk', 'markFailed', 'removeWorkFiles']);
  });
});
