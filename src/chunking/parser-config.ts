import { CHUNK_METHODS } from './methods.js';

/**
 * parser_config per chunk method, as the spec's "Parser config shapes by chunk_method" table gives
 * them. knowledge_graph is not a chunk method of its own here but has a config shape in the spec.
 */
export const PARSER_CONFIG_METHODS = [...CHUNK_METHODS, 'knowledge_graph'] as const;
export type ParserConfigMethod = (typeof PARSER_CONFIG_METHODS)[number];

/** Datasets and documents share shapes; only naive's chunk_token_num default differs. */
export type ParserConfigLevel = 'dataset' | 'document';

export type ParserConfig = Record<string, unknown>;

const RAPTOR_OFF = (): ParserConfig => ({ raptor: { use_raptor: false } });

const DEFAULTS: Record<ParserConfigMethod, (level: ParserConfigLevel) => ParserConfig> = {
  naive: (level) => ({
    chunk_token_num: level === 'dataset' ? 512 : 128,
    delimiter: '\n',
    html4excel: false,
    layout_recognize: true,
    raptor: { use_raptor: false },
    parent_child: { use_parent_child: false, children_delimiter: '\n' },
  }),
  qa: RAPTOR_OFF,
  manual: RAPTOR_OFF,
  paper: RAPTOR_OFF,
  book: RAPTOR_OFF,
  laws: RAPTOR_OFF,
  presentation: RAPTOR_OFF,
  table: () => ({}),
  picture: () => ({}),
  one: () => ({}),
  email: () => ({}),
  tag: () => ({}),
  knowledge_graph: () => ({
    chunk_token_num: 128,
    delimiter: '\n',
    entity_types: ['organization', 'person', 'location', 'event', 'time'],
  }),
};

export function isParserConfigMethod(value: unknown): value is ParserConfigMethod {
  return typeof value === 'string' && (PARSER_CONFIG_METHODS as readonly string[]).includes(value);
}

/**
 * A fresh copy of the method's default parser_config at the given level. Takes any string because
 * methods arrive from requests and stored rows; an unknown one throws.
 */
export function defaultParserConfig(method: ParserConfigMethod | string, level: ParserConfigLevel): ParserConfig {
  if (!isParserConfigMethod(method)) throw new Error(`unknown chunk method: ${method}`);
  return DEFAULTS[method](level);
}

/** RAGFlow raises a smaller raptor.max_token to this instead of rejecting it. */
const RAPTOR_MIN_MAX_TOKEN = 512;

/**
 * The method's defaults with `given` deep-merged over them: objects merge key by key, anything else
 * (arrays included) replaces the default; undefined leaves the default. Validate `given` against
 * PARSER_CONFIG_SCHEMA first; this does not check types.
 */
export function mergeParserConfig(
  method: ParserConfigMethod | string,
  level: ParserConfigLevel,
  given?: ParserConfig | null,
): ParserConfig {
  const merged = deepMerge(defaultParserConfig(method, level), given ?? {});
  const raptor = merged.raptor;
  if (isPlainObject(raptor) && typeof raptor.max_token === 'number' && raptor.max_token < RAPTOR_MIN_MAX_TOKEN) {
    raptor.max_token = RAPTOR_MIN_MAX_TOKEN;
  }
  return merged;
}

/** `over` merged into a copy of `base`: objects key by key, anything else replaced, undefined skipped. */
export function deepMerge(base: ParserConfig, over: ParserConfig): ParserConfig {
  const out: ParserConfig = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    const current = out[key];
    out[key] = isPlainObject(value) && isPlainObject(current) ? deepMerge(current, value) : structuredClone(value);
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Every string, list and integer is bounded (issue 19); the serialized config is limited to 65,535 characters besides.
const int = (minimum: number, maximum: number) => ({ type: 'integer', minimum, maximum });
const num = (minimum: number, maximum?: number) => ({ type: 'number', minimum, ...(maximum === undefined ? {} : { maximum }) });
const bool = { type: 'boolean' };
const TEXT_MAX = 65_535;
const text = { type: 'string', maxLength: TEXT_MAX };
const nonEmpty = { type: 'string', minLength: 1, maxLength: TEXT_MAX };
const texts = { type: 'array', items: text, maxItems: 10_000 };
/** A count of tokens or rows with no range of RAGFlow's own. */
const COUNT_MAX = 1_000_000;
/** A page number: RAGFlow's default page range is [[1, 1000000]]. */
const PAGE_MAX = 1_000_000_000;
const closed = (properties: Record<string, unknown>) => ({ type: 'object', additionalProperties: false, properties });

/**
 * JSON Schema for parser_config on dataset create/update and document update, RAGFlow's ParserConfig
 * (reference §2.1): unknown keys are rejected, types are strict, ranges as RAGFlow enforces them.
 * It uses only keywords that mean the same in draft-07 and 2020-12 and declares no `$schema`, so
 * either Ajv class compiles it. It holds no defaults: they depend on the method and the level, see
 * mergeParserConfig.
 */
export const PARSER_CONFIG_SCHEMA = closed({
  auto_keywords: int(0, 32),
  auto_questions: int(0, 10),
  chunk_token_num: int(1, 2048),
  delimiter: nonEmpty,
  html4excel: bool,
  // The spec has a boolean; RAGFlow stores the layout model's name ("DeepDOC").
  layout_recognize: { anyOf: [bool, text] },
  raptor: closed({
    use_raptor: bool,
    prompt: nonEmpty,
    max_token: int(1, 2048),
    clustering_threshold: num(0, 1),
    clustering_ratio: num(0, 1),
    max_cluster: int(1, 1024),
    random_seed: int(0, 2_147_483_647),
    scope: { enum: ['file', 'dataset'] },
    auto_disable_for_structured_data: bool,
  }),
  graphrag: closed({
    use_graphrag: bool,
    entity_types: texts,
    method: { enum: ['light', 'general', 'ner'] },
    community: bool,
    resolution: bool,
    batch_chunk_token_size: int(512, 8196),
    retry_attempts: int(1, 10),
    retry_backoff_seconds: num(0),
    retry_backoff_max_seconds: num(0),
    build_subgraph_timeout_per_chunk_seconds: num(0),
    build_subgraph_min_timeout_seconds: num(0),
    merge_timeout_seconds: num(0),
    resolution_timeout_seconds: num(0),
    community_timeout_seconds: num(0),
    lock_acquire_timeout_seconds: num(0),
  }),
  parent_child: closed({ use_parent_child: bool, children_delimiter: nonEmpty }),
  enable_children: bool,
  children_delimiter: text,
  tag_kb_ids: texts,
  topn_tags: int(1, 10),
  filename_embd_weight: num(0, 1),
  task_page_size: { anyOf: [int(1, COUNT_MAX), { type: 'null' }] },
  pages: { anyOf: [{ type: 'array', maxItems: 1000, items: { type: 'array', maxItems: 16, items: int(0, PAGE_MAX) } }, { type: 'null' }] },
  compilation_template_group_id: texts,
  ext: { type: 'object' },
  table_column_mode: { enum: ['auto', 'manual', null] },
  table_column_roles: { type: 'object', additionalProperties: { enum: ['indexing', 'metadata', 'both'] } },
  table_column_names: { anyOf: [texts, { type: 'object', additionalProperties: text }] },
  // In RAGFlow's own default parser_config, so a config read back from a dataset validates again.
  table_context_size: int(0, COUNT_MAX),
  image_context_size: int(0, COUNT_MAX),
  llm_id: text,
  // knowledge_graph's shape in the spec.
  entity_types: texts,
}) as Record<string, unknown>;
