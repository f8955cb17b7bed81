import { Gauge, Registry } from 'prom-client';
import type { CacheSize } from '../index/chunks/chunk-index.js';
import { builtinChatStatus } from '../models/builtin/chat-model.js';
import { embeddingProcessStatus } from '../models/builtin/host.js';
import { RUN_STATES, type RunState } from '../store/documents.js';
import { withTimeout } from '../time.js';

/** Where one Cairn instance's gauges come from; each is read once per scrape. */
export interface ServiceMetricSources {
  /** Documents per run state (the metadata store). */
  documentsByRun(): Promise<Record<RunState, number>>;
  /** Agent runs per Temporal execution status (visibility). */
  agentRunsByStatus(): Promise<Map<string, number>>;
  /** Memory extraction tasks (one per turn) by state: Running, Completed, Failed (the metadata store). */
  memoryExtractionsByStatus(): Promise<Map<string, number>>;
  /** In-memory caches (chunk index, model clients, tokenizer). */
  caches(): Promise<CacheSize[]>;
}

/** A source that does not answer within this is reported down for the scrape, so one slow store cannot stall it. */
export const SOURCE_TIMEOUT_MS = 2000;

/** Every execution status Temporal reports; all are exported (0 when none), so series do not come and go. */
const TEMPORAL_STATUSES = ['Running', 'Completed', 'Failed', 'Canceled', 'Terminated', 'ContinuedAsNew', 'TimedOut'];
const CHAT_ENGINE_STATES = ['not_loaded', 'loading', 'loaded', 'failed'] as const;

type SourceName = 'metadata_store' | 'temporal' | 'caches';

interface Snapshot {
  documents?: Record<RunState, number>;
  agentRuns?: Map<string, number>;
  memoryExtractions?: Map<string, number>;
  caches?: CacheSize[];
  up: Record<SourceName, number>;
}

/**
 * The gauges of one Cairn instance: documents by run state, agent runs by status, cache sizes, the
 * built-in models' state, and whether each source answered. All gauges of a scrape share one read
 * of the sources (prom-client collects every metric of a scrape at once).
 */
