import type { MetaStore } from '../../store/index.js';
import type { ChunkIndex } from '../../index/chunks/chunk-index.js';
import type { ModelClients } from '../../services/model-clients.js';
import type { ChatModel } from '../../models/types.js';
import type { TaskProgress } from '../../store/enrichment.js';
import { newId } from '../../ids.js';
import { cachedCalls, type CallResult } from '../cached-calls.js';
import { callTimeoutMs, graphSettings, type GraphSettings } from './settings.js';
import { batchCount, chunksPerBatch, type ChunkSegment, type PlannedDocument } from './batches.js';
import { extractionUnits, type SourceChunk } from './units.js';
import { communityCall, extractionCall, gleaningCall, PAIRS_PER_CALL, resolutionCall } from './prompts.js';
import { parseCommunityReport, parseExtraction, parseResolution } from './answers.js';
import { mergeExtractions } from './merge.js';
import { applyMerges, resolutionCandidates } from './resolution.js';
import { communities as detectCommunities, pagerank } from './algorithms.js';
import { withCallTimeout } from './call-timeout.js';
import type { GraphCommunity, GraphEntity, UnitExtraction } from './types.js';

/** A graph job's identity: the dataset, its task row and the build it writes. */
export interface GraphJobRef {
  datasetId: string;
  tenantId: string;
  taskId: string;
  buildId: string;
}

/** The task's progress, plus what the model answered that could not be used. */
export interface GraphProgress extends TaskProgress {
  /** Answers that were not one valid JSON object (what could be read was used). */
  malformed: number;
  /** Entities, relations and reports dropped as unusable. */
  skipped: number;
}

export interface GraphPlan {
  buildId: string;
  settings: GraphSettings;
  documents: PlannedDocument[];
  totalChunks: number;
  perBatch: number;
  batches: number;
  /** Chunk tokens per extraction call. */
  unitBudget: number;
  /** Answer tokens per extraction call. */
  answerTokens: number;
  progress: GraphProgress;
}

/** How a step runs: cancellation, progress callbacks, model calls at once. */
export interface StepHooks {
  signal?: AbortSignal;
  onProgress?: (progress: GraphProgress) => void;
  concurrency: number;
}

/** The dataset was deleted while its job ran. */
export class DatasetGoneError extends Error {
  constructor(datasetId: string) {
    super(`dataset ${datasetId} no longer exists`);
    this.name = 'DatasetGoneError';
  }
}

/** No chat model to ask: the job cannot run until one is configured. */
export class NoChatModelError extends Error {
  constructor(cause: string) {
    super(`the knowledge graph needs a chat model (parser_config.llm_id or the tenant's default chat model): ${cause}`);
    this.name = 'NoChatModelError';
  }
}

/** Louvain's node order seed: the same graph always gives the same communities. */
export const COMMUNITY_SEED = 0xdeadbeef;
/** Chunks read from the index per page. */
const PAGE = 64;
const MAX_ANSWER_TOKENS = 2048;

export function emptyProgress(stage: string): GraphProgress {
  return { stage, done: 0, total: 0, model_calls: 0, cached_calls: 0, tokens: 0, malformed: 0, skipped: 0 };
}

function counted(p: GraphProgress, r: CallResult): GraphProgress {
  return { ...p, model_calls: p.model_calls + (r.cached ? 0 : 1), cached_calls: p.cached_calls + (r.cached ? 1 : 0), tokens: p.tokens + r.tokens };
}

/**
 * The steps of a dataset's graph job (workflow graphIndex): plan, extract batch by batch, merge, resolve
 * entities, rank and find communities, report communities, publish. Every step reads what the previous
 * ones stored under the build id, so each is an activity of its own that can run again after a crash;
 * every model call goes through the enrichment cache.
 */
export class GraphJobs {
  constructor(private readonly deps: { store: MetaStore; index: ChunkIndex; models: ModelClients }) {}

  /**
   * A job started without a task id (after a parse) records its task here, before anything can fail, so
   * its failure is reported too. '' when the dataset is gone.
   */
  async claim(input: { datasetId: string }): Promise<string> {
    if (!(await this.deps.store.datasets.byId(input.datasetId))) return '';
    const taskId = newId();
    await this.deps.store.enrichment.begin(input.datasetId, 'graph', taskId);
    return taskId;
  }

