import { Context, heartbeat } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityDeps } from './deps.js';
import type { DatasetIndexInput } from '../src/services/dataset-indexes.js';
import type { GraphSettings } from '../src/enrichment/graph/settings.js';
import type { ChunkSegment } from '../src/enrichment/graph/batches.js';
import { GraphJobs, type GraphJobRef, type GraphPlan, type GraphProgress, type StepHooks } from '../src/enrichment/graph/jobs.js';
import { requestGraphAfterParse, type GraphRequest } from '../src/enrichment/graph/trigger.js';
import { ModelError } from '../src/models/types.js';

/** Failures another attempt cannot fix: the job fails at once with the reason. */
const FINAL = new Set(['NoChatModelError', 'DatasetGoneError']);

function asFailure(err: unknown): unknown {
  if (Context.current().cancellationSignal.aborted) return new CancelledFailure('the graph job was cancelled');
  if (err instanceof ModelError && err.status < 500) return ApplicationFailure.nonRetryable(err.message, 'ModelConfigurationError');
  if (err instanceof Error && FINAL.has(err.name)) return ApplicationFailure.nonRetryable(err.message, err.name);
  return err;
}

/** Progress reports to the task row at most this often; heartbeats carry every change (the Temporal UI shows them). */
const REPORT_EVERY_MS = 500;

/**
 * Runs a step with a heartbeat every second (a dead worker is noticed within the heartbeat timeout, a
 * cancel arrives), the activity's cancellation as the model calls' signal, and progress reported as it
 * changes.
 */
async function step<T>(jobs: GraphJobs, ref: { datasetId: string; taskId: string }, concurrency: number, run: (hooks: StepHooks) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  let latest: GraphProgress | undefined;
  let reported = 0;
  const timer = setInterval(() => heartbeat(latest), 1000);
  try {
    return await run({
      concurrency,
      signal: ctx.cancellationSignal,
      onProgress: (p) => {
        latest = p;
        heartbeat(p);
        if (Date.now() - reported >= REPORT_EVERY_MS) {
          reported = Date.now();
          void jobs.report(ref, p).catch(() => undefined);
        }
      },
    });
  } catch (err) {
    throw asFailure(err);
  } finally {
    clearInterval(timer);
  }
}

/** The steps of the graphIndex workflow (thin: the work is in GraphJobs) and the request a finished parse makes. */
export function graphActivities({ store, index, models, enrichConcurrency: concurrency }: ActivityDeps) {
  const jobs = new GraphJobs({ store, index, models });
  return {
    async claimGraphTask(input: DatasetIndexInput): Promise<string> {
      return jobs.claim(input);
    },

    async planGraph(input: DatasetIndexInput): Promise<GraphPlan | undefined> {
      return step(jobs, input, concurrency, () => jobs.plan(input));
    },

    async extractGraphBatch(input: GraphJobRef & { settings: GraphSettings; batch: number; segments: ChunkSegment[]; unitBudget: number; answerTokens: number; progress: GraphProgress }): Promise<GraphProgress> {
      return step(jobs, input, concurrency, (hooks) => jobs.extractBatch(input, input, hooks));
    },

    async mergeGraph(input: GraphJobRef & { progress: GraphProgress }): Promise<GraphProgress> {
      return step(jobs, input, concurrency, () => jobs.merge(input, input.progress));
    },

    async resolveGraph(input: GraphJobRef & { settings: GraphSettings; progress: GraphProgress }): Promise<GraphProgress> {
      return step(jobs, input, concurrency, (hooks) => jobs.resolve(input, input.settings, input.progress, hooks));
    },

    async analyseGraph(input: GraphJobRef & { settings: GraphSettings; progress: GraphProgress }): Promise<{ progress: GraphProgress; communities: number }> {
      return step(jobs, input, concurrency, () => jobs.analyse(input, input.settings, input.progress));
    },

    async reportGraphCommunities(input: GraphJobRef & { settings: GraphSettings; from: number; to: number; progress: GraphProgress }): Promise<GraphProgress> {
      return step(jobs, input, concurrency, (hooks) => jobs.reportCommunities(input, input.settings, input, input.progress, hooks));
    },

    async publishGraph(input: GraphJobRef & { progress: GraphProgress }): Promise<string> {
      return jobs.publish(input, input.progress);
    },

    async reportGraphProgress(input: { datasetId: string; taskId: string; progress: GraphProgress }): Promise<void> {
      await jobs.report(input, input.progress);
    },

    async finishGraphTask(input: Omit<GraphJobRef, 'buildId'> & { buildId?: string; status: 'done' | 'failed' | 'cancelled'; message?: string }): Promise<void> {
      await jobs.finish(input, input.status, input.message);
    },

    /**
     * After a parse: when the dataset has graphrag.use_graphrag on, starts its graph job, or asks the
     * running one for another pass. graphIndex runs on the parse role's task queue, the queue this
     * activity (a parse step) itself runs on.
     */
    async requestGraphAfterParse(input: GraphRequest): Promise<string> {
      const ctx = Context.current();
      return requestGraphAfterParse(store, ctx.client, ctx.info.taskQueue, input);
    },
  };
}
