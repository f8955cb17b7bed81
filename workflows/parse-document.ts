import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, patched, proxyActivities, TimeoutFailure, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { extractTaskQueue } from '../src/engine/task-queues.js';
import { stepActivityId, type PipelineRun } from '../src/pipelines/run-types.js';

/** The long steps heartbeat every second: a dead worker is noticed within seconds and the step retried elsewhere. */
const STEP_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 5 },
};
const steps = proxyActivities<Activities>(STEP_OPTIONS);

/**
 * Generating keywords and questions can take hours on a slow model. No wall-clock limit stops it: the
 * heartbeat notices a dead worker, each model call has its own timeout, and an attempt that does end
 * (a model failure, a killed worker) is retried with backoff, resuming from the answers it kept.
 */
const MODEL_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30 days',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
};
const enrichment = proxyActivities<Activities>(MODEL_OPTIONS);

const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});

export interface ParseInput {
  documentId: string;
  datasetId: string;
  runSeq: number;
  /** The ingestion pipeline the document goes through (its dataset's); absent: the chunk method. */
  pipeline?: PipelineRun;
}

export type ParseOutcome = { status: 'DONE'; chunks: number; tokens: number } | { status: 'FAIL'; message: string } | { status: 'STALE' };

type RunRef = { documentId: string; runSeq: number };
type Enrich = Awaited<ReturnType<Activities['chunkDocument']>>['enrich'] | undefined;

/** `enrich` is absent from the history of runs chunked before keywords existed: they go on without. */
const wantsEnrichment = (enrich: Enrich) => !!enrich && (enrich.keywords > 0 || enrich.questions > 0);

/**
 * extract and chunk -> [keywords and questions] -> embed and index for one parse run of one document.
 * Cancelling the workflow (stop) marks the document CANCEL and removes partial chunks; a failure marks
 * it FAIL with the reason.
 */
export async function parseDocument(input: ParseInput): Promise<ParseOutcome> {
  const ref = { documentId: input.documentId, runSeq: input.runSeq };
  // Runs started before 'parse-in-two-steps' took four steps and two bookkeeping ones after them.
  const twoSteps = patched('parse-in-two-steps');
  let workFilesRemoved = false;
  try {
    // Inputs of runs started before pipelines existed have none: their histories replay as before.
    if (input.pipeline) {
      const done = await runPipeline(input, input.pipeline);
      workFilesRemoved = true;
      return { status: 'DONE', chunks: done.chunks, tokens: done.tokens };
    }
    if (twoSteps) {
      const done = await parseInTwoSteps(ref);
      workFilesRemoved = true;
      // RAPTOR on: the dataset's RAPTOR task starts, or runs once more, with this document's chunks.
      if (done.raptor) await bookkeeping.raptorAfterParse({ documentId: input.documentId });
      // Knowledge graph on (graphrag.use_graphrag): the dataset's graph job starts, or runs once more, with this document's chunks.
      if (done.graph) await bookkeeping.requestGraphAfterParse({ datasetId: input.datasetId });
      return { status: 'DONE', chunks: done.chunks, tokens: done.tokens };
    }
    const { sectionsKey } = await steps.extractDocument(ref);
    const chunked = await steps.chunkDocument({ ...ref, sectionsKey });
    let { chunksKey } = chunked;
    const enriched = wantsEnrichment(chunked.enrich);
    if (enriched) ({ chunksKey } = await enrichment.enrichChunks({ ...ref, chunksKey, enrich: chunked.enrich }));
    const { vectorsPrefix, batches } = await steps.embedChunks({ ...ref, chunksKey, enriched });
    const { chunks, tokens } = await steps.indexChunks({ ...ref, chunksKey, vectorsPrefix, batches });
    if (patched('raptor-after-parse')) await bookkeeping.raptorAfterParse({ documentId: input.documentId });
    if (patched('graph-after-parse')) await bookkeeping.requestGraphAfterParse({ datasetId: input.datasetId });
    return { status: 'DONE', chunks, tokens };
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => bookkeeping.markCancelled(ref));
      throw err;
    }
    const cause = err instanceof ActivityFailure ? err.cause : err;
    if (cause instanceof ApplicationFailure && cause.type === 'StaleRun') return { status: 'STALE' };
    const message = cause instanceof Error ? cause.message : String(cause);
    await bookkeeping.markFailed({ ...ref, message });
    return { status: 'FAIL', message };
  } finally {
    if (!workFilesRemoved) await CancellationScope.nonCancellable(() => bookkeeping.removeWorkFiles({ ...ref, datasetId: input.datasetId }));
  }
}

/**
 * Two activities where there were four, each a round trip through Temporal: extraction and chunking on
 * the extraction queue (slots as many as the parser processes, so files waiting for a parser never hold
 * the slots embedding needs), then embedding and indexing, which also removes the run's work files.
 */