export function serviceMetrics(sources: ServiceMetricSources, onSourceError: (source: string, err: unknown) => void = () => {}): Registry {
  const registry = new Registry();
  const registers = [registry];

  let inFlight: Promise<Snapshot> | undefined;
  const snapshot = () => (inFlight ??= readSources(sources, onSourceError).finally(() => (inFlight = undefined)));

  new Gauge({
    name: 'cairn_metrics_source_up',
    help: `1 when the source answered for this scrape; 0 when it failed or took over ${SOURCE_TIMEOUT_MS} ms, and the metrics it feeds are left out.`,
    labelNames: ['source'] as const,
    registers,
    async collect() {
      const { up } = await snapshot();
      for (const [source, value] of Object.entries(up)) this.set({ source }, value);
    },
  });

  new Gauge({
    name: 'cairn_documents',
    help: 'Documents by parse run state (UNSTART, RUNNING, CANCEL, DONE, FAIL), over all datasets.',
    labelNames: ['run'] as const,
    registers,
    async collect() {
      this.reset();
      const { documents } = await snapshot();
      if (documents) for (const run of RUN_STATES) this.set({ run }, documents[run]);
    },
  });

  new Gauge({
    name: 'cairn_agent_runs',
    help: "Agent runs (agentRun workflows on this deployment's agent task queue) by Temporal execution status; closed ones count while within the namespace's retention.",
    labelNames: ['status'] as const,
    registers,
    async collect() {
      this.reset();
      const { agentRuns } = await snapshot();
      if (!agentRuns) return;
      for (const status of new Set([...TEMPORAL_STATUSES, ...agentRuns.keys()])) this.set({ status }, agentRuns.get(status) ?? 0);
    },
  });

  new Gauge({
    name: 'cairn_memory_extractions',
    help: "Memory extraction tasks, one per message added to a memory (its task row, kept while the message is), by state: Running (queued or being extracted), Completed (items stored, none found, or a memory that extracts nothing), Failed (the reason on the message's task).",
    labelNames: ['status'] as const,
    registers,
    async collect() {
      this.reset();
      const { memoryExtractions } = await snapshot();
      if (!memoryExtractions) return;
      for (const [status, n] of memoryExtractions) this.set({ status }, n);
    },
  });

  new Gauge({
    name: 'cairn_cache_entries',
    help: 'Entries held by each in-memory cache (sign_bits: vectors; term_frequencies, stems: words; model_clients: clients).',
    labelNames: ['cache'] as const,
    registers,
    async collect() {
      this.reset();
      for (const c of (await snapshot()).caches ?? []) this.set({ cache: c.name }, c.entries);
    },
  });

  new Gauge({
    name: 'cairn_cache_bytes',
    help: 'Bytes held by the in-memory caches that know their size.',
    labelNames: ['cache'] as const,
    registers,
    async collect() {
      this.reset();
      for (const c of (await snapshot()).caches ?? []) if (c.bytes !== undefined) this.set({ cache: c.name }, c.bytes);
    },
  });

  new Gauge({
    name: 'cairn_builtin_chat_model_state',
    help: 'The built-in chat model in this process: 1 for its current state (not_loaded, loading, loaded, failed), 0 for the others.',
    labelNames: ['model', 'state'] as const,
    registers,
    collect() {
      const status = builtinChatStatus();
      for (const state of CHAT_ENGINE_STATES) this.set({ model: status.model, state }, status.state === state ? 1 : 0);
    },
  });

  new Gauge({
    name: 'cairn_builtin_chat_model_memory_bytes',
    help: "The built-in chat model's weights, KV cache and compute buffers (0 until loaded).",
    labelNames: ['model'] as const,
    registers,
    collect() {
      const status = builtinChatStatus();
      this.set({ model: status.model }, status.memory_bytes);
    },
  });

  new Gauge({
    name: 'cairn_builtin_chat_model_requests',
    help: 'Requests of the built-in chat model generating (active) and waiting for a sequence (queued).',
    labelNames: ['model', 'phase'] as const,
    registers,
    collect() {
      const status = builtinChatStatus();
      this.set({ model: status.model, phase: 'active' }, status.active);
      this.set({ model: status.model, phase: 'queued' }, status.queued);
    },
  });

  new Gauge({
    name: 'cairn_builtin_embedding_worker_running',
    help: "1 while this process's built-in embedding process is running (it starts on first use and ends after CAIRN_EMBED_IDLE_SEC idle).",
    registers,
    collect() {
      this.set(embeddingProcessStatus().running ? 1 : 0);
    },
  });

  new Gauge({
    name: 'cairn_builtin_embedding_pending_batches',
    help: 'Requests sent to the built-in embedding process and not yet answered.',
    registers,
    collect() {
      this.set(embeddingProcessStatus().pending);
    },
  });

  return registry;
}

async function readSources(sources: ServiceMetricSources, onError: (source: string, err: unknown) => void): Promise<Snapshot> {
  const up = { metadata_store: 0, temporal: 0, caches: 0 };
  const read = async <T>(source: SourceName, load: () => Promise<T>): Promise<T | undefined> => {
    try {
      const value = await withTimeout(Promise.resolve().then(load), SOURCE_TIMEOUT_MS);
      up[source] = 1;
      return value;
    } catch (err) {
      onError(source, err);
      return undefined;
    }
  };
  // Both metadata store counts are one source: it is up when both answered.
  const metadata = () => Promise.all([sources.documentsByRun(), sources.memoryExtractionsByStatus()]);
  const [counts, agentRuns, caches] = await Promise.all([
    read('metadata_store', metadata),
    read('temporal', sources.agentRunsByStatus),
    read('caches', sources.caches),
  ]);
  return { documents: counts?.[0], agentRuns, memoryExtractions: counts?.[1], caches, up };
}
