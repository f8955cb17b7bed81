import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  continueAsNew,
  defineSignal,
  isCancellation,
  proxyActivities,
  setHandler,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { DatasetIndexInput } from '../src/services/dataset-indexes.js';
import type { GraphProgress } from '../src/enrichment/graph/jobs.js';
import type { GraphSettings } from '../src/enrichment/graph/settings.js';
import { batchSegments, COMMUNITIES_PER_BATCH } from '../src/enrichment/graph/batches.js';
import { GRAPH_RERUN_SIGNAL } from '../src/enrichment/graph/signals.js';

/** Reads and writes of the task row: quick, retried until they succeed. */
const quick = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 20 },
});

export const graphRerun = defineSignal(GRAPH_RERUN_SIGNAL);

export type GraphIndexOutcome = { status: 'done'; message: string } | { status: 'failed'; message: string } | { status: 'gone' };

/**
 * The steps' options from the dataset's graphrag settings: retry_attempts and the backoff become the
 * retry policy of every model step; each step heartbeats every second (a killed worker is noticed within
 * 10 s and the step runs again elsewhere, its finished model calls answered from the cache) and waits
 * for its cancellation to complete, so a cancelled job leaves nothing running.
 */
function steps(settings: GraphSettings, startToCloseMs: number) {
  const initial = Math.max(100, settings.retryBackoffSeconds * 1000);
  const options: ActivityOptions = {
    startToCloseTimeout: Math.max(10_000, startToCloseMs),
    heartbeatTimeout: '10 seconds',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: initial, backoffCoefficient: 2, maximumInterval: Math.max(initial, settings.retryBackoffMaxSeconds * 1000), maximumAttempts: settings.retryAttempts },
  };
  return proxyActivities<Activities>(options);
}

/**
 * A dataset's knowledge graph: plan, extract entities and relations batch by batch, merge, resolve
 * entities (graphrag.resolution), rank and find communities, report on them (graphrag.community), publish.
 * No limit on the whole job; each step has its own timeout from the settings. A parse finishing while it
 * runs (GRAPH_RERUN_SIGNAL) makes it run once more when done, under the same task.
 */
export async function graphIndex(input: DatasetIndexInput): Promise<GraphIndexOutcome> {
  let rerun = false;
  setHandler(graphRerun, () => {
    rerun = true;
  });
  let taskId = input.taskId;
  let buildId: string | undefined;
  try {
    // Started after a parse: the job records its task first, so whatever happens next is reported.
    taskId ||= await quick.claimGraphTask(input);
    if (!taskId) return { status: 'gone' };
    const plan = await quick.planGraph({ ...input, taskId });
    if (!plan) return { status: 'gone' };
    ({ buildId } = plan);
    const { settings } = plan;
    const ref = { datasetId: input.datasetId, tenantId: input.tenantId, taskId, buildId };
    const callMs = Math.max(settings.minCallSeconds, settings.perChunkSeconds) * 1000;
    // A batch makes at most one call per chunk (two with the general method's second pass).
    const extract = steps(settings, callMs * plan.perBatch * (settings.method === 'general' ? 2 : 1) + 60_000);
    let progress: GraphProgress = plan.progress;
    for (let b = 0; b < plan.batches; b++) {
      const segments = batchSegments(plan.documents, plan.perBatch, b);
      progress = await extract.extractGraphBatch({ ...ref, settings, batch: b, segments, unitBudget: plan.unitBudget, answerTokens: plan.answerTokens, progress });
    }
    progress = await steps(settings, settings.mergeSeconds * 1000).mergeGraph({ ...ref, progress });
    if (settings.resolution) progress = await steps(settings, settings.resolutionSeconds * 1000).resolveGraph({ ...ref, settings, progress });
    const analysed = await steps(settings, settings.mergeSeconds * 1000).analyseGraph({ ...ref, settings, progress });
    progress = analysed.progress;
    const community = steps(settings, settings.communitySeconds * 1000);
    for (let from = 0; from < analysed.communities; from += COMMUNITIES_PER_BATCH) {
      progress = await community.reportGraphCommunities({ ...ref, settings, from, to: from + COMMUNITIES_PER_BATCH, progress });
    }
    const message = await quick.publishGraph({ ...ref, progress });
    if (!rerun) {
      await quick.finishGraphTask({ ...ref, status: 'done', message });
      return { status: 'done', message };
    }
    await quick.reportGraphProgress({ datasetId: input.datasetId, taskId, progress: { ...progress, stage: 'queued: documents were parsed while the graph was built' } });
  } catch (err) {
    if (isCancellation(err)) {
      if (taskId) await CancellationScope.nonCancellable(() => quick.finishGraphTask({ ...input, taskId, buildId, status: 'cancelled', message: 'Cancelled' }));
      throw err;
    }
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const message = cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : String(cause);
    if (taskId) await quick.finishGraphTask({ ...input, taskId, buildId, status: 'failed', message });
    return { status: 'failed', message };
  }
  // Outside the try: continueAsNew ends this run by throwing.
  return await continueAsNew<typeof graphIndex>({ ...input, taskId });
}
