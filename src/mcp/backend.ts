/**
 * What the MCP tools need from Cairn, acting as one authenticated caller. Two implementations: the
 * in-process services (the `/mcp` endpoint) and the HTTP API (`cairn mcp` over stdio).
 *
 * Methods reject with an Error whose message is safe and useful to show the caller: it becomes the
 * tool error's text.
 */
export interface McpBackend {
  listDatasets(query: ListQuery): Promise<{ total: number; datasets: DatasetView[] }>;
  listChats(query: ListQuery): Promise<{ total: number; chats: ChatView[] }>;
  retrieve(input: RetrieveQuery): Promise<{ total: number; chunks: ChunkView[] }>;
}

export interface ListQuery {
  page: number;
  page_size: number;
  /** Case-insensitive substring of the name. */
  keywords?: string;
}

export interface RetrieveQuery {
  question: string;
  dataset_ids: string[];
  document_ids?: string[];
  top_k?: number;
  page_size?: number;
  similarity_threshold?: number;
  vector_similarity_weight?: number;
}

/** The fields the tools use of the API's dataset, chat and retrieval-chunk objects (which carry more). */
export interface DatasetView {
  id: string;
  name: string;
  description: string | null;
  document_count: number;
  chunk_count: number;
  embedding_model: string;
  chunk_method: string;
}

export interface ChatView {
  id: string;
  name: string;
  dataset_ids: string[];
  llm_id: string | null;
}

export interface ChunkView {
  id: string;
  content: string;
  document_id: string;
  document_name: string;
  dataset_id: string;
  similarity: number;
}
