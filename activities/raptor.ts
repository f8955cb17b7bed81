import { Context, heartbeat } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityDeps } from './deps.js';
import { readJson, readVectors, writeJson, writeVectors } from './work-files.js';
import type { DatasetIndexInput } from '../src/services/dataset-indexes.js';
import type { TaskProgress, TaskStatus } from '../src/store/enrichment.js';
import { datasetBlobPrefix } from '../src/services/blob-keys.js';
import { ApiError } from '../src/errors.js';
import { ModelError } from '../src/models/types.js';
import { cachedCalls } from '../src/enrichment/cached-calls.js';
import { clusterVectors } from '../src/enrichment/raptor/cluster.js';
import { chatModelOf, raptorSettings, type RaptorSettings } from '../src/enrichment/raptor/settings.js';
import { collectSources } from '../src/enrichment/raptor/sources.js';
import { summaryCall, summaryText } from '../src/enrichment/raptor/summary.js';
import { RaptorChunks, summaryChunk } from '../src/enrichment/raptor/summary-chunks.js';
import { raptorAfterParse, TemporalRaptorJobs, type RaptorJobs } from '../src/enrichment/raptor/auto-start.js';

/** One pass of a dataset's RAPTOR task (a task runs another pass when its chunks changed meanwhile). */
export interface RaptorRef extends DatasetIndexInput {
  pass: number;
}

/** What a step adds to the task's counters. */
export interface RaptorCounts {
  done: number;
  model_calls: number;
  cached_calls: number;
  tokens: number;
}

export interface ClusterPlan {
  /** Items of the level (chunks at level 0, summaries above). */
  items: number;
  /** Clusters to summarise; 0 = every tree is complete. */
  clusters: number;
  batches: number;
  batchSize: number;
}

/** What the task works over, fixed when a pass starts (a settings change applies from the next run). */
interface RaptorJob {
  tenantId: string;
  settings: RaptorSettings;
  /** The chat model (canonical id) and the tokens its prompt may hold. */
  chatModel: string;
  contextTokens: number;
  embeddingModel: string;
  /** The trees: their document (scope dataset: the dataset). */
  trees: { documentId: string; documentName: string }[];
}

/** The items of one level: chunks (level 0) or summaries (level L = the summaries of layer L). */
interface LevelItems {
  /** Tree of each item (index into RaptorJob.trees). */
  trees: number[];
  texts: string[];
}

interface BatchInput {
  clusters: { tree: number; texts: string[] }[];
}

interface BatchOutput {
  /** Per cluster, its summary; null when the model's answer held none. */
  summaries: (string | null)[];
  trees: number[];
  counts: RaptorCounts;
}

/** Clusters summarised per activity, at least: one heartbeat-guarded unit of work. */
const SUMMARY_BATCH = 8;
/** A level never takes more activities than this (batches grow instead), to keep workflow history small. */
const MAX_BATCHES_PER_LEVEL = 200;
/** Model calls of one batch in flight at once. */
const SUMMARY_CONCURRENCY = 4;
/** Summaries embedded per embedding call. */
const EMBED_BATCH = 32;

/** What the steps need from their surroundings: Temporal's in a worker, plain functions in unit tests. */
export interface RaptorRuntime {
  heartbeat(details?: unknown): void;
  signal(): AbortSignal | undefined;
  jobs(): RaptorJobs;
  warn(message: string, details: Record<string, unknown>): void;
}

const temporalRuntime: RaptorRuntime = {
  heartbeat: (details) => heartbeat(details),
  signal: () => Context.current().cancellationSignal,
  // An activity of the parse role runs on that role's queue, which is the deployment's base queue.
  jobs: () => new TemporalRaptorJobs(() => Context.current().client, Context.current().info.taskQueue),
  warn: (message, details) => Context.current().log.warn(message, details),
};

const workPrefix = (ref: RaptorRef) => `${datasetBlobPrefix(ref.datasetId)}/work/raptor-${ref.taskId}-${ref.pass}`;
const jobKey = (ref: RaptorRef) => `${workPrefix(ref)}/job.json`;
const levelKey = (ref: RaptorRef, level: number) => `${workPrefix(ref)}/level-${level}`;
const batchKey = (ref: RaptorRef, level: number, batch: number) => `${levelKey(ref, level)}-batch-${batch}`;

