/**
 * RAGFlow's canvas DSL, as Cairn stores and runs it. Pure types: importable by workflow code.
 *
 * `components` is what runs; `graph` is the editor's layout, kept and returned, never executed. The
 * run state (path, history, globals, outputs, reference buckets) lives in the same object, so a stored
 * DSL doubles as the snapshot a paused or finished turn resumes from.
 */
export interface CanvasDsl {
  components: Record<string, ComponentDef>;
  /** `sys.*` and `env.*` values. */
  globals: Record<string, unknown>;
  /** Conversation variables: name -> {type, value, ...}; `env.<name>` starts from their value. */
  variables?: Record<string, { type?: string; value?: unknown; [k: string]: unknown }>;
  /** [role, content] pairs, oldest first. */
  history: [string, string][];
  /** Component ids in the order they ran (a paused run keeps the UserFillUp first). */
  path: string[];
  /** One reference bucket per run. */
  retrieval: ReferenceBucket[];
  graph?: unknown;
  [key: string]: unknown;
}

export interface ComponentDef {
  obj: { component_name: string; params: Record<string, unknown> };
  downstream: string[];
  upstream: string[];
  parent_id?: string;
}

/** References collected during a run: chunk id -> chunk, document name -> document. */
export interface ReferenceBucket {
  chunks: Record<string, Record<string, unknown>>;
  doc_aggs: Record<string, Record<string, unknown>>;
}

/** Component output values by output name (`content`, `structured`, `_ERROR`, `_next`, ...). */
export type Outputs = Record<string, unknown>;

/** The reserved output names (RAGFlow's). */
export const ERROR_OUTPUT = '_ERROR';
export const NEXT_OUTPUT = '_next';

/** Component names Cairn runs; the DSL validator rejects any other. */
export const COMPONENT_NAMES = [
  'Begin',
  'Message',
  'LLM',
  'Agent',
  'Retrieval',
  'Categorize',
  'Switch',
  'VariableAggregator',
  'UserFillUp',
  'Iteration',
  'IterationItem',
  'Loop',
  'LoopItem',
  'ExitLoop',
  'VariableAssigner',
  'StringTransform',
  'DataOperations',
  'ListOperations',
  'Invoke',
  'CodeExec',
] as const;
export type ComponentName = (typeof COMPONENT_NAMES)[number];

/** A Begin / UserFillUp form field: `{key: {name, type, optional, options, value}}`. */
export interface InputField {
  name?: string;
  type?: string;
  optional?: boolean;
  options?: unknown[];
  value?: unknown;
  [k: string]: unknown;
}

/** Caller-supplied inputs: `{field: {value, type?}}`. */
export type RunInputs = Record<string, { value?: unknown; type?: string; [k: string]: unknown }>;
