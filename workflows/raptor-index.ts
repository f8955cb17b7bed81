import { ActivityCancellationType, ActivityFailure, CancellationScope, continueAsNew, defineSignal, isCancellation, proxyActivities, setHandler, uuid4 } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { RaptorCounts, RaptorRef } from '../activities/raptor.js';
import type { DatasetIndexInput } from '../src/services/dataset-indexes.js';
import type { TaskProgress } from '../src/store/enrichment.js';
import { RAPTOR_SOURCES_CHANGED } from '../src/enrichment/raptor/signals.js';

/**
 * One step = one batch of work; it heartbeats every second, so a dead worker is noticed within seconds
 * and the step retried elsewhere (with backoff). The model's own timeout bounds each call; the task as a
 * whole has no time limit. A cancelled task waits until its running step has stopped, so once the
 * cancel has returned no further model call is made.
 */
const steps = proxyActivities<Activities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '10 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});

/** A finished parse asks a running job for one more pass (its new chunks get summarised too). */
export const raptorSourcesChanged = defineSignal(RAPTOR_SOURCES_CHANGED);

export type RaptorOutcome = { status: 'done'; summaries: number } | { status: 'failed'; message: string };

/**
 * RAPTOR over a dataset (raptorIndex, id `dataset-raptor-<dataset id>`): the chunks are clustered and
 * each cluster summarised by the chat model, level by level, until each tree has its root; then the
 * summaries replace the dataset's previous ones. The task row shows the progress; a cancel stops it
 * (nothing is written), a failure ends it with the reason and leaves the previous summaries in place
 * (every answer already received is cached, so a new run pays only for the rest).
 */
export async function raptorIndex(input: DatasetIndexInput): Promise<RaptorOutcome> {
  const asked = { again: false };
  setHandler(raptorSourcesChanged, () => {
    asked.again = true;
  });
  const outcome = await runTask(input, asked);
  // Asked again while the task was being closed: run once more, as a new task.
  if (outcome.status === 'done' && asked.again) await continueAsNew<typeof raptorIndex>({ ...input, taskId: uuid4().replaceAll('-', '') });
  return outcome;
}

/** Runs passes until no finished parse asked for another, then records how the task ended. */
async function runTask(input: DatasetIndexInput, asked: { again: boolean }): Promise<RaptorOutcome> {
  const progress: TaskProgress = { stage: 'queued', done: 0, total: 0, model_calls: 0, cached_calls: 0, tokens: 0 };
  try {
    await bookkeeping.raptorBegin(input);
    let summaries = 0;
    for (let pass = 1; pass === 1 || asked.again; pass++) {
      asked.again = false;
      const ref: RaptorRef = { ...input, pass };
      try {
        summaries = await onePass(ref, progress);
      } finally {
        await CancellationScope.nonCancellable(() => bookkeeping.raptorRemoveWork(ref));
      }
    }
    await bookkeeping.raptorFinish({ ...input, status: 'done' });
    return { status: 'done', summaries };
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => bookkeeping.raptorFinish({ ...input, status: 'cancelled', message: 'Cancelled: the RAPTOR task was stopped' }));
      throw err;
    }
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const message = cause instanceof Error ? cause.message : String(cause);
    await bookkeeping.raptorFinish({ ...input, status: 'failed', message });
    return { status: 'failed', message };
  }
}

async function onePass(ref: RaptorRef, progress: TaskProgress): Promise<number> {
  await steps.raptorPrepare({ ...ref, progress });
  let level = 0;
  let batchesBelow = 0;
  for (;;) {
    const plan = await steps.raptorCluster({ ...ref, level, batchesBelow, progress });
    if (plan.clusters === 0) break;
    progress.total += plan.clusters;
    for (let batch = 0; batch < plan.batches; batch++) {
      add(progress, await steps.raptorSummarise({ ...ref, level, batch, batchSize: plan.batchSize, clusters: plan.clusters, progress }));
    }
    batchesBelow = plan.batches;
    level++;
  }
  const { summaries } = await steps.raptorWrite({ ...ref, levels: level, progress });
  return summaries;
}

function add(progress: TaskProgress, counts: RaptorCounts): void {
  progress.done += counts.done;
  progress.model_calls += counts.model_calls;
  progress.cached_calls += counts.cached_calls;
  progress.tokens += counts.tokens;
}