/**
 * The steps of the raptorIndex workflow: prepare (the leaves), then per level cluster and summarise (in
 * batches), then write the summaries. Everything between steps lives in work files, never in workflow
 * history; every model answer is kept in the enrichment cache as it arrives.
 */
export function raptorActivities({ store, index, blobs, models }: ActivityDeps, runtime: RaptorRuntime = temporalRuntime) {
  const summaries = new RaptorChunks(index, blobs);

  async function report(ref: RaptorRef, progress: TaskProgress): Promise<void> {
    await store.enrichment.report(ref.datasetId, 'raptor', ref.taskId, progress);
  }

  /** Heartbeats every second while `run` works, and turns its failure into what Temporal should do. */
  async function working<T>(run: () => Promise<T>): Promise<T> {
    const timer = setInterval(() => runtime.heartbeat(), 1000);
    try {
      return await run();
    } catch (err) {
      throw asFailure(err, runtime.signal());
    } finally {
      clearInterval(timer);
    }
  }

  return {
    /** Records the task as running (again harmless: the starter may have done it). */
    async raptorBegin(input: DatasetIndexInput): Promise<void> {
      await store.enrichment.begin(input.datasetId, 'raptor', input.taskId);
    },

    /** Reads the settings and the leaves (the dataset's chunks) into the pass's work files. */
    async raptorPrepare(ref: RaptorRef & { progress: TaskProgress }): Promise<{ trees: number; chunks: number }> {
      return working(async () => {
        const dataset = await store.datasets.byId(ref.datasetId);
        if (!dataset) throw ApplicationFailure.nonRetryable(`dataset ${ref.datasetId} no longer exists`, 'DatasetGone');
        const parserConfig = JSON.parse(dataset.parser_config) as Record<string, unknown>;
        const settings = raptorSettings(parserConfig);
        const llmId = chatModelOf(parserConfig);
        const chat = llmId ? await models.providers.resolve(dataset.tenant_id, llmId, 'chat') : await models.providers.resolveDefault(dataset.tenant_id, 'chat');
        await report(ref, { ...ref.progress, stage: 'collecting chunks' });
        const groups = await collectSources({ store, index }, dataset, settings, () => runtime.heartbeat());
        const job: RaptorJob = {
          tenantId: dataset.tenant_id,
          settings,
          chatModel: chat.id,
          contextTokens: chat.max_tokens,
          embeddingModel: dataset.embedding_model,
          trees: groups.map((g) => ({ documentId: g.documentId, documentName: g.documentName })),
        };
        await writeJson(blobs, jobKey(ref), job);
        const leaves: LevelItems = { trees: groups.flatMap((g, t) => g.texts.map(() => t)), texts: groups.flatMap((g) => g.texts) };
        await writeLevel(ref, 0, leaves, groups.flatMap((g) => g.vectors));
        return { trees: groups.filter((g) => g.texts.length > 1).length, chunks: leaves.texts.length };
      });
    },

    /**
     * Gathers the level's items (level > 0: the summaries of the level below) and clusters each tree's,
     * writing one input file per batch of clusters. 0 clusters: every tree has its root.
     */
    async raptorCluster(ref: RaptorRef & { level: number; batchesBelow: number; progress: TaskProgress }): Promise<ClusterPlan> {
      return working(async () => {
        const job = await readJson<RaptorJob>(blobs, jobKey(ref));
        if (ref.level > 0) await gatherSummaries(ref, ref.level, ref.batchesBelow);
        const items = await readJson<LevelItems>(blobs, `${levelKey(ref, ref.level)}.json`);
        const vectors = (await readVectors(blobs, `${levelKey(ref, ref.level)}.bin`)) ?? [];
        const what = ref.level === 0 ? 'chunks' : 'summaries';
        await report(ref, { ...ref.progress, stage: `level ${ref.level + 1}: clustering ${items.texts.length} ${what}` });
        const byTree = job.trees.map((): number[] => []);
        items.trees.forEach((tree, i) => byTree[tree]!.push(i));
        const clusters: { tree: number; members: number[] }[] = [];
        for (const [tree, members] of byTree.entries()) {
          const found = await clusterVectors(members.map((i) => vectors[i]!), job.settings, () => runtime.heartbeat());
          clusters.push(...found.map((c) => ({ tree, members: c.map((j) => members[j]!) })));
        }
        const batchSize = Math.max(SUMMARY_BATCH, Math.ceil(clusters.length / MAX_BATCHES_PER_LEVEL));
        const batches = Math.ceil(clusters.length / batchSize);
        for (let b = 0; b < batches; b++) {
          const input: BatchInput = { clusters: clusters.slice(b * batchSize, (b + 1) * batchSize).map((c) => ({ tree: c.tree, texts: c.members.map((i) => items.texts[i]!) })) };
          await writeJson(blobs, `${batchKey(ref, ref.level, b)}-in.json`, input);
        }
        if (clusters.length) {
          await report(ref, { ...ref.progress, total: ref.progress.total + clusters.length, stage: `level ${ref.level + 1}: summarising 0/${clusters.length}` });
        }
        return { items: items.texts.length, clusters: clusters.length, batches, batchSize };
      });
    },

    /** Summarises one batch of clusters with the chat model (cached per call) and embeds the summaries. */
    async raptorSummarise(ref: RaptorRef & { level: number; batch: number; batchSize: number; clusters: number; progress: TaskProgress }): Promise<RaptorCounts> {
      return working(async () => {
        const outKey = `${batchKey(ref, ref.level, ref.batch)}-out`;
        const finished = await blobs.get(`${outKey}.json`);
        if (finished) return (JSON.parse(finished.toString('utf8')) as BatchOutput).counts;
        const job = await readJson<RaptorJob>(blobs, jobKey(ref));
        const input = await readJson<BatchInput>(blobs, `${batchKey(ref, ref.level, ref.batch)}-in.json`);
        const chat = await models.chat(job.tenantId, job.chatModel);
        const calls = input.clusters.map((c) => summaryCall(c.texts, job.settings, job.contextTokens));
        const counts: RaptorCounts = { done: 0, model_calls: 0, cached_calls: 0, tokens: 0 };
        let reporting = Promise.resolve();
        const results = await cachedCalls(store.enrichment, chat, calls, {
          tenantId: job.tenantId,
          concurrency: SUMMARY_CONCURRENCY,
          signal: runtime.signal(),
          onResult: (result) => {
            counts.done++;
            if (result.cached) counts.cached_calls++;
            else counts.model_calls++;
            counts.tokens += result.tokens;
            runtime.heartbeat({ done: counts.done });
            const progress = added(ref.progress, counts);
            const stage = `level ${ref.level + 1}: summarising ${ref.batch * ref.batchSize + counts.done}/${ref.clusters}`;
            reporting = reporting.then(() => report(ref, { ...progress, stage }));
          },
        });
        await reporting;
        const texts = results.map((r) => summaryText(r.text));
        const kept = texts.filter((t) => t !== '');
        const embedder = await models.embedding(job.tenantId, job.embeddingModel);
        const vectors: number[][] = [];
        for (let i = 0; i < kept.length; i += EMBED_BATCH) {
          vectors.push(...(await embedder.embed(kept.slice(i, i + EMBED_BATCH))));
          runtime.heartbeat({ embedded: vectors.length });
        }
        const output: BatchOutput = { summaries: texts.map((t) => t || null), trees: input.clusters.map((c) => c.tree), counts };
        // Vectors first: the JSON marks the batch finished.
        await writeVectors(blobs, `${outKey}.bin`, vectors);
        await writeJson(blobs, `${outKey}.json`, output);
        return counts;
      });
    },

    /** Makes the summaries of every level the dataset's RAPTOR chunks, replacing the previous ones. */
    async raptorWrite(ref: RaptorRef & { levels: number; progress: TaskProgress }): Promise<{ summaries: number }> {
      return working(async () => {
        // A dataset deleted meanwhile gets nothing written back into the index.
        if (!(await store.datasets.byId(ref.datasetId))) throw ApplicationFailure.nonRetryable(`dataset ${ref.datasetId} no longer exists`, 'DatasetGone');
        const job = await readJson<RaptorJob>(blobs, jobKey(ref));
        // Summaries of a document deleted meanwhile are dropped; a renamed one's carry its new name.
        const live = new Map((await store.documents.listByDataset(ref.datasetId)).map((d) => [d.id, d.name]));
        const chunks = [];
        for (let level = 1; level <= ref.levels; level++) {
          const items = await readJson<LevelItems>(blobs, `${levelKey(ref, level)}.json`);
          const vectors = (await readVectors(blobs, `${levelKey(ref, level)}.bin`)) ?? [];
          for (const [i, content] of items.texts.entries()) {
            const tree = job.trees[items.trees[i]!]!;
            const scopeDataset = tree.documentId === ref.datasetId;
            const documentName = scopeDataset ? tree.documentName : live.get(tree.documentId);
            if (documentName === undefined) continue;
            chunks.push(summaryChunk({ tenantId: job.tenantId, datasetId: ref.datasetId, documentId: tree.documentId, documentName, layer: level, content, vector: vectors[i]! }));
          }
        }
        await report(ref, { ...ref.progress, stage: `writing ${chunks.length} summaries` });
        await summaries.replace(ref.datasetId, chunks, (written) => runtime.heartbeat({ written }));
        const levels = Math.max(0, ...chunks.map((c) => c.raptor_layer ?? 0));
        const stage = chunks.length ? `done: ${chunks.length} summaries in ${levels} level${levels === 1 ? '' : 's'}` : 'done: no document has two chunks or more to summarise';
        await report(ref, { ...ref.progress, stage });
        return { summaries: chunks.length };
      });
    },

    async raptorFinish(input: DatasetIndexInput & { status: Exclude<TaskStatus, 'running'>; message?: string }): Promise<void> {
      await store.enrichment.finish(input.datasetId, 'raptor', input.taskId, input.status, input.message ?? '');
    },

    async raptorRemoveWork(ref: RaptorRef): Promise<void> {
      await blobs.deletePrefix(workPrefix(ref));
    },

    /**
     * After a document finished parsing: starts (or asks for one more pass of) its dataset's RAPTOR job when
     * RAPTOR is on. Never fails the parse: a failure is logged.
     */
    async raptorAfterParse(input: { documentId: string; force?: boolean }): Promise<void> {
      try {
        await raptorAfterParse(store, runtime.jobs(), input.documentId, input.force);
      } catch (err) {
        runtime.warn('could not start the RAPTOR job after parsing', { documentId: input.documentId, error: (err as Error).message });
      }
    },
  };

  async function writeLevel(ref: RaptorRef, level: number, items: LevelItems, vectors: number[][]): Promise<void> {
    await writeVectors(blobs, `${levelKey(ref, level)}.bin`, vectors);
    await writeJson(blobs, `${levelKey(ref, level)}.json`, items);
  }

  /** The summaries of the level below (its `batches` batches, in cluster order) become the level's items; empty answers are left out. */
  async function gatherSummaries(ref: RaptorRef, level: number, batches: number): Promise<void> {
    const items: LevelItems = { trees: [], texts: [] };
    const vectors: number[][] = [];
    for (let b = 0; b < batches; b++) {
      const key = `${batchKey(ref, level - 1, b)}-out`;
      const output = await readJson<BatchOutput>(blobs, `${key}.json`);
      const batchVectors = (await readVectors(blobs, `${key}.bin`)) ?? [];
      let v = 0;
      output.summaries.forEach((text, i) => {
        if (text === null) return;
        items.trees.push(output.trees[i]!);
        items.texts.push(text);
        vectors.push(batchVectors[v++]!);
      });
    }
    await writeLevel(ref, level, items, vectors);
  }
}

function added(progress: TaskProgress, counts: RaptorCounts): TaskProgress {
  return {
    ...progress,
    done: progress.done + counts.done,
    model_calls: progress.model_calls + counts.model_calls,
    cached_calls: progress.cached_calls + counts.cached_calls,
    tokens: progress.tokens + counts.tokens,
  };
}

/**
 * A model or configuration problem another attempt cannot fix (a 4xx from the provider, no chat model)
 * fails the task at once with its reason; a cancelled step reports cancellation; anything else is retried.
 */
function asFailure(err: unknown, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) return new CancelledFailure('the RAPTOR task was cancelled');
  if (err instanceof ModelError && err.status < 500) return ApplicationFailure.nonRetryable(err.message, 'ModelConfigurationError');
  if (err instanceof ApiError && err.status < 500) return ApplicationFailure.nonRetryable(err.message, 'BadRequest');
  return err;
}
