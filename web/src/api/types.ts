/** Shapes of the public API the console reads (only the fields it uses). */

export interface Dataset {
  id: string;
  name: string;
  description: string | null;
  embedding_model: string;
  permission: 'me' | 'team';
  chunk_method: string;
  parser_config: Record<string, unknown>;
  pagerank: number;
  document_count: number;
  chunk_count: number;
  create_time: number;
  update_time: number;
  unstart_count?: number;
  running_count?: number;
  cancel_count?: number;
  done_count?: number;
  fail_count?: number;
  /** Set when the dataset ingests through an ingestion pipeline (a dataflow canvas) instead of its chunk method. */
  pipeline_id?: string | null;
  parse_type?: number | null;
}

export type RunState = 'UNSTART' | 'RUNNING' | 'CANCEL' | 'DONE' | 'FAIL';

export interface Doc {
  id: string;
  name: string;
  dataset_id: string;
  chunk_method: string;
  parser_config: Record<string, unknown>;
  size: number;
  token_count: number;
  chunk_count: number;
  /** 0..1 */
  progress: number;
  progress_msg: string;
  process_duration: number;
  run: RunState;
  meta_fields: Record<string, unknown>;
  create_time: number;
  suffix?: string;
}

export interface Chunk {
  id: string;
  content: string;
  important_keywords: string[];
  questions: string[];
  tag_kwd: string[];
  available: boolean;
  document_id: string;
  document_name: string;
  dataset_id: string;
  create_time: string;
}

export interface RetrievedChunk extends Chunk {
  similarity: number;
  vector_similarity: number;
  term_similarity: number;
  highlight?: string;
}

export interface Model {
  model_id: string;
  name: string;
  provider_name: string;
  instance_name: string;
  model_type: string[];
  max_tokens?: number;
}

export type ModelType = 'chat' | 'embedding' | 'rerank';

export interface Provider {
  name: string;
  model_types: ModelType[];
  base_url_required: boolean;
  default_base_url: string | null;
}

export const DATASET_CHUNK_METHODS = ['naive', 'manual', 'qa', 'table', 'paper', 'book', 'laws', 'presentation', 'picture', 'one', 'email'];
export const CHUNK_METHOD_LABELS: Record<string, string> = {
  naive: 'General',
  manual: 'Manual',
  qa: 'Q&A',
  table: 'Table',
  paper: 'Paper',
  book: 'Book',
  laws: 'Laws',
  presentation: 'Presentation',
  picture: 'Picture',
  one: 'One',
  email: 'Email',
  tag: 'Tag',
};

export const chunkMethodOptions = (methods: string[]) => methods.map((m) => ({ value: m, label: `${CHUNK_METHOD_LABELS[m] ?? m} (${m})` }));

export interface Chat {
  id: string;
  name: string;
  description: string | null;
  llm_id: string | null;
  llm_setting: { temperature?: number; top_p?: number; presence_penalty?: number; frequency_penalty?: number; max_token?: number };
  prompt_config: {
    system: string;
    prologue: string;
    empty_response: string | null;
    quote: boolean;
    parameters: { key: string; optional: boolean }[];
  };
  similarity_threshold: number;
  vector_similarity_weight: number;
  top_n: number;
  top_k: number;
  rerank_id: string | null;
  dataset_ids: string[];
  kb_names?: string[];
  update_time: number;
}

export interface ReferenceChunk {
  id: string;
  content: string;
  document_id: string;
  document_name: string;
  dataset_id: string;
  similarity: number;
  vector_similarity: number;
  term_similarity: number;
}

export interface ChatReference {
  chunks: ReferenceChunk[];
  doc_aggs: { doc_name: string; doc_id: string; count: number }[];
}

export interface ChatMessage {
  id?: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
  reasoning?: string;
  reference?: ChatReference;
}

export interface ChatSession {
  id: string;
  name: string;
  messages: ChatMessage[];
  update_time: number;
}

export interface DslComponent {
  obj: { component_name: string; params: Record<string, any> };
  downstream: string[];
  upstream: string[];
  parent_id?: string;
}

export interface GraphNode {
  id: string;
  type?: string;
  position: { x: number; y: number };
  data?: { label?: string; name?: string; form?: Record<string, any> };
  parentId?: string;
  extent?: 'parent';
  width?: number;
  height?: number;
  style?: Record<string, unknown>;
}

export interface Dsl {
  components: Record<string, DslComponent>;
  graph?: { nodes: GraphNode[]; edges: { id: string; source: string; target: string; sourceHandle?: string | null }[] };
  [key: string]: unknown;
}

export interface Agent {
  id: string;
  title: string;
  description: string | null;
  dsl: Dsl;
  canvas_type: string | null;
  /** `dataflow_canvas`: an ingestion pipeline (runs on documents, not as an agent). */
  canvas_category?: string;
  update_time: number;
  /** GET /agents/{id} of a pipeline: the datasets ingesting through it that the caller may see. */
  datasets?: { id: string; name: string }[];
}

export const DATAFLOW_CANVAS = 'dataflow_canvas';

/** One step of a document's ingestion run (GET /datasets/{id}/ingestions). */
export interface IngestionStep {
  component_id: string;
  component_name: string;
  status: RunState;
  /** Seconds; null while the step runs. */
  duration: number | null;
  /** Counts (pages, sections, chunks, tokens, model_calls, cached_calls) and notes. */
  output: Record<string, unknown>;
  error: string | null;
}

export interface IngestionLog {
  id: string;
  document_id: string;
  run_seq: number;
  operation_status: RunState;
  steps: IngestionStep[];
}

export interface AgentTemplate {
  id: string;
  title: Record<string, string>;
  description: Record<string, string>;
  canvas_type: string;
  canvas_category?: string;
  dsl: Dsl;
}

export interface AgentSession {
  id: string;
  name: string;
  message: { role: string; content: string }[];
  update_time: number;
}

export const PERMISSION_OPTIONS: { value: Dataset['permission']; label: string }[] = [
  { value: 'me', label: 'Only me' },
  { value: 'team', label: 'Team members' },
];

/** A value over 4 KB in a run step's listing: its start, its size and where the whole value is. */
export interface AbridgedValue {
  truncated: string;
  size: number;
  full_value: string;
}

/** One component's step in an agent run (`GET /agents/{id}/sessions/{sid}/runs`). */
export interface AgentRunStep {
  component_id: string;
  component_name: string;
  component_type: string;
  status: string;
  reused: boolean;
  start_time: number | null;
  elapsed_time: number | null;
  error: string | null;
  inputs: Record<string, unknown> | null;
  outputs: Record<string, unknown> | null;
}

export interface AgentRun {
  id: string;
  status: string;
  trigger: string;
  replay_of: string | null;
  from_component: string | null;
  query: string | null;
  error: string | null;
  start_time: number;
  end_time: number | null;
  elapsed_time: number | null;
  steps: AgentRunStep[];
}
