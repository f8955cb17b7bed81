import type { MilvusClient } from '@zilliz/milvus2-sdk-node';
import type { MilvusLocation } from '../../location.js';
import { ChunkNotFoundError } from '../chunk-index.js';
import type { Candidate, ChunkFilter, ChunkIndex, ChunkListQuery, ChunkLoadOptions, ChunkPatch, IndexedChunk } from '../chunk-index.js';
import { bm25Query, bm25Text } from './analysis.js';
import { call, connectMilvus, MilvusIndexError } from './client.js';
import { checkStorableDim, chunksSpec, CollectionCatalog, MAX_DIM, MIN_DIM, partsSpec, searchableVector, vectorsName, vectorsSpec, type CollectionSpec } from './collections.js';
import { chunksOf } from '../../../batching.js';
import { batchesOfWeight } from './batches.js';
import { and, chunkFilter, containsPattern, equals, isIn, literal } from './expressions.js';
import { bm25Score, cosine, cosineSearch, countRows, deleteWhere, IDS_PER_REQUEST, queryRows, RESULT_WINDOW, upsertRows, type Row } from './operations.js';
import { mayAnalyseDifferently, Reanalysis, type ProgressLog, type ReanalysisRun } from './reanalysis.js';
import { CHUNK_ROW_FIELDS, chunkFromRecord, chunkRows, type ChunkRow } from './rows.js';

export interface MilvusChunkIndexOptions {
  /** Prefix of the collection names (default `cairn_`): several indexes can share one database. */
  prefix?: string;
  /** Where the re-analysis of stored text logs its progress (reanalysis.ts); default JSON lines on stderr. */
  log?: ProgressLog;
}

/** A chunk as stored: the chunk and when it was first written (list order). */
interface Stored {
  chunk: IndexedChunk;
  ordinal: number;
}

let lastOrdinal = 0;

/**
 * Write order for `list` (SQLite's rowid): microseconds of the clock, strictly increasing in a process,
 * so the chunks of one batch and of consecutive batches (a copy page by page) keep their order.
 */
function nextOrdinal(): number {
  lastOrdinal = Math.max(Date.now() * 1000, lastOrdinal + 1);
  return lastOrdinal;
}

/** queryAll's refusal to page by key when the server answers in another order (milvus-lite). */
class UnorderedAnswerError extends MilvusIndexError {
  constructor(operation: string) {
    super(operation, 'the server does not answer in primary-key order, so more than 16,384 rows cannot be read');
  }
}

/** Chunk records per query: each can be 64 KB. */
const RECORDS_PER_REQUEST = 256;

function checkVector(chunk: IndexedChunk): void {
  checkStorableDim(`chunk ${chunk.id}`, chunk.vector.length);
}

/**
 * ChunkIndex on Milvus ≥ 2.5 (and milvus-lite): BM25 full text through Milvus's BM25 function, dense
 * vectors by COSINE, one collection per vector dimension (collections.ts). Milvus has no transactions:
 * writes go vectors and record parts first, the chunks row last, and searches join their hits with the
 * chunks rows, so a reader never sees a chunk without its parts, and a crash between two writes leaves
 * at worst rows that the next write or delete of that chunk removes.
 */
export class MilvusChunkIndex implements ChunkIndex {
  private readonly chunks: CollectionSpec;
  private readonly parts: CollectionSpec;
  private reanalysis?: Reanalysis;

  private constructor(private readonly client: MilvusClient, private readonly catalog: CollectionCatalog) {
    this.chunks = chunksSpec(catalog.prefix);
    this.parts = partsSpec(catalog.prefix);
  }

