/**
 * The knowledge-graph settings of a dataset: parser_config.graphrag (RAGFlow's GraphRAG block) and, for
 * the `knowledge_graph` chunk method, its top-level entity_types. Every field of the block has a job here:
 * the retry and timeout fields become the Temporal retry policy and the activity / model-call timeouts.
 */

export type GraphMethod = 'light' | 'general' | 'ner';

export interface GraphSettings {
  /** The user turned the graph on (a finished parse then starts the dataset's graph job). */
  enabled: boolean;
  entityTypes: string[];
  /** light: one extraction call per group of chunks; general: plus one "what was missed" pass; ner: entities only. */
  method: GraphMethod;
  resolution: boolean;
  community: boolean;
  /** Most chunk tokens one extraction call reads (chunks are grouped up to this). */
  batchTokens: number;
  /** Temporal attempts of a step (model calls included) before the job fails. */
  retryAttempts: number;
  retryBackoffSeconds: number;
  retryBackoffMaxSeconds: number;
  /** A model call over n chunks may take max(minCallSeconds, perChunkSeconds × n). */
  perChunkSeconds: number;
  minCallSeconds: number;
  mergeSeconds: number;
  resolutionSeconds: number;
  communitySeconds: number;
  /** parser_config.llm_id: the dataset's chat model, else the tenant's default. */
  llmId: string | null;
}

/** RAGFlow's defaults (reference §2, the naive parser_config's graphrag block). */
export const DEFAULT_ENTITY_TYPES = ['organization', 'person', 'geo', 'event', 'category'];

const DEFAULTS = {
  method: 'light' as GraphMethod,
  batchTokens: 4096,
  retryAttempts: 2,
  retryBackoffSeconds: 2,
  retryBackoffMaxSeconds: 60,
  perChunkSeconds: 300,
  minCallSeconds: 600,
  mergeSeconds: 180,
  resolutionSeconds: 1800,
  communitySeconds: 1800,
};

/** Entity types are short labels; the prompt lists at most this many. */
const MAX_ENTITY_TYPES = 32;

function num(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

function types(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const seen = new Set<string>();
  const out: string[] = [];
  for (const v of value) {
    const t = typeof v === 'string' ? v.trim().toLowerCase() : '';
    if (!t || seen.has(t)) continue;
    seen.add(t);
    out.push(t);
  }
  return out.length ? out.slice(0, MAX_ENTITY_TYPES) : undefined;
}

/**
 * The settings of a dataset's (merged) parser_config. Entity types: graphrag.entity_types, else the
 * top-level entity_types of the `knowledge_graph` shape, else RAGFlow's defaults.
 */
export function graphSettings(parserConfig: Record<string, unknown>): GraphSettings {
  const g = (parserConfig.graphrag && typeof parserConfig.graphrag === 'object' ? parserConfig.graphrag : {}) as Record<string, unknown>;
  const method = g.method === 'general' || g.method === 'ner' ? g.method : DEFAULTS.method;
  const llmId = typeof parserConfig.llm_id === 'string' && parserConfig.llm_id.trim() ? parserConfig.llm_id.trim() : null;
  return {
    enabled: g.use_graphrag === true,
    entityTypes: types(g.entity_types) ?? types(parserConfig.entity_types) ?? DEFAULT_ENTITY_TYPES,
    method,
    resolution: g.resolution === true,
    community: g.community === true,
    batchTokens: Math.max(1, Math.floor(num(g.batch_chunk_token_size, DEFAULTS.batchTokens))),
    retryAttempts: Math.max(1, Math.floor(num(g.retry_attempts, DEFAULTS.retryAttempts))),
    retryBackoffSeconds: num(g.retry_backoff_seconds, DEFAULTS.retryBackoffSeconds),
    retryBackoffMaxSeconds: num(g.retry_backoff_max_seconds, DEFAULTS.retryBackoffMaxSeconds),
    perChunkSeconds: num(g.build_subgraph_timeout_per_chunk_seconds, DEFAULTS.perChunkSeconds),
    minCallSeconds: num(g.build_subgraph_min_timeout_seconds, DEFAULTS.minCallSeconds),
    mergeSeconds: num(g.merge_timeout_seconds, DEFAULTS.mergeSeconds),
    resolutionSeconds: num(g.resolution_timeout_seconds, DEFAULTS.resolutionSeconds),
    communitySeconds: num(g.community_timeout_seconds, DEFAULTS.communitySeconds),
    llmId,
  };
}

/** How long one extraction call over `chunks` chunks may take, in ms (at least one second). */
export function callTimeoutMs(settings: GraphSettings, chunks: number): number {
  return Math.max(1000, Math.max(settings.minCallSeconds, settings.perChunkSeconds * Math.max(1, chunks)) * 1000);
}
