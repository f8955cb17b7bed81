import type { ColumnType, Generated } from 'kysely';

/** Tables of the MetaStore. JSON columns hold text; timestamps are epoch milliseconds. */
export interface UsersTable {
  id: string;
  email: string;
  nickname: string;
  password_hash: string;
  is_admin: number;
  create_time: number;
  update_time: number;
}

export interface TenantMembersTable {
  tenant_id: string;
  user_id: string;
  role: 'owner' | 'normal';
  create_time: number;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  token_hash: string;
  /** First characters of the token, shown in listings since the token itself is not kept. */
  token_prefix: string;
  name: string;
  create_time: number;
  last_used_at: number | null;
  /** The key's share token (RAGFlow's `beta`), shown in listings: it opens only the /searchbots routes. */
  beta: string | null;
}

/** A nullable column added later: rows written without it hold null. */
type Nullable<T> = ColumnType<T | null, T | null | undefined, T | null>;

export interface DatasetsTable {
  id: string;
  tenant_id: string;
  created_by: string;
  name: string;
  /** Lower-cased name: names are unique per tenant case-insensitively. */
  name_key: string;
  avatar: string | null;
  description: string | null;
  embedding_model: string;
  permission: 'me' | 'team';
  chunk_method: string;
  parser_config: string;
  pagerank: number;
  language: string;
  /** The ingestion pipeline (a dataflow canvas id) its documents go through; null: the chunk method. */
  pipeline_id: Nullable<string>;
  /** RAGFlow's parse_type, kept as given with pipeline_id (0..64). */
  parse_type: Nullable<number>;
  /** 'active', or 'deleting' while the deleteDatasets workflow removes its content. */
  status: 'active' | 'deleting';
  create_time: number;
  update_time: number;
}

export interface DocumentsTable {
  id: string;
  dataset_id: string;
  tenant_id: string;
  name: string;
  /** BlobStore key of the original bytes. */
  location: string;
  size: number;
  type: string;
  suffix: string;
  chunk_method: string;
  parser_config: string;
  source_type: string;
  created_by: string;
  run: 'UNSTART' | 'RUNNING' | 'CANCEL' | 'DONE' | 'FAIL';
  progress: number;
  progress_msg: string;
  process_begin_at: number | null;
  process_duration: number;
  chunk_count: number;
  token_count: number;
  meta_fields: string;
  /** Parse run number; a parse workflow writes results only for the run it was started for. */
  run_seq: Generated<number>;
  /** The pipeline the current run ingests through; null: the chunk method. */
  pipeline_id: Nullable<string>;
  create_time: number;
  update_time: number;
}

export interface IngestionStepsTable {
  document_id: string;
  run_seq: number;
  step_index: number;
  tenant_id: string;
  dataset_id: string;
  pipeline_id: string | null;
  component_id: string;
  component_name: string;
  status: 'RUNNING' | 'DONE' | 'FAIL' | 'CANCEL';
  begin_at: number;
  end_at: number | null;
  /** JSON: the step's counts (chunks, tokens, pages...). */
  output: string;
  error: string | null;
}

export interface ProviderInstancesTable {
  id: string;
  tenant_id: string;
  /** Provider kind, e.g. OpenAI-API-Compatible, Ollama, Xinference. */
  factory: string;
  instance_name: string;
  api_key: string;
  base_url: string;
  create_time: number;
  update_time: number;
}

export interface ProviderModelsTable {
  id: string;
  instance_id: string;
  model_name: string;
  /** JSON list of chat | embedding | rerank. */
  model_types: string;
  max_tokens: number;
  /** Image-to-text capable (the vision toggle). */
  vision: number;
  create_time: number;
}

export interface TenantDefaultsTable {
  tenant_id: string;
  chat_model: string | null;
  embedding_model: string | null;
  rerank_model: string | null;
  update_time: number;
}

export interface ChatsTable {
  id: string;
  tenant_id: string;
  created_by: string;
  name: string;
  description: string;
  icon: string;
  /** A chat model id; null means the tenant's default chat model. */
  llm_id: string | null;
  /** JSON: temperature, top_p, presence_penalty, frequency_penalty, max_token. */
  llm_setting: string;
  /** JSON: system, empty_response, prologue, quote, parameters. */
  prompt_config: string;
  similarity_threshold: number;
  vector_similarity_weight: number;
  top_n: number;
  top_k: number;
  rerank_id: string;
  create_time: number;
  update_time: number;
}

/** The datasets a chat retrieves from, in the order they were given. */
export interface ChatDatasetsTable {
  chat_id: string;
  dataset_id: string;
  position: number;
}

export interface ChatSessionsTable {
  id: string;
  chat_id: string;
  name: string;
  user_id: string;
  /** JSON list of stored messages (see store/sessions.ts). */
  messages: string;
  create_time: number;
  update_time: number;
}

