import type { Position } from '../../parsing/types.js';

/** A chunk as stored in the index (the spec's Chunk fields plus what retrieval needs). */
export interface IndexedChunk {
  id: string;
  tenant_id: string;
  dataset_id: string;
  document_id: string;
  document_name: string;
  content: string;
  important_keywords: string[];
  questions: string[];
  tag_kwd: string[];
  image_id: string;
  positions: Position[];
  available: boolean;
  /** "YYYY-MM-DD HH:MM:SS" */
  create_time: string;
  /** Unix seconds, float. */
  create_timestamp: number;
  /** parent_child: the parent text, returned instead of the content when set. */
  parent_content?: string;
  /** A RAPTOR summary: the level of the summary tree it belongs to (1 = summaries of chunks); absent on other chunks. */
  raptor_layer?: number;
  /** L2-normalised embedding. */
  vector: number[];
}

/** Raised by ChunkIndex.update for an id that is not in the index. */
export class ChunkNotFoundError extends Error {
  constructor(readonly chunkId: string) {
    super(`Chunk not found: ${chunkId}`);
    this.name = 'ChunkNotFoundError';
  }
}

export type ChunkPatch = Partial<Omit<IndexedChunk, 'id' | 'tenant_id' | 'dataset_id' | 'document_id'>>;

export interface ChunkFilter {
  datasetIds: string[];
  documentIds?: string[];
  /** Only chunks with available = true (retrieval). */
  availableOnly?: boolean;
}

export interface ScoredId {
  id: string;
  /**
   * Full-text: the engine's own BM25 relevance of the chunk for the question (> 0, higher is better; each
   * engine analyses text its own way). Vector: cosine similarity in -1..1.
   */
  score: number;
}

/** A search hit with what retrieval needs to score it, without loading the whole chunk. */
export interface Candidate extends ScoredId {
  dataset_id: string;
  document_id: string;
  document_name: string;
}

/** What getMany loads besides the chunk's text and fields. */
export interface ChunkLoadOptions {
  /** false: `vector` comes back empty (a retrieval page needs only the text). Default true. */
  vectors?: boolean;
}

export interface ChunkListQuery {
  keywords?: string;
  id?: string;
  page: number;
  pageSize: number;
}

/** The chunk index port: embedded (SQLite FTS5 + sqlite-vec) now, Milvus later. */
export interface ChunkIndex {
  upsert(chunks: IndexedChunk[]): Promise<void>;
  get(id: string): Promise<IndexedChunk | undefined>;
  getMany(ids: string[], options?: ChunkLoadOptions): Promise<IndexedChunk[]>;
  update(id: string, patch: ChunkPatch): Promise<void>;
  deleteChunks(ids: string[]): Promise<number>;
  deleteByDocument(documentId: string): Promise<number>;
  /** Sets document_name on every chunk of the document (full text and term features follow); returns how many. */
  renameDocument(documentId: string, name: string): Promise<number>;
  deleteByDataset(datasetId: string): Promise<number>;
  countByDocument(documentId: string): Promise<number>;
  list(documentId: string, query: ChunkListQuery): Promise<{ total: number; chunks: IndexedChunk[] }>;
  /** Best BM25 matches of the question's words (document name, content, keywords, questions), best first. */
  fullText(query: string, filter: ChunkFilter, limit: number): Promise<Candidate[]>;
  /** Nearest chunks by cosine among those with a vector of the same dimension, best first. */
  vectorSearch(vector: number[], filter: ChunkFilter, limit: number): Promise<Candidate[]>;
  /** Cosine (-1..1) of each chunk's vector with `vector`; chunks without a vector of that dimension are absent. */
  cosineSimilarities(ids: string[], vector: number[]): Promise<Map<string, number>>;
  /** Cheap liveness check for /system/healthz. */
  ping(): Promise<void>;
  /** The implementation's in-memory caches and their sizes, for /metrics. */
  cacheSizes?(): Promise<CacheSize[]>;
  /**
   * Ends what the index itself started (reader threads, a server connection); a no-op where it started
   * nothing (a connection given to it belongs to whoever opened it). No call may follow.
   */
  close(): Promise<void>;
}

/** One in-memory cache as /metrics reports it. */
export interface CacheSize {
  /** Stable name, the metric's `cache` label. */
  name: string;
  entries: number;
  /** Omitted when not known. */
  bytes?: number;
}
