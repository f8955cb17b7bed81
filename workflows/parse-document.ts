import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

/** The long steps heartbeat every second: a dead worker is noticed within seconds and the step retried elsewhere. */
const steps = proxyActivities<Activities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 5 },
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
 * extract -> chunk -> embed -> index for one parse run of one document. Cancelling the workflow (stop)
 * marks the document CANCEL and removes partial chunks; a failure marks it FAIL with the reason.
 */
export async function parseDocument(input: ParseInput): Promise<ParseOutcome> {
  const ref = { documentId: input.documentId, runSeq: input.runSeq };
  try {
    const { sectionsKey } = await steps.extractDocument(ref);
    const { chunksKey } = await steps.chunkDocument({ ...ref, sectionsKey });
    const { vectorsPrefix, batches } = await steps.embedChunks({ ...ref, chunksKey });
    const { chunks, tokens } = await steps.indexChunks({ ...ref, chunksKey, vectorsPrefix, batches });
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