export interface AgentsTable {
  id: string;
  tenant_id: string;
  created_by: string;
  title: string;
  /** Lower-cased title: titles are unique per tenant case-insensitively. */
  title_key: string;
  description: string | null;
  avatar: string | null;
  permission: 'me' | 'team';
  canvas_type: string | null;
  canvas_category: string;
  /** JSON: the canvas DSL (the editable draft). */
  dsl: string;
  /** RAGFlow's tags: comma-separated, '' for none. */
  tags: Generated<string>;
  create_time: number;
  update_time: number;
}

/** A file uploaded to an agent for its runs (`sys.files`); the bytes are in the blob store. */
export interface AgentAttachmentsTable {
  id: string;
  /** The uploader's tenant: only it reads the file back. */
  tenant_id: string;
  agent_id: string;
  created_by: string;
  name: string;
  extension: string;
  mime_type: string;
  size: number;
  create_time: number;
}

/** Saved versions of an agent's DSL; `release` 1 = published. */
export interface AgentVersionsTable {
  id: string;
  agent_id: string;
  title: string;
  description: string | null;
  dsl: string;
  release: number;
  create_time: number;
}

export interface AgentSessionsTable {
  id: string;
  agent_id: string;
  /** The tenant of the caller that created the session. */
  tenant_id: string;
  user_id: string;
  name: string;
  /**
   * 'agent' (created with POST /agents/{id}/sessions), 'workflow' (created by a completion call),
   * 'webhook' (a call of the agent's webhook) or 'schedule' (a run of one of its schedules).
   */
  source: 'agent' | 'workflow' | 'webhook' | 'schedule';
  /** JSON list of stored messages. */
  messages: string;
  /** JSON list: one reference bucket per assistant turn. */
  reference: string;
  /** JSON: the canvas with its run state (history, path, outputs), what the next turn starts from. */
  dsl: string;
  version_title: string | null;
  create_time: number;
  update_time: number;
}

/** An agent's schedule: its spec and Begin inputs; Temporal's schedule (same id) runs it and holds its paused state. */
export interface AgentSchedulesTable {
  id: string;
  agent_id: string;
  tenant_id: string;
  created_by: string;
  /** JSON: {cron | interval_seconds, timezone, inputs} as accepted. */
  spec: string;
  create_time: number;
}

/** Calls of an agent's triggers (webhook, webhook test, schedule) and the turns they started: the webhook logs. */
export interface AgentTriggerCallsTable {
  id: string;
  agent_id: string;
  tenant_id: string;
  /** 'webhook', 'webhook_test' or 'schedule'. */
  trigger: string;
  schedule_id: string | null;
  method: string | null;
  /** The HTTP status answered (a schedule's run: null). */
  status: number | null;
  session_id: string | null;
  message_id: string | null;
  error: string | null;
  create_time: number;
}

/** Each webhook agent's token bucket (security.rate_limit), shared by every API replica on this database. */
export interface AgentWebhookRatesTable {
  agent_id: string;
  /** Calls left at `refilled_at` (fractional: the bucket refills evenly). */
  tokens: number;
  /** Epoch milliseconds of the last refill. */
  refilled_at: number;
}

/** Events of agent runs on their way from the worker to the API process streaming them. */
export interface RunEventsTable {
  seq: Generated<number>;
  run_key: string;
  body: string;
  create_time: number;
}

/** Memories (spec "Memory"); their messages live in the memory index (src/index/memories/memory-index.ts). */
export interface MemoriesTable {
  id: string;
  tenant_id: string;
  created_by: string;
  name: string;
  /** Lower-cased name: names are unique per tenant case-insensitively. */
  name_key: string;
  avatar: string | null;
  description: string | null;
  /** Bitmask: raw 1, semantic 2, episodic 4, procedural 8 (src/memories/types.ts). */
  memory_type: number;
  storage_type: string;
  embd_id: string;
  llm_id: string;
  permission: 'me' | 'team';
  memory_size: number;
  forgetting_policy: string;
  temperature: number;
  system_prompt: string;
  user_prompt: string;
  create_time: number;
  update_time: number;
}

/** The extraction task of each raw memory message: progress 0..1, or -1 when it failed. */
export interface MemoryTasksTable {
  memory_id: string;
  message_id: number;
  progress: number;
  progress_msg: string;
  create_time: number;
  update_time: number;
}

/** MCP servers a tenant configured; agents call their tools. */
export interface McpServersTable {
  id: string;
  tenant_id: string;
  name: string;
  url: string;
  /** 'streamable-http' (the current MCP transport) or 'sse' (the older one). */
  server_type: string;
  /** JSON object of HTTP headers sent to the server (e.g. Authorization). */
  headers: string;
  description: string;
  create_time: number;
  update_time: number;
}

/** Model answers of enrichment jobs by the hash of the call (see store/enrichment.ts). */
export interface EnrichmentCacheTable {
  key: string;
  value: string;
  create_time: number;
}

/** The latest dataset-wide index job of each type (see store/enrichment.ts). */
export interface DatasetTasksTable {
  dataset_id: string;
  type: string;
  id: string;
  status: string;
  /** JSON of TaskProgress. */
  progress: string;
  message: Generated<string>;
  create_time: number;
  update_time: number;
  finish_time: number | null;
}

