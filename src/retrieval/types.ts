import type { ChunkIndex } from '../index/chunks/chunk-index.js';
import type { Position } from '../parsing/types.js';
import type { DocumentMeta, MetadataCondition } from './metadata.js';

/** The retrieval request, with the spec's field names; omitted fields take the spec's defaults. */
export interface RetrieveParams {
  question: string;
  dataset_ids: string[];
  document_ids?: string[];
  /** 1-based; default 1. */
  page?: number;
  /** Default 30. */
  page_size?: number;
  /** Default 0.2. */
  similarity_threshold?: number;
  /** Default 0.3; term similarity weighs 1 − this. */
  vector_similarity_weight?: number;
  /** Candidates taken from each of full-text and vector search; default 1024. */
  top_k?: number;
  /** Add `highlight` (matched words wrapped in <em>) to each chunk. */
  highlight?: boolean;
  metadata_condition?: MetadataCondition;
}

export interface RetrieveDeps {
  index: ChunkIndex;
  /** Embeds the question with the datasets' embedding model (L2-normalised). */
  embedQuery(text: string): Promise<number[]>;
  /** Rerank model: one score in 0..1 per document, in order. When set it replaces the vector part. */
  rerank?(query: string, documents: string[]): Promise<number[]>;
  /** The dataset's pagerank, 0..100. */
  pagerankOf(datasetId: string): number | Promise<number>;
  /** Documents of the datasets with their meta_fields; required when metadata_condition is used. */
  documentMetadata?(datasetIds: string[]): Promise<DocumentMeta[]>;
}

/** A chunk in a retrieval result (the spec's Reference chunk plus RAGFlow's retrieval keys). */
export interface ReferenceChunk {
  id: string;
  /** The parent text for parent-child chunks, otherwise the chunk content. */
  content: string;
  document_id: string;
  document_name: string;
  /** RAGFlow's name for document_name in /retrieval responses. */
  document_keyword: string;
  dataset_id: string;
  image_id: string;
  positions: Position[];
  similarity: number;
  vector_similarity: number;
  term_similarity: number;
  important_keywords: string[];
  tag_kwd: string[];
  questions: string[];
  highlight?: string;
  /** "raptor" on a RAPTOR summary (RAGFlow's field); absent on other chunks. */
  raptor_kwd?: 'raptor';
  /** A RAPTOR summary's level in its tree (1 = summaries of chunks). */
  raptor_layer?: number;
}

export interface DocAgg {
  doc_name: string;
  doc_id: string;
  count: number;
}

/** Wall-clock milliseconds per stage. Embedding overlaps full-text search, so stages may sum above total. */
export interface RetrievalTimings {
  embed: number;
  fulltext: number;
  vector: number;
  fuse: number;
  rerank: number;
  total: number;
}

export interface RetrievalResult {
  /** Chunks at or above the similarity threshold (all pages). */
  total: number;
  chunks: ReferenceChunk[];
  /** Per document, how many of the `total` chunks it holds; most first. */
  doc_aggs: DocAgg[];
  timings: RetrievalTimings;
}
