import type { RetrievalService } from '../services/retrieval.js';
import type { RetrievalResult } from '../retrieval/types.js';

export type { DocAgg, ReferenceChunk as RetrievedChunk } from '../retrieval/types.js';

/** What chats need from retrieval. */
export type ChunkRetriever = Pick<RetrievalService, 'retrieve'>;

/** The chunks given to the model, with their documents and the total found. */
export type Found = Pick<RetrievalResult, 'total' | 'chunks' | 'doc_aggs'>;
