import type { CacheSize, ChunkIndex } from '../index/chunks/chunk-index.js';
import { documentNameCacheSize } from '../retrieval/retrieve.js';
import { stemCacheSize } from '../retrieval/tokenizer.js';

/** What holds the caches of one Cairn instance. */
export interface CacheOwners {
  index: ChunkIndex;
  /** The model clients cache (services/model-clients.ts). */
  modelClients: { readonly size: number };
}

/**
 * Every in-memory cache of the instance and its size, as /metrics and /system/healthz report them:
 * the chunk index's (sign bits, term frequencies; summed over reader threads), the model clients, and
 * the retrieval tokenizer's stems and doc_aggs' order of document names. Bounds: docs/operations.md, "Memory".
 */
export async function cacheSizes(owners: CacheOwners): Promise<CacheSize[]> {
  return [
    ...((await owners.index.cacheSizes?.()) ?? []),
    { name: 'model_clients', entries: owners.modelClients.size },
    { name: 'stems', entries: stemCacheSize() },
    { name: 'document_names', entries: documentNameCacheSize() },
  ];
}