/** A dataset's published knowledge-graph build (see store/graph.ts). */
export interface KnowledgeGraphsTable {
  dataset_id: string;
  build_id: string;
  task_id: string;
  entities: number;
  relations: number;
  communities: number;
  create_time: number;
}

/** What one graph extraction call found (JSON lists), by the chunks it read. */
export interface GraphExtractionsTable {
  build_id: string;
  unit_key: string;
  dataset_id: string;
  seq: number;
  chunk_ids: string;
  entities: string;
  relations: string;
}

export interface GraphEntitiesTable {
  build_id: string;
  id: string;
  dataset_id: string;
  /** Position in the merged graph (deterministic order). */
  ord: number;
  name: string;
  type: string;
  description: string;
  source_ids: string;
  mentions: number;
  pagerank: number;
  community: number;
}

export interface GraphRelationsTable {
  build_id: string;
  source_id: string;
  target_id: string;
  dataset_id: string;
  ord: number;
  description: string;
  weight: number;
  source_ids: string;
}

export interface GraphCommunitiesTable {
  build_id: string;
  id: number;
  dataset_id: string;
  entity_ids: string;
  weight: number;
  title: string;
  summary: string;
  findings: string;
  rating: number;
}

/** Installation-wide values every process shares (see store/settings.ts). */
export interface SettingsTable {
  key: string;
  value: string;
  create_time: number;
}

/** A search app: a saved retrieval + answer configuration over datasets (RAGFlow's search apps). */
export interface SearchAppsTable {
  id: string;
  tenant_id: string;
  created_by: string;
  name: string;
  /** The name lowercased: names are unique per tenant case-insensitively. */
  name_key: string;
  description: string;
  avatar: string | null;
  /** JSON: RAGFlow's search_config (kb_ids, similarity_threshold, vector_similarity_weight, top_k, ...). */
  search_config: string;
  create_time: number;
  update_time: number;
}

/** One agent turn (id = its message id): status, timings, what started it, and the request to replay it. */
export interface AgentRunsTable {
  id: string;
  agent_id: string;
  session_id: string;
  tenant_id: string;
  status: 'running' | 'finished' | 'paused' | 'failed' | 'cancelled';
  /** What started the turn: 'completion', 'replay', or another starter's name. */
  trigger: string;
  /** JSON: the turn's RunRequest (query, inputs, files, userId), for a replay. */
  request: string;
  replay_of: string | null;
  from_component: string | null;
  error: string | null;
  start_time: number;
  end_time: number | null;
}

/** One component execution of an agent run, in start order. */
export interface AgentRunStepsTable {
  run_id: string;
  step_index: number;
  component_id: string;
  component_name: string;
  component_type: string;
  status: 'running' | 'finished' | 'failed' | 'paused' | 'cancelled';
  /** 1 when a replay took the recorded outputs instead of running it. */
  reused: number;
  /** Epoch milliseconds. */
  started_at: number;
  /** Seconds; null while it had not finished. */
  duration: number | null;
  /** JSON. */
  inputs: string;
  /** JSON. */
  outputs: string;
  error: string | null;
  /** JSON: an Agent's tool calls (RAGFlow's trace entries). */
  trace: string;
  /** JSON of the chunks and documents the step added to the turn's reference (a ReferenceBucket); null when none or recorded before 0021. */
  reference: string | null;
}

export interface Database {
  agent_runs: AgentRunsTable;
  agent_run_steps: AgentRunStepsTable;
  search_apps: SearchAppsTable;
  settings: SettingsTable;
  enrichment_cache: EnrichmentCacheTable;
  dataset_tasks: DatasetTasksTable;
  knowledge_graphs: KnowledgeGraphsTable;
  graph_extractions: GraphExtractionsTable;
  graph_entities: GraphEntitiesTable;
  graph_relations: GraphRelationsTable;
  graph_communities: GraphCommunitiesTable;
  mcp_servers: McpServersTable;
  agents: AgentsTable;
  agent_versions: AgentVersionsTable;
  agent_sessions: AgentSessionsTable;
  agent_schedules: AgentSchedulesTable;
  agent_trigger_calls: AgentTriggerCallsTable;
  agent_webhook_rates: AgentWebhookRatesTable;
  agent_attachments: AgentAttachmentsTable;
  run_events: RunEventsTable;
  provider_instances: ProviderInstancesTable;
  provider_models: ProviderModelsTable;
  tenant_defaults: TenantDefaultsTable;
  users: UsersTable;
  tenant_members: TenantMembersTable;
  api_keys: ApiKeysTable;
  datasets: DatasetsTable;
  documents: DocumentsTable;
  ingestion_steps: IngestionStepsTable;
  chats: ChatsTable;
  chat_datasets: ChatDatasetsTable;
  chat_sessions: ChatSessionsTable;
  memories: MemoriesTable;
  memory_tasks: MemoryTasksTable;
}