async function parseInTwoSteps(ref: RunRef) {
  const extraction = proxyActivities<Activities>({ ...STEP_OPTIONS, taskQueue: extractTaskQueue(workflowInfo().taskQueue) });
  const chunked = await extraction.extractAndChunk(ref);
  let { chunksKey } = chunked;
  const enriched = wantsEnrichment(chunked.enrich);
  if (enriched) ({ chunksKey } = await enrichment.enrichChunks({ ...ref, chunksKey, enrich: chunked.enrich }));
  return steps.embedAndIndex({ ...ref, chunksKey, enriched, tokens: chunked.tokens });
}

/**
 * The pipeline's steps in order, each one activity (runPipelineStep), each reading what the step before it
 * stored: the Parser (and a chunk method's first step) on the extraction queue (its slots are the parser
 * processes), Extractors, the Compiler and keywords/questions with the model-call options (no wall-clock
 * limit, heartbeats and retries with backoff), the chunkers and the index steps as the other steps. A dataset
 * of a chunk method runs the pipeline chunkMethodPlan makes (src/pipelines/plan.ts): one engine for both. A
 * rerun from a later step starts there, the step before it reading what the last run stored. After the index
 * the dataset's RAPTOR and graph jobs are started (or asked for one more pass) when its settings, or a
 * Compiler, ask for them.
 */
async function runPipeline(input: ParseInput, pipeline: PipelineRun): Promise<{ chunks: number; tokens: number }> {
  const extractionOptions: ActivityOptions = { ...STEP_OPTIONS, taskQueue: extractTaskQueue(workflowInfo().taskQueue) };
  let indexed: { chunks: number; tokens: number } | undefined;
  let after = { raptor: false, graph: false };
  let inputKey: string | undefined;
  for (let index = pipeline.fromIndex; index < pipeline.steps.length; index++) {
    const step = pipeline.steps[index]!;
    const previous = index > 0 ? pipeline.steps[index - 1] : undefined;
    const options = READS_FILE.has(step.component) ? extractionOptions : CALLS_MODEL.has(step.component) ? MODEL_OPTIONS : STEP_OPTIONS;
    // The activity id names the step: the Temporal UI (and bench/ingest's stage table) show which step ran.
    const runner = proxyActivities<Activities>({ ...options, activityId: stepActivityId(index, step) });
    const out = await surviveLostWorkers(() => runner.runPipelineStep({
      documentId: input.documentId,
      runSeq: input.runSeq,
      datasetId: input.datasetId,
      pipelineId: pipeline.id,
      step,
      index,
      total: pipeline.steps.length,
      previousId: previous?.id,
      previousComponent: previous?.component,
      inputKey,
    }));
    inputKey = out.outputKey;
    if (out.indexed) indexed = out.indexed;
    if (out.after) after = out.after;
    // A Compiler builds RAPTOR summaries and the graph whatever the dataset's settings say.
    if (step.component === 'Compiler') after = { raptor: true, graph: true };
  }
  if (!indexed) throw ApplicationFailure.nonRetryable('the pipeline ended without storing its chunks', 'PipelinePlanError');
  const force = pipeline.steps.some((s) => s.component === 'Compiler');
  if (after.raptor) await bookkeeping.raptorAfterParse({ documentId: input.documentId, ...(force ? { force } : {}) });
  if (after.graph) await bookkeeping.requestGraphAfterParse({ datasetId: input.datasetId, ...(force ? { force } : {}) });
  return indexed;
}

/**
 * How many times a step starts again with fresh tries after its tries were all used up by lost workers:
 * 5 rounds of STEP_OPTIONS' 5 tries, so a document survives 25 kills of the worker under one step.
 */
const LOST_WORKER_ROUNDS = 5;

/**
 * Runs a step; when its last try ended because its worker died (Cairn killed or crashed: the heartbeats
 * stopped), runs it again with fresh tries. A restart is not the document's fault: five kills of Cairn
 * while one large file parsed used to end the document FAIL "activity Heartbeat timeout" (the kill -9
 * soak, bench/soak). Other failures keep the step's own limit, and the rounds are bounded, so a file that
 * somehow takes its worker down each time still ends FAIL. Runs that began before this change replay as before.
 */
async function surviveLostWorkers<T>(step: () => Promise<T>): Promise<T> {
  for (let round = 1; ; round++) {
    try {
      return await step();
    } catch (err) {
      if (round >= LOST_WORKER_ROUNDS || !lostWorker(err) || !patched('retry-lost-worker')) throw err;
    }
  }
}

function lostWorker(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'HEARTBEAT';
}

/** Steps that read the file in a parser process: they run on the extraction queue. */
const READS_FILE: ReadonlySet<string> = new Set(['Parser', 'ChunkMethod']);
/** Steps that call a chat model per chunk: no wall-clock limit, retries with backoff. */
const CALLS_MODEL: ReadonlySet<string> = new Set(['Extractor', 'Compiler', 'Enrichment']);