  /**
   * Settles what the job reads: the settings, the parsed documents in order with their chunk counts, the
   * token budget of a call (bounded by the model's context). Undefined when the dataset is gone.
   */
  async plan(input: { datasetId: string; tenantId: string; taskId: string }): Promise<GraphPlan | undefined> {
    const { store, index, models } = this.deps;
    const ds = await store.datasets.byId(input.datasetId);
    if (!ds || ds.status !== 'active') return undefined;
    const settings = graphSettings(JSON.parse(ds.parser_config) as Record<string, unknown>);
    const resolved = await (settings.llmId ? models.providers.resolve(ds.tenant_id, settings.llmId, 'chat') : models.providers.resolveDefault(ds.tenant_id, 'chat')).catch((err: Error) => {
      throw new NoChatModelError(err.message);
    });
    const room = resolved.max_tokens > 0 ? Math.floor(resolved.max_tokens * 0.4) : Number.MAX_SAFE_INTEGER;
    const { taskId } = input;
    const docs = (await store.documents.listByDataset(ds.id)).filter((d) => d.run === 'DONE').sort((a, b) => a.create_time - b.create_time || a.id.localeCompare(b.id));
    const documents: PlannedDocument[] = [];
    for (const d of docs) {
      const chunks = await index.countByDocument(d.id);
      if (chunks > 0) documents.push({ id: d.id, chunks });
    }
    const totalChunks = documents.reduce((n, d) => n + d.chunks, 0);
    const perBatch = chunksPerBatch(totalChunks);
    // After the chunks: the merge, the resolution, the ranking; communities are added once known.
    const steps = 2 + (settings.resolution ? 1 : 0);
    const progress = { ...emptyProgress(`extracting entities and relations from ${totalChunks} chunks`), total: totalChunks + steps };
    await this.report({ ...input, taskId }, progress);
    return {
      buildId: newId(),
      settings,
      documents,
      totalChunks,
      perBatch,
      batches: batchCount(totalChunks, perBatch),
      unitBudget: Math.max(64, Math.min(settings.batchTokens, room)),
      answerTokens: Math.max(256, Math.min(MAX_ANSWER_TOKENS, room)),
      progress,
    };
  }

  /** Extracts entities and relations from one batch of chunks and stores what each call found. */
  async extractBatch(
    ref: GraphJobRef,
    input: { settings: GraphSettings; batch: number; segments: ChunkSegment[]; unitBudget: number; answerTokens: number; progress: GraphProgress },
    hooks: StepHooks,
  ): Promise<GraphProgress> {
    const { settings } = input;
    await this.live(ref.datasetId);
    const units = extractionUnits(await this.readSegments(input.segments), input.unitBudget);
    const read = input.segments.reduce((n, s) => n + s.count, 0);
    let p: GraphProgress = { ...input.progress };
    if (units.length) {
      const model = await this.chat(ref.tenantId, settings, callTimeoutMs(settings, Math.max(...units.map((u) => u.chunkIds.length))));
      const glean = settings.method === 'general';
      const calls = units.map((u) => {
        const call = extractionCall(u.text, settings.entityTypes, settings.method);
        return { ...call, options: { ...call.options, max_tokens: input.answerTokens } };
      });
      const run = { tenantId: ref.tenantId, concurrency: hooks.concurrency, signal: hooks.signal };
      const first = await cachedCalls(this.deps.store.enrichment, model, calls, {
        ...run,
        onResult: (r, i) => {
          p = counted(p, r);
          if (!glean) p.done += units[i]!.chunkIds.length;
          hooks.onProgress?.(p);
        },
      });
      const second = glean
        ? await cachedCalls(this.deps.store.enrichment, model, calls.map((c, i) => gleaningCall(c, first[i]!.text)), {
            ...run,
            onResult: (r, i) => {
              p = counted(p, r);
              p.done += units[i]!.chunkIds.length;
              hooks.onProgress?.(p);
            },
          })
        : [];
      const found: (UnitExtraction & { key: string })[] = units.map((u, i) => {
        const unit = { key: u.key, seq: input.batch * 1_000_000 + i, chunkIds: u.chunkIds, entities: [] as UnitExtraction['entities'], relations: [] as UnitExtraction['relations'] };
        for (const answer of [first[i]!.text, ...(glean ? [second[i]!.text] : [])]) {
          const parsed = parseExtraction(answer, settings.method !== 'ner');
          unit.entities.push(...parsed.entities);
          unit.relations.push(...parsed.relations);
          p.skipped += parsed.skipped;
          if (parsed.malformed) p.malformed++;
        }
        return unit;
      });
      await this.deps.store.graph.saveExtractions(ref.datasetId, ref.buildId, found);
    }
    // Chunks without text (or unavailable ones) count as done too.
    p.done = input.progress.done + read;
    return p;
  }

