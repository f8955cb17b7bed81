import { cosinesById, unpackHits, type PackedHits } from './hit-wire.js';
import type { SqliteChunkIndex } from './sqlite-index.js';
import type { SqliteReadPool } from './sqlite-read-pool.js';
import type { CacheSize, Candidate, ChunkFilter, ChunkIndex, ChunkListQuery, ChunkLoadOptions, ChunkPatch, IndexedChunk } from './chunk-index.js';

/**
 * The embedded index with its reads off the event loop: searches, cosines, chunk loads
 * and lists run on the reader threads of `readers`, each on its own connection to the same database file;
 * writes stay on `writer`'s connection (the service's one writer), and so does ping, so that a health check
 * never waits behind queued searches. A read sent after a write returned sees it: each read is its own
 * transaction on a connection that starts it after the write committed.
 */
export class ThreadedSqliteChunkIndex implements ChunkIndex {
  constructor(
    private readonly writer: SqliteChunkIndex,
    private readonly readers: SqliteReadPool,
  ) {}

  upsert(chunks: IndexedChunk[]): Promise<void> {
    return this.writer.upsert(chunks);
  }

  update(id: string, patch: ChunkPatch): Promise<void> {
    return this.writer.update(id, patch);
  }

  deleteChunks(ids: string[]): Promise<number> {
    return this.writer.deleteChunks(ids);
  }

  deleteByDocument(documentId: string): Promise<number> {
    return this.writer.deleteByDocument(documentId);
  }

  renameDocument(documentId: string, name: string): Promise<number> {
    return this.writer.renameDocument(documentId, name);
  }

  deleteByDataset(datasetId: string): Promise<number> {
    return this.writer.deleteByDataset(datasetId);
  }

  ping(): Promise<void> {
    return this.writer.ping();
  }

  async get(id: string): Promise<IndexedChunk | undefined> {
    return (await this.getMany([id]))[0];
  }

  async getMany(ids: string[], options?: ChunkLoadOptions): Promise<IndexedChunk[]> {
    if (ids.length === 0) return [];
    return (await this.readers.run('getMany', [ids, options])) as IndexedChunk[];
  }

  async countByDocument(documentId: string): Promise<number> {
    return (await this.readers.run('countByDocument', [documentId])) as number;
  }

  async list(documentId: string, query: ChunkListQuery): Promise<{ total: number; chunks: IndexedChunk[] }> {
    return (await this.readers.run('list', [documentId, query])) as { total: number; chunks: IndexedChunk[] };
  }

  async fullText(query: string, filter: ChunkFilter, limit: number): Promise<Candidate[]> {
    if (filter.datasetIds.length === 0 || limit <= 0) return [];
    return unpackHits((await this.readers.run('fullText', [query, filter, limit])) as PackedHits);
  }

  async vectorSearch(vector: number[], filter: ChunkFilter, limit: number): Promise<Candidate[]> {
    if (vector.length === 0 || filter.datasetIds.length === 0 || limit <= 0) return [];
    return unpackHits((await this.readers.run('vectorSearch', [vector, filter, limit])) as PackedHits);
  }

  async cosineSimilarities(ids: string[], vector: number[]): Promise<Map<string, number>> {
    if (ids.length === 0 || vector.length === 0) return new Map();
    return cosinesById(ids, (await this.readers.run('cosineSimilarities', [ids, vector])) as Float64Array);
  }

  /** The reader threads' caches (each thread keeps its own), as of their last answers: never waits on a search. */
  async cacheSizes(): Promise<CacheSize[]> {
    return this.readers.cacheSizes();
  }

  /** Ends the reader threads; the writer's connection belongs to whoever opened it. */
  close(): Promise<void> {
    return this.readers.close();
  }
}