  /**
   * Connects to the location's database and makes sure the collections exist; `close` disconnects. Rows
   * analysed by an older analysis are re-analysed in the background (reanalysis.ts).
   */
  static async connect(location: MilvusLocation, options: MilvusChunkIndexOptions = {}): Promise<MilvusChunkIndex> {
    const client = await connectMilvus(location);
    try {
      const index = new MilvusChunkIndex(client, new CollectionCatalog(client, options.prefix ?? 'cairn_'));
      await index.catalog.ensure(index.chunks);
      await index.catalog.ensure(index.parts);
      index.reanalysis = new Reanalysis(index.catalog, index.chunks.name, (run) => index.rewriteAnalysis(run), options.log);
      return index;
    } catch (err) {
      await client.closeConnection().catch(() => undefined);
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.reanalysis?.stop();
    await this.client.closeConnection();
  }

  /** Settles when the re-analysis started by `connect` has finished, failed or stopped (tests). */
  async reanalysed(): Promise<void> {
    await this.reanalysis?.finished;
  }

  /** Makes the written rows into sealed segments now (milvus-lite searches unsealed rows slowly). */
  async flush(): Promise<void> {
    const names = [this.chunks.name, this.parts.name, ...(await this.catalog.vectorDims()).map((d) => vectorsName(this.catalog.prefix, d))];
    await call('flush', () => this.client.flush({ collection_names: names }));
  }

  async upsert(chunks: IndexedChunk[]): Promise<void> {
    if (chunks.length === 0) return;
    // Last write wins when a batch repeats an id.
    const unique = [...new Map(chunks.map((c) => [c.id, c])).values()];
    unique.forEach(checkVector);
    await this.write(unique.map((chunk) => ({ chunk, ordinal: nextOrdinal() })), true);
  }

  async get(id: string): Promise<IndexedChunk | undefined> {
    return (await this.getMany([id]))[0];
  }

  async getMany(ids: string[], options: ChunkLoadOptions = {}): Promise<IndexedChunk[]> {
    if (ids.length === 0) return [];
    const found = await this.load([...new Set(ids)], options.vectors !== false);
    return ids.flatMap((id) => found.get(id)?.chunk ?? []);
  }

  async update(id: string, patch: ChunkPatch): Promise<void> {
    const stored = (await this.load([id])).get(id);
    if (!stored) throw new ChunkNotFoundError(id);
    const given = Object.entries(patch).filter(([, value]) => value !== undefined);
    const merged: IndexedChunk = { ...stored.chunk, ...Object.fromEntries(given) };
    checkVector(merged);
    await this.write([{ chunk: merged, ordinal: stored.ordinal }], true);
  }

  async deleteChunks(ids: string[]): Promise<number> {
    let deleted = 0;
    for (const batch of chunksOf([...new Set(ids)], IDS_PER_REQUEST)) {
      deleted += await this.count(this.chunks.name, isIn('id', batch));
      await this.removeWhere(isIn('id', batch), isIn('chunk_id', batch));
    }
    return deleted;
  }

  async deleteByDocument(documentId: string): Promise<number> {
    const where = equals('document_id', documentId);
    const n = await this.count(this.chunks.name, where);
    await this.removeWhere(where, where);
    return n;
  }

  async deleteByDataset(datasetId: string): Promise<number> {
    const where = equals('dataset_id', datasetId);
    const n = await this.count(this.chunks.name, where);
    await this.removeWhere(where, where);
    return n;
  }

  async renameDocument(documentId: string, name: string): Promise<number> {
    const ids = (await this.queryAll(this.chunks.name, equals('document_id', documentId), ['id'])).map((r) => r.id as string);
    for (const batch of chunksOf(ids, RECORDS_PER_REQUEST)) {
      const stored = [...(await this.load(batch)).values()];
      // Vector rows carry no name: only the chunks rows (BM25 text, record) change.
      await this.write(stored.map((s) => ({ chunk: { ...s.chunk, document_name: name }, ordinal: s.ordinal })), false);
    }
    return ids.length;
  }

  async countByDocument(documentId: string): Promise<number> {
    return this.count(this.chunks.name, equals('document_id', documentId));
  }

  /** Chunks of a document in reading order (page, top, creation, batch position), filtered by content keywords or id. */
  async list(documentId: string, query: ChunkListQuery): Promise<{ total: number; chunks: IndexedChunk[] }> {
    const keywords = query.keywords?.trim().toLowerCase() || undefined;
    const where = and(
      equals('document_id', documentId),
      query.id !== undefined && equals('id', query.id),
      // A superset of the matches (containsPattern); chunks whose folded content was cut are checked below.
      keywords && `content_folded like ${literal(containsPattern(keywords))} || folded_whole == false`,
    );
    const fields = ['id', 'page_number', 'top', 'create_timestamp', 'ordinal', ...(keywords ? ['content_folded', 'folded_whole'] : [])];
    let rows = await this.queryAll(this.chunks.name, where, fields);
    if (keywords) rows = await this.containing(rows, keywords);
    const num = (r: Row, key: string) => Number(r[key]);
    rows.sort((a, b) => num(a, 'page_number') - num(b, 'page_number') || num(a, 'top') - num(b, 'top')
      || num(a, 'create_timestamp') - num(b, 'create_timestamp') || num(a, 'ordinal') - num(b, 'ordinal')
      || String(a.id).localeCompare(String(b.id)));
    const pageSize = Math.max(1, Math.floor(query.pageSize));
    const page = Math.max(1, Math.floor(query.page));
    const pageIds = rows.slice((page - 1) * pageSize, page * pageSize).map((r) => r.id as string);
    return { total: rows.length, chunks: await this.getMany(pageIds) };
  }

  /** The rows whose content contains `keywords` (lower-cased), exactly. */
  private async containing(rows: Row[], keywords: string): Promise<Row[]> {
    const cut = rows.filter((r) => r.folded_whole !== true).map((r) => r.id as string);
    const full = cut.length > 0 ? await this.getMany(cut) : [];
    const fullText = new Map(full.map((c) => [c.id, c.content.toLowerCase()]));
    return rows.filter((r) => (r.folded_whole === true ? String(r.content_folded) : fullText.get(r.id as string) ?? '').includes(keywords));
  }

  async fullText(query: string, filter: ChunkFilter, limit: number): Promise<Candidate[]> {
    if (filter.datasetIds.length === 0 || filter.documentIds?.length === 0 || limit <= 0) return [];
    const text = bm25Query(query);
    if (!text) return [];
    const { results } = await call('search (BM25)', () => this.client.search({
      collection_name: this.chunks.name,
      anns_field: 'sparse',
      data: text,
      limit: Math.min(limit, RESULT_WINDOW),
      metric_type: 'BM25',
      filter: chunkFilter(filter),
      output_fields: ['id', 'dataset_id', 'document_id', 'document_name'],
    }));
    return results
      .map((hit) => ({
        id: String(hit.id),
        score: bm25Score(hit.score),
        dataset_id: String(hit.dataset_id),
        document_id: String(hit.document_id),
        document_name: String(hit.document_name),
      }))
      .filter((hit) => hit.score > 0 && Number.isFinite(hit.score))
      .sort((a, b) => b.score - a.score);
  }

  async vectorSearch(vector: number[], filter: ChunkFilter, limit: number): Promise<Candidate[]> {
    const dim = vector.length;
    if (!searchableVector(vector)) return [];
    if (filter.datasetIds.length === 0 || filter.documentIds?.length === 0 || limit <= 0) return [];
    const spec = vectorsSpec(this.catalog.prefix, dim);
    if (!(await this.catalog.exists(spec))) return [];
    const results = await cosineSearch(this.client, spec.name, vector, chunkFilter(filter), ['id', 'dataset_id', 'document_id'], limit);
    if (results.length === 0) return [];
    // Names live in the chunks rows; a vector without its chunks row (being deleted) or left behind by a
    // change of dimension is no hit.
    const names = new Map((await this.queryIds(this.chunks.name, results.map((h) => String(h.id)), ['id', 'document_name', 'dim']))
      .filter((r) => Number(r.dim) === dim)
      .map((r) => [r.id as string, String(r.document_name)]));
    return results.flatMap((hit) => {
      const name = names.get(String(hit.id));
      return name === undefined ? [] : [{
        id: String(hit.id),
        score: Number(hit.score),
        dataset_id: String(hit.dataset_id),
        document_id: String(hit.document_id),
        document_name: name,
      }];
    });
  }

  async cosineSimilarities(ids: string[], vector: number[]): Promise<Map<string, number>> {
    const result = new Map<string, number>();
    if (ids.length === 0 || vector.length < MIN_DIM || vector.length > MAX_DIM) return result;
    const spec = vectorsSpec(this.catalog.prefix, vector.length);
    if (!(await this.catalog.exists(spec))) return result;
    for (const row of await this.queryIds(spec.name, [...new Set(ids)], ['id', 'vector'])) {
      const value = cosine(row.vector as number[], vector);
      if (value !== undefined) result.set(row.id as string, value);
    }
    return result;
  }

  async ping(): Promise<void> {
    const health = await call('checkHealth', () => this.client.checkHealth());
    if (!health.isHealthy) throw new MilvusIndexError('checkHealth', health.reasons.join('; ') || 'not healthy');
  }

  /**
   * Writes chunks: vectors (when `vectors`) and record parts first, the chunks rows last. A chunk's
   * vector is removed from the collections of other dimensions, and its old record parts are replaced.
   */
  private async write(items: Stored[], vectors: boolean): Promise<void> {
    const rows = items.map(({ chunk, ordinal }) => chunkRows(chunk, ordinal));
    const ids = rows.map((r) => r.row.id);
    if (vectors) {
      const byDim = new Map<number, typeof rows>();
      for (const r of rows) if (r.vector) byDim.set(r.row.dim, [...(byDim.get(r.row.dim) ?? []), r]);
      for (const [dim, group] of byDim) {
        const spec = vectorsSpec(this.catalog.prefix, dim);
        await this.catalog.ensure(spec);
        await this.insert(spec.name, group.map((r) => r.vector!));
      }
      for (const dim of await this.catalog.vectorDims()) {
        const stale = rows.filter((r) => !(r.vector && r.row.dim === dim)).map((r) => r.row.id);
        for (const batch of chunksOf(stale, IDS_PER_REQUEST)) await this.deleteWhere(vectorsName(this.catalog.prefix, dim), isIn('id', batch));
      }
    }
    for (const batch of chunksOf(ids, IDS_PER_REQUEST)) await this.deleteWhere(this.parts.name, isIn('chunk_id', batch));
    await this.insert(this.parts.name, rows.flatMap((r) => r.parts));
    await this.insert(this.chunks.name, rows.map((r) => r.row));
  }

  private async insert(collection: string, rows: object[]): Promise<void> {
    await upsertRows(this.client, collection, rows);
  }

  private async deleteWhere(collection: string, filter: string): Promise<void> {
    await deleteWhere(this.client, collection, filter);
  }

  /** Deletes chunks rows first (searches stop finding them), then their vectors and record parts. */
  private async removeWhere(chunkWhere: string, partWhere: string): Promise<void> {
    await this.deleteWhere(this.chunks.name, chunkWhere);
    for (const dim of await this.catalog.vectorDims()) await this.deleteWhere(vectorsName(this.catalog.prefix, dim), chunkWhere);
    await this.deleteWhere(this.parts.name, partWhere);
  }

  /** Stored chunks by id, with their vectors and whole records. */
  private async load(ids: string[], withVectors = true): Promise<Map<string, Stored>> {
    const rows = (await this.queryIds(this.chunks.name, ids, ['id', 'dim', 'ordinal', 'record', 'record_parts'], RECORDS_PER_REQUEST)) as unknown as
      Pick<ChunkRow, 'id' | 'dim' | 'ordinal' | 'record' | 'record_parts'>[];
    const records = await this.wholeRecords(rows);
    const vectors = new Map<string, number[]>();
    const dims = new Set(withVectors ? rows.map((r) => Number(r.dim)).filter((d) => d > 0) : []);
    for (const dim of dims) {
      const spec = vectorsSpec(this.catalog.prefix, dim);
      if (!(await this.catalog.exists(spec))) continue;
      const withDim = rows.filter((r) => Number(r.dim) === dim).map((r) => r.id);
      for (const row of await this.queryIds(spec.name, withDim, ['id', 'vector'])) vectors.set(row.id as string, row.vector as number[]);
    }
    const stored = new Map<string, Stored>();
    for (const row of rows) {
      stored.set(row.id, { chunk: chunkFromRecord(records.get(row.id)!, withVectors ? Number(row.dim) : 0, vectors.get(row.id)), ordinal: Number(row.ordinal) });
    }
    return stored;
  }

  /** The whole record JSON of each chunks row: its `record` and its parts joined in order. */
  private async wholeRecords(rows: Pick<ChunkRow, 'id' | 'record' | 'record_parts'>[]): Promise<Map<string, string>> {
    const pieces = new Map(rows.map((r) => [r.id, [r.record]]));
    const split = rows.filter((r) => Number(r.record_parts) > 0);
    for (const batch of batchesOfWeight(split, (r) => Number(r.record_parts), RECORDS_PER_REQUEST)) {
      const expected = batch.reduce((n, r) => n + Number(r.record_parts), 0);
      const parts = await this.query(this.parts.name, isIn('chunk_id', batch.map((r) => r.id)), ['chunk_id', 'seq', 'data'], expected);
      parts.sort((a, b) => Number(a.seq) - Number(b.seq));
      for (const part of parts) pieces.get(part.chunk_id as string)?.push(String(part.data));
    }
    const records = new Map<string, string>();
    for (const row of rows) {
      const found = pieces.get(row.id)!;
      if (found.length !== Number(row.record_parts) + 1) {
        throw new MilvusIndexError('get', `chunk ${row.id} has ${found.length - 1} of its ${row.record_parts} record parts`);
      }
      records.set(row.id, found.join(''));
    }
    return records;
  }

  /**
   * Rewrites the `text` of the chunks whose analysis changed (reanalysis.ts): of each batch of ids, the
   * rows whose record has a character beyond 7-bit ASCII are read whole, and those whose name, keywords,
   * questions or content analyse to another text are upserted with that text, every other field as read.
   * A write of the same chunk by another process between that read and the upsert would be undone (as
   * with two concurrent writes of one chunk); the window is one parts query and one upsert.
   */
  private async rewriteAnalysis(run: ReanalysisRun): Promise<Record<string, number>> {
    const ids = (await this.allIds()).map((r) => String(r.id));
    const counts = { rows: ids.length, scanned: 0, rewritten: 0 };
    for (const batch of chunksOf(ids, RECORDS_PER_REQUEST)) {
      if (run.stopping()) break;
      const heads = await this.queryIds(this.chunks.name, batch, ['id', 'record', 'record_parts'], RECORDS_PER_REQUEST);
      const candidates = heads.filter((r) => Number(r.record_parts) > 0 || mayAnalyseDifferently(String(r.record))).map((r) => String(r.id));
      if (candidates.length > 0) {
        const rows = (await this.queryIds(this.chunks.name, candidates, CHUNK_ROW_FIELDS, RECORDS_PER_REQUEST)) as unknown as ChunkRow[];
        const records = await this.wholeRecords(rows);
        const rewritten = rows.flatMap((row) => {
          const { chunk } = JSON.parse(records.get(row.id)!) as { chunk: IndexedChunk };
          const sources = [chunk.document_name, chunk.content, ...chunk.important_keywords, ...chunk.questions].join('\n');
          const text = mayAnalyseDifferently(sources) ? bm25Text(chunk) : row.text;
          return text === row.text ? [] : [{ ...row, dim: Number(row.dim), ordinal: Number(row.ordinal), record_parts: Number(row.record_parts), text }];
        });
        await this.insert(this.chunks.name, rewritten);
        counts.rewritten += rewritten.length;
      }
      counts.scanned += batch.length;
      run.progress(counts);
    }
    return counts;
  }

  /** Rows of the collection with these ids (in batches). */
  private async queryIds(collection: string, ids: string[], fields: string[], perRequest = IDS_PER_REQUEST): Promise<Row[]> {
    const rows: Row[] = [];
    for (const batch of chunksOf(ids, perRequest)) rows.push(...(await this.query(collection, isIn('id', batch), fields, batch.length)));
    return rows;
  }

  private async query(collection: string, filter: string, fields: string[], limit: number): Promise<Row[]> {
    return queryRows(this.client, collection, filter, fields, limit);
  }

  private async count(collection: string, filter: string): Promise<number> {
    return countRows(this.client, collection, filter);
  }

  /**
   * Every chunk id. milvus-lite answers queries in insertion order, so queryAll cannot page it by key,
   * but it has no result window either: there one query reads them all.
   */
  private async allIds(): Promise<Row[]> {
    try {
      return await this.queryAll(this.chunks.name, '', ['id']);
    } catch (err) {
      if (!(err instanceof UnorderedAnswerError)) throw err;
      return this.query(this.chunks.name, '', ['id'], await this.count(this.chunks.name, ''));
    }
  }

  /**
   * Every row matching `filter`. Up to Milvus's result window in one query; beyond, in pages by primary
   * key (`id > last`), which relies on Milvus answering limited queries in primary-key order (as its own
   * query iterators do).
   */
  private async queryAll(collection: string, filter: string, fields: string[]): Promise<Row[]> {
    const total = await this.count(collection, filter);
    if (total <= RESULT_WINDOW) return this.query(collection, filter, fields, total);
    const rows: Row[] = [];
    let last: string | undefined;
    for (;;) {
      const page = await this.query(collection, and(filter, last !== undefined && `id > ${literal(last)}`), fields, RESULT_WINDOW);
      for (let i = 1; i < page.length; i++) {
        if (String(page[i - 1]!.id) >= String(page[i]!.id)) throw new UnorderedAnswerError(`query ${collection}`);
      }
      rows.push(...page);
      if (page.length < RESULT_WINDOW) return rows;
      last = String(page[page.length - 1]!.id);
    }
  }
}
