import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

/** The long steps heartbeat every second: a dead worker is noticed within seconds and the step retried elsewhere. */
const steps = proxyActivities<Activities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 5 },
});

/**
 * Generating keywords and questions can take hours on a slow model. No wall-clock limit stops it: the
 * heartbeat notices a dead worker, each model call has its own timeout, and an attempt that does end
 * (a model failure, a killed worker) is retried with backoff, resuming from the answers it kept.
 */
const enrichment = proxyActivities<Activities>({
  startToCloseTimeout: '30 days',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});

export interface ParseInput {
  documentId: string;
  datasetId: string;
  runSeq: number;
}

export type ParseOutcome = { status: 'DONE'; chunks: number; tokens: number } | { status: 'FAIL'; message: string } | { status: 'STALE' };

/**
 * extract -> chunk -> [keywords and questions] -> embed -> index for one parse run of one document.
 * Cancelling the workflow (stop) marks the document CANCEL and removes partial chunks; a failure marks
 * it FAIL with the reason.
 */
export async function parseDocument(input: ParseInput): Promise<ParseOutcome> {
  const ref = { documentId: input.documentId, runSeq: input.runSeq };
  try {
    const { sectionsKey } = await steps.extractDocument(ref);
    const chunked = await steps.chunkDocument({ ...ref, sectionsKey });
    let { chunksKey } = chunked;
    // `enrich` is absent from the history of runs chunked before keywords existed: they go on without.
    const enrich = chunked.enrich;
    const enriched = !!enrich && (enrich.keywords > 0 || enrich.questions > 0);
    if (enriched) ({ chunksKey } = await enrichment.enrichChunks({ ...ref, chunksKey, enrich }));
    const { vectorsPrefix, batches } = await steps.embedChunks({ ...ref, chunksKey, enriched });
    const { chunks, tokens } = await steps.indexChunks({ ...ref, chunksKey, vectorsPrefix, batches });
    // RAPTOR on: the dataset's RAPTOR task starts, or runs once more, with this document's chunks.
    if (patched('raptor-after-parse')) await bookkeeping.raptorAfterParse({ documentId: input.documentId });
    // Knowledge graph on (graphrag.use_graphrag): the dataset's graph job starts, or runs once more, with this document's chunks.
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
    await CancellationScope.nonCancellable(() => bookkeeping.removeWorkFiles({ ...ref, datasetId: input.datasetId }));
  }
}
