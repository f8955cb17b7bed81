import type { ClusterSettings } from './cluster.js';

/** RAGFlow's default RAPTOR prompt; `{cluster_content}` is replaced by the cluster's texts. */
export const DEFAULT_RAPTOR_PROMPT = [
  'Summarize the paragraphs below without inventing facts or changing numbers.',
  'Output exactly two parts in the same language as the source:',
  '1. First line: a concise title only.',
  '2. Following lines: a concise summary of the content.',
  'Do not output labels, Markdown headings, bullet points, or any other commentary.',
  '',
  'Paragraphs:',
  '{cluster_content}',
].join('\n');

export type RaptorScope = 'file' | 'dataset';

/** parser_config.raptor with RAGFlow's defaults filled in. */
export interface RaptorSettings extends ClusterSettings {
  prompt: string;
  /** The most tokens a summary may have (the model's max_tokens). */
  maxToken: number;
  /** file: one tree per document; dataset: one tree over all the dataset's chunks. */
  scope: RaptorScope;
  /** auto_disable_for_structured_data: leave spreadsheets and tables (rows, not prose) out of the trees. */
  skipStructured: boolean;
}

export const RAPTOR_DEFAULTS: RaptorSettings = {
  prompt: DEFAULT_RAPTOR_PROMPT,
  maxToken: 512,
  threshold: 0.3,
  ratio: 0.5,
  maxCluster: 64,
  seed: 0,
  scope: 'file',
  skipStructured: false,
};

function raptorSection(parserConfig: Record<string, unknown>): Record<string, unknown> {
  const raptor = parserConfig.raptor;
  return raptor && typeof raptor === 'object' && !Array.isArray(raptor) ? (raptor as Record<string, unknown>) : {};
}

const numberOr = (value: unknown, fallback: number) => (typeof value === 'number' && Number.isFinite(value) ? value : fallback);

/** The RAPTOR settings of a (validated) parser_config; absent keys take RAGFlow's defaults. */
export function raptorSettings(parserConfig: Record<string, unknown>): RaptorSettings {
  const r = raptorSection(parserConfig);
  return {
    prompt: typeof r.prompt === 'string' && r.prompt.trim() ? r.prompt : RAPTOR_DEFAULTS.prompt,
    maxToken: numberOr(r.max_token, RAPTOR_DEFAULTS.maxToken),
    threshold: numberOr(r.clustering_threshold, RAPTOR_DEFAULTS.threshold),
    ratio: numberOr(r.clustering_ratio, RAPTOR_DEFAULTS.ratio),
    maxCluster: numberOr(r.max_cluster, RAPTOR_DEFAULTS.maxCluster),
    seed: numberOr(r.random_seed, RAPTOR_DEFAULTS.seed),
    scope: r.scope === 'dataset' ? 'dataset' : 'file',
    skipStructured: r.auto_disable_for_structured_data === true,
  };
}

/** Whether a parser_config turns RAPTOR on (`raptor.use_raptor: true`). */
export function raptorEnabled(parserConfig: Record<string, unknown>): boolean {
  return raptorSection(parserConfig).use_raptor === true;
}

/** The chat model a parser_config names (`llm_id`), if any; otherwise the tenant's default is used. */
export function chatModelOf(parserConfig: Record<string, unknown>): string | undefined {
  return typeof parserConfig.llm_id === 'string' && parserConfig.llm_id.trim() ? parserConfig.llm_id : undefined;
}