  /** Merges every extraction of the build into one graph. */
  async merge(ref: GraphJobRef, progress: GraphProgress): Promise<GraphProgress> {
    await this.live(ref.datasetId);
    const graph = mergeExtractions(await this.deps.store.graph.extractions(ref.buildId));
    await this.deps.store.graph.saveGraph(ref.datasetId, ref.buildId, graph);
    const p = { ...progress, done: progress.done + 1, stage: `merged: ${graph.entities.length} entities, ${graph.relations.length} relations` };
    await this.report(ref, p);
    return p;
  }

  /**
   * Entity resolution: near-duplicate names of one type merged, by rule or confirmed by the model (see
   * resolution.ts). An answer that cannot be read confirms nothing.
   */
  async resolve(ref: GraphJobRef, settings: GraphSettings, progress: GraphProgress, hooks: StepHooks): Promise<GraphProgress> {
    const { store } = this.deps;
    await this.live(ref.datasetId);
    const graph = await store.graph.graph(ref.buildId);
    const { rule, fuzzy } = resolutionCandidates(graph);
    let p: GraphProgress = { ...progress, stage: `resolving entities: ${rule.length} merged by rule, ${fuzzy.length} pairs to confirm` };
    await this.report(ref, p);
    const byId = new Map(graph.entities.map((e) => [e.id, e]));
    const groups: [string, string][][] = [];
    for (let i = 0; i < fuzzy.length; i += PAIRS_PER_CALL) groups.push(fuzzy.slice(i, i + PAIRS_PER_CALL));
    const confirmed: [string, string][] = [];
    if (groups.length) {
      const model = await this.chat(ref.tenantId, settings, callTimeoutMs(settings, 1));
      const calls = groups.map((g) => resolutionCall(g.map(([a, b]) => [byId.get(a)!, byId.get(b)!] as [GraphEntity, GraphEntity])));
      const answers = await cachedCalls(store.enrichment, model, calls, {
        tenantId: ref.tenantId,
        concurrency: hooks.concurrency,
        signal: hooks.signal,
        onResult: (r) => {
          p = counted(p, r);
          hooks.onProgress?.(p);
        },
      });
      answers.forEach((a, i) => {
        const yes = parseResolution(a.text, groups[i]!.length);
        for (const j of yes) confirmed.push(groups[i]![j]!);
      });
    }
    const resolved = applyMerges(graph, [...rule, ...confirmed]);
    await store.graph.saveGraph(ref.datasetId, ref.buildId, resolved);
    p = { ...p, done: p.done + 1, stage: `resolved: ${graph.entities.length - resolved.entities.length} entities merged (${rule.length} by rule, ${confirmed.length} of ${fuzzy.length} confirmed by the model)` };
    await this.report(ref, p);
    return p;
  }

  /** PageRank of every entity and, when asked, the communities (Louvain) to report on. */
  async analyse(ref: GraphJobRef, settings: GraphSettings, progress: GraphProgress): Promise<{ progress: GraphProgress; communities: number }> {
    const { store } = this.deps;
    const graph = await store.graph.graph(ref.buildId);
    const ranks = pagerank(graph);
    const membership = settings.community ? detectCommunities(graph, COMMUNITY_SEED) : new Map<string, number>();
    const entities = graph.entities.map((e) => ({ ...e, pagerank: ranks.get(e.id) ?? 0, community: membership.get(e.id) ?? -1 }));
    await store.graph.saveGraph(ref.datasetId, ref.buildId, { entities, relations: graph.relations });
    const groups = new Map<number, GraphEntity[]>();
    for (const e of entities) {
      if (e.community < 0) continue;
      const group = groups.get(e.community);
      if (group) group.push(e);
      else groups.set(e.community, [e]);
    }
    const sources = [...groups.values()].map((members) => new Set(members.flatMap((m) => m.sourceIds)).size);
    const most = Math.max(1, ...sources);
    const communities: GraphCommunity[] = [...groups.entries()].map(([id, members], i) => ({
      id,
      entityIds: [...members].sort((a, b) => b.pagerank - a.pagerank).map((m) => m.id),
      weight: sources[i]! / most,
      title: '',
      summary: '',
      findings: [],
      rating: 0,
    }));
    await store.graph.saveCommunities(ref.datasetId, ref.buildId, communities);
    const p = {
      ...progress,
      done: progress.done + 1,
      total: progress.total + communities.length,
      stage: settings.community ? `ranked; ${communities.length} communities to report on` : 'ranked',
    };
    await this.report(ref, p);
    return { progress: p, communities: communities.length };
  }

  /** Asks the model for the reports of communities [from, to); an unusable answer leaves that community without one. */
  async reportCommunities(ref: GraphJobRef, settings: GraphSettings, range: { from: number; to: number }, progress: GraphProgress, hooks: StepHooks): Promise<GraphProgress> {
    const { store } = this.deps;
    await this.live(ref.datasetId);
    const list = await store.graph.communities(ref.buildId, range.from, range.to);
    const graph = await store.graph.graph(ref.buildId);
    const byId = new Map(graph.entities.map((e) => [e.id, e]));
    const relations = [...graph.relations].sort((a, b) => b.weight - a.weight);
    let p: GraphProgress = { ...progress, stage: `reporting on communities ${range.from + 1}-${Math.min(range.to, range.from + list.length)}` };
    if (!list.length) return p;
    const model = await this.chat(ref.tenantId, settings, callTimeoutMs(settings, 1));
    const calls = list.map((c) => {
      const members = c.entityIds.map((id) => byId.get(id)).filter((e): e is GraphEntity => !!e);
      const ids = new Set(c.entityIds);
      return communityCall(members, relations.filter((r) => ids.has(r.source) && ids.has(r.target)));
    });
    const answers = await cachedCalls(store.enrichment, model, calls, {
      tenantId: ref.tenantId,
      concurrency: hooks.concurrency,
      signal: hooks.signal,
      onResult: (r) => {
        p = counted(p, r);
        p.done++;
        hooks.onProgress?.(p);
      },
    });
    for (const [i, a] of answers.entries()) {
      const report = parseCommunityReport(a.text);
      if (report) await store.graph.saveReport(ref.buildId, list[i]!.id, report);
      else {
        p.malformed++;
        p.skipped++;
      }
    }
    await this.report(ref, p);
    return p;
  }

  /** Makes the build the dataset's graph; returns the task's closing message. */
  async publish(ref: GraphJobRef, progress: GraphProgress): Promise<string> {
    const { store } = this.deps;
    const counts = await store.graph.counts(ref.buildId);
    await store.graph.publish(ref.datasetId, ref.buildId, ref.taskId, counts);
    const unusable = progress.malformed || progress.skipped ? `; ${progress.malformed} malformed answer(s), ${progress.skipped} unusable item(s) skipped` : '';
    const message = `Done: ${counts.entities} entities, ${counts.relations} relations, ${counts.communities} community reports${unusable}`;
    await this.report(ref, { ...progress, done: progress.total, stage: message });
    return message;
  }

  /** Ends the task; a build that was not published is removed. */
  async finish(ref: GraphJobRef | (Omit<GraphJobRef, 'buildId'> & { buildId?: string }), status: 'done' | 'failed' | 'cancelled', message = ''): Promise<void> {
    const { store } = this.deps;
    if (status !== 'done' && ref.buildId) await store.graph.discard(ref.datasetId, ref.buildId);
    await store.enrichment.finish(ref.datasetId, 'graph', ref.taskId, status, message);
  }

  async report(ref: { datasetId: string; taskId: string }, progress: GraphProgress): Promise<void> {
    await this.deps.store.enrichment.report(ref.datasetId, 'graph', ref.taskId, progress);
  }

  /** Throws DatasetGoneError once the dataset is deleted (or being deleted): the job stops asking the model. */
  private async live(datasetId: string): Promise<void> {
    const ds = await this.deps.store.datasets.byId(datasetId);
    if (!ds || ds.status !== 'active') throw new DatasetGoneError(datasetId);
  }

  private async chat(tenantId: string, settings: GraphSettings, timeoutMs: number): Promise<ChatModel> {
    const model = await this.deps.models.chat(tenantId, settings.llmId).catch((err: Error) => {
      throw new NoChatModelError(err.message);
    });
    return withCallTimeout(model, timeoutMs);
  }

  /** The available chunks of the segments, in order, without RAPTOR's summaries. */
  private async readSegments(segments: ChunkSegment[]): Promise<SourceChunk[]> {
    const out: SourceChunk[] = [];
    for (const s of segments) {
      const first = Math.floor(s.offset / PAGE);
      const last = Math.floor((s.offset + s.count - 1) / PAGE);
      for (let page = first; page <= last; page++) {
        const { chunks } = await this.deps.index.list(s.documentId, { page: page + 1, pageSize: PAGE });
        chunks.forEach((c, i) => {
          const position = page * PAGE + i;
          // RAPTOR's summaries are listed under their document too: the graph is built from the document's own chunks.
          if (position < s.offset || position >= s.offset + s.count || !c.available || c.raptor_layer) return;
          out.push({ id: c.id, documentId: c.document_id, content: c.content });
        });
      }
    }
    return out;
  }
}
