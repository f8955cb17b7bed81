import type { Database } from 'better-sqlite3';
import { threadId } from 'node:worker_threads';
import { eachSlice, nextTurn } from '../../batching.js';
import { queryTerms } from '../../retrieval/tokenizer.js';
import { buildMatchExpression, FTS_COLUMNS, MATCH_ROW_BUDGET } from '../fulltext/fts5-match.js';
import { DatasetPostings, type PostingSourceRow, type WeightedStem } from '../fulltext/dataset-postings.js';
import { decodeTotals, idfOf, type TableTotals } from '../fulltext/fts5-bm25.js';
import { PostingsCache } from '../fulltext/postings-cache.js';
import type { VectorSync } from '../vectors/shared-vector-registry.js';
import { SignBitCache } from '../vectors/sign-bit-cache.js';
import { ensureChunkSchema } from './sqlite-schema.js';
import { prepareStatements, toCandidate, toChunk, type ChunkRow, type HitRow, type Statements } from './sqlite-statements.js';
import { ChunkNotFoundError } from './chunk-index.js';
import type { CacheSize, Candidate, ChunkFilter, ChunkIndex, ChunkListQuery, ChunkLoadOptions, ChunkPatch, IndexedChunk } from './chunk-index.js';
import { int8Candidates } from '../vectors/int8-candidates.js';
import { BYTES_PER_ROW, DEFAULT_VECTORS_BYTES, toQuery, VectorCopies, type DatasetVectors, type ExactDatasetVectors, type VectorRow } from '../vectors/vector-copies.js';
import { cosinesOfIds, hitsOfRows } from '../vectors/vector-hits.js';
import { toFloat32Blob, toSignBits } from '../vectors/vector-codec.js';

export interface SqliteChunkIndexOptions {
  /**
   * Vector search first ranks the filtered chunks by Hamming distance of their sign bits, keeps
   * `limit × vectorOversample` of them (default 2), then ranks those by exact cosine; where the int8
   * copies serve, it keeps `limit × min(vectorOversample, 1.25)` by int8 cosine. Infinity = exact search.
   */
  vectorOversample?: number;
  /** Rows the required words of a full-text query may match; see ../fulltext/fts5-match.ts. */
  matchRowBudget?: number;
  /**
   * A reader on a read-only connection (sqlite-read-pool.ts): the tables are not created, and only the
   * read methods may be called. Another connection must have created the schema first.
   */
  readOnly?: boolean;
  /** Bound of the in-memory sign-bit copy (sign-bit-cache.ts), in bytes; default unbounded. */
  signBitsCacheBytes?: number;
  /**
   * Bound of the in-memory vector copies (vector-copies.ts: float32 and int8), in bytes (default 512 MiB;
   * 0 = sign bits and exact cosines always from SQLite). A dataset whose exact copy would not fit gets an
   * int8 copy alone; one whose int8 copy would not fit either is served by the sign bits and SQLite.
   */
  vectorsCacheBytes?: number;
  /** A dataset's vector copy is (re)built once it has gone unwritten this long (default 1 s; 0 = at the first search after a write). */
  vectorsQuietMs?: number;
  /** Shared by a process's connections: one of them builds a vector copy at a time. */
  vectorsBuildLock?: Int32Array;
  /** When a due vector copy is built (default: after the search that found it due; tests build at once). */
  vectorsSchedule?: (build: () => void) => void;
  /** On a reader thread of a pool: receives each vector copy this connection builds; the pool shares them and owns their bound. */
  vectorsPublish?: (copy: DatasetVectors) => void;
  /** Words whose chunk frequencies are kept between writes; the cache starts over past this (default 50,000). */
  termFrequencyCacheEntries?: number;
  /**
   * Bound of the in-memory full-text copies (../fulltext/), in bytes (default 128 MiB; 0 = full text
   * always from FTS5). A dataset whose copy would not fit is searched with FTS5.
   */
  postingsCacheBytes?: number;
  /** A dataset's copy is (re)built once it has gone unwritten this long (default 1 s; 0 = at the first search after a write). */
  postingsQuietMs?: number;
  /** Shared by a process's connections: one of them builds a copy at a time (postings-cache.ts). */
  postingsBuildLock?: Int32Array;
  /** When a due copy is built (default: after the search that found it due; tests build at once). */
  postingsSchedule?: (build: () => void) => void;
}

interface Target {
  rowid: number;
  dataset_id: string;
}

const MIN_COARSE_CANDIDATES = 256;
/**
 * The int8 scan ranks nearly as the exact cosines do: limit × 1.25 candidates keep recall@1024 at 1.000 on
 * the bench's random vectors (0.989 with limit × 1; bench/retrieval/ann.ts), where the sign bits need 2×.
 */
const INT8_OVERSAMPLE = 1.25;
const DEFAULT_CACHED_FREQUENCIES = 50_000;
/** Full text ranks without the filter when the filter's datasets hold at least this share of all chunks… */
const MIN_SCOPE_SHARE = 0.25;
/** …fetching this many times the hits that share should hold, before filtering. */
const SCOPE_OVERFETCH = 1.25;
const MAX_CACHED_SCOPES = 1_000;
const MIN_FEATURE_SLICE = 64;
const DEFAULT_POSTINGS_BYTES = 128 * 2 ** 20;
const DEFAULT_POSTINGS_QUIET_MS = 1000;
const DEFAULT_VECTORS_QUIET_MS = 1000;

/** A search's rows, best first, with their scores. */
type RankedRow = [row: number, score: number];
/** chunk_rows columns of a hit (statement hitFeatures). */
type FeatureRow = [row: number, id: string, dataset_id: string, document_id: string, document_name: string, available: number];

const ids = (values: Iterable<string | number>) => JSON.stringify([...values]);

function filterParams(filter: ChunkFilter) {
  return {
    datasets: ids(filter.datasetIds),
    documents: filter.documentIds ? ids(filter.documentIds) : null,
    available: filter.availableOnly ? 1 : 0,
  };
}

/** Corpus statistics for the full-text query plan (../fulltext/fts5-match.ts). */
interface TermStats {
  chunkCount: number;
  /** Number of chunks whose text contains each stem; stems found nowhere are absent. */
  chunkFrequency: Map<string, number>;
}

/**
 * Chunks per write transaction. The index writes on the event loop (~0.25 ms a chunk with its full text and
 * vector), so one transaction for a large document held the loop for seconds (~5 s for 20,000 chunks): no
 * HTTP answer, no heartbeat meanwhile. A large write is therefore no longer atomic: its slices are seen as
 * they commit. Measured by bench/ingest/index-writes.ts (docs/operations.md, "Large documents: off the event loop").
 */
export const WRITE_SLICE = 500;
/** Chunks per delete transaction: a delete costs less a chunk than a write, and every commit pays FTS5's own work (bench/ingest/index-writes.ts times both). */
export const REMOVE_SLICE = 2000;

/** chunk_rows.terms held stems for term similarity before it came from BM25: kept in the schema, left empty. */
const NO_TERMS = Buffer.alloc(0);

/**
 * ChunkIndex on the service's SQLite database: FTS5 for full text, sqlite-vec distance functions for
 * vectors (after an in-memory Hamming preselection, sign-bit-cache.ts). The connection must have
 * sqlite-vec loaded (configureIndexConnection); the constructor creates the tables if needed.
 */
export class SqliteChunkIndex implements ChunkIndex {
  private readonly vectorOversample: number;
  private readonly matchRowBudget: number;
  private readonly sql: Statements;
  private readonly signBits: SignBitCache;
  private frequencies = { writes: -1, byStem: new Map<string, number>() };
  private scopeCounts = { writes: -1, byDatasets: new Map<string, number>() };
  private readonly maxCachedFrequencies: number;
  private readonly postings: PostingsCache;
  private readonly vectors: VectorCopies;
  /** Runs a read in one transaction, so that generations and rows come from one snapshot. */
  private readonly inReadTransaction: <T>(read: () => T) => T;

  constructor(private readonly db: Database, options: SqliteChunkIndexOptions = {}) {
    try {
      db.prepare('SELECT vec_version()').get();
    } catch {
      throw new Error('SqliteChunkIndex needs sqlite-vec: call sqliteVec.load(db) on the connection first');
    }
    if (!options.readOnly) ensureChunkSchema(db);
    db.function('chunk_icontains', { deterministic: true }, (text: unknown, needle: unknown) =>
      String(text).toLowerCase().includes(String(needle).toLowerCase()) ? 1 : 0);
    this.vectorOversample = options.vectorOversample ?? 2;
    this.matchRowBudget = options.matchRowBudget ?? MATCH_ROW_BUDGET;
    this.maxCachedFrequencies = options.termFrequencyCacheEntries ?? DEFAULT_CACHED_FREQUENCIES;
    this.sql = prepareStatements(db);
    this.signBits = new SignBitCache({
      generations: (datasetIds) => this.generationsOf(datasetIds),
      keys: (datasetId) => (this.sql.dimsOf.all(datasetId) as number[]).map((dim) => {
        const [rows, available, bits] = this.sql.keysOf.get(datasetId, dim) as [string, string, Buffer];
        return {
          dim,
          rows: Float64Array.from(rows.split(','), Number),
          available: Buffer.from(available, 'latin1').map((c) => c - 48),
          bits,
        };
      }),
    }, options.signBitsCacheBytes);
    this.vectors = new VectorCopies({
      sizeOf: (datasetId) => ({
        exactBytes: this.sql.vectorBytesOf.get({ dataset: datasetId, perRow: BYTES_PER_ROW }) as number,
        groups: (this.sql.vectorCountsOf.all(datasetId) as [number, number][]).map(([dim, count]) => ({ dim, count })),
      }),
      read: (datasetId, use) => this.inReadTransaction(() => use(
        (this.sql.generationOf.get(datasetId) as number | undefined) ?? 0,
        (this.sql.vectorCountsOf.all(datasetId) as [number, number][]).map(([dim, count]) => ({
          dim,
          count,
          rows: () => this.sql.vectorsOf.iterate(datasetId, dim) as Iterable<VectorRow>,
        })),
      )),
    }, {
      maxBytes: options.vectorsCacheBytes ?? DEFAULT_VECTORS_BYTES,
      quietMs: options.vectorsQuietMs ?? DEFAULT_VECTORS_QUIET_MS,
      buildLock: options.vectorsBuildLock,
      threadId,
      schedule: options.vectorsSchedule,
      publish: options.vectorsPublish,
      // A failed build leaves SQLite serving; the next search schedules it again.
      onBuildError: () => undefined,
    });
    const transaction = db.transaction((read: () => unknown) => read());
    this.inReadTransaction = <T>(read: () => T) => (db.inTransaction ? read() : transaction(read) as T);
    this.postings = new PostingsCache({
      generations: (datasetIds) => this.generationsOf(datasetIds),
      chunkCount: (datasetId) => this.sql.chunksInDatasets.get(ids([datasetId])) as number,
      build: (datasetId) => this.db.transaction(() => ({
        generation: (this.sql.generationOf.get(datasetId) as number | undefined) ?? 0,
        postings: DatasetPostings.build(datasetId, this.sql.postingRowsOf.iterate(datasetId) as Iterable<PostingSourceRow>),
      }))(),
    }, {
      maxBytes: options.postingsCacheBytes ?? DEFAULT_POSTINGS_BYTES,
      quietMs: options.postingsQuietMs ?? DEFAULT_POSTINGS_QUIET_MS,
      buildLock: options.postingsBuildLock,
      threadId,
      schedule: options.postingsSchedule,
      // A failed build (e.g. the file went away) leaves FTS5 serving; the next search schedules it again.
      onBuildError: () => undefined,
    });
  }

  /** Tells every process's caches that the datasets changed; called inside write transactions. */
  private touch(datasetIds: Iterable<string>): void {
    this.sql.countWrite.run();
    for (const id of new Set(datasetIds)) this.sql.bumpGeneration.run(id);
  }

  /** Writes in transactions of WRITE_SLICE chunks, the event loop turning between them (see WRITE_SLICE). */
  async upsert(chunks: IndexedChunk[]): Promise<void> {
    // Last write wins when a batch repeats an id.
    const unique = [...new Map(chunks.map((c) => [c.id, c])).values()];
    await eachSlice(unique, WRITE_SLICE, this.db.transaction((slice: IndexedChunk[]) => {
      const existing = this.sql.targetsById.all(ids(slice.map((c) => c.id))) as Target[];
      this.removeDerived(existing);
      this.writeChunks(slice);
      this.sql.addChunkCount.run(slice.length - existing.length);
      this.touch([...slice.map((c) => c.dataset_id), ...existing.map((t) => t.dataset_id)]);
    }));
  }

  /**
   * Writes the chunks' rows, keys and vectors, then their full text. FTS5 writes out the full text it holds in
   * memory whenever a later statement of the transaction opens a statement journal (the row upsert does): written
   * row by row, each chunk became a segment of its own, and merging those segments cost ~5x the upserts themselves
   * (bench/ingest/index-writes.ts). Chunks rewritten in place (their rowid kept) still cost a segment each: FTS5
   * (contentless_delete) writes out a rowid deleted and inserted again in one transaction. Parsing deletes a
   * document's chunks before writing its new ones, so its rows are new.
   */
  private writeChunks(chunks: IndexedChunk[]): void {
    const rowids = chunks.map((c) => this.writeRow(c));
    chunks.forEach((c, i) => this.sql.insertFts.run(rowids[i], c.document_name, c.content, c.important_keywords.join('\n'), c.questions.join('\n')));
  }

  /** The chunk's row, key and vector, not its full text (writeChunks); returns its rowid. */
  private writeRow(c: IndexedChunk): number {
    const first = c.positions[0];
    const { rowid } = this.sql.upsertRow.get({
      id: c.id,
      tenant_id: c.tenant_id,
      dataset_id: c.dataset_id,
      document_id: c.document_id,
      document_name: c.document_name,
      content: c.content,
      important_keywords: JSON.stringify(c.important_keywords),
      questions: JSON.stringify(c.questions),
      tag_kwd: JSON.stringify(c.tag_kwd),
      image_id: c.image_id,
      positions: JSON.stringify(c.positions),
      available: c.available ? 1 : 0,
      create_time: c.create_time,
      create_timestamp: c.create_timestamp,
      parent_content: c.parent_content ?? null,
      terms: NO_TERMS,
      page_number: first ? first[0] : 0,
      top: first ? first[3] : 0,
      raptor_layer: c.raptor_layer ?? 0,
    }) as { rowid: number };
    const dim = c.vector.length;
    this.sql.insertKey.run(c.dataset_id, rowid, c.document_id, c.available ? 1 : 0, dim, dim > 0 ? toSignBits(c.vector) : null);
    if (dim > 0) this.sql.insertVector.run(rowid, toFloat32Blob(c.vector));
    return rowid;
  }

  /** Removes everything derived from the rows (full text, keys, vectors), leaving chunk_rows. */
  private removeDerived(targets: Target[]): void {
    if (targets.length === 0) return;
    const rowids = ids(targets.map((t) => t.rowid));
    this.sql.deleteFts.run(rowids);
    this.sql.deleteVectors.run(rowids);
    this.sql.deleteKeys.run(JSON.stringify([...new Set(targets.map((t) => t.dataset_id))]), rowids);
  }

  /** Removes the rows `select` finds, in one transaction; returns how many. */
  private remove(select: () => Target[]): number {
    return this.db.transaction(() => {
      const targets = select();
      this.removeDerived(targets);
      if (targets.length > 0) this.sql.deleteRows.run(ids(targets.map((t) => t.rowid)));
      this.sql.addChunkCount.run(-targets.length);
      this.touch(targets.map((t) => t.dataset_id));
      return targets.length;
    })();
  }

  /**
   * Removes every row `select(limit)` finds, at most REMOVE_SLICE a transaction, until one finds fewer: each
   * transaction selects afresh, so a row written or removed meanwhile by another call is never mistaken.
   */
  private async removeAll(select: (limit: number) => Target[]): Promise<number> {
    let removed = 0;
    for (;;) {
      const n = this.remove(() => select(REMOVE_SLICE));
      removed += n;
      if (n < REMOVE_SLICE) return removed;
      await nextTurn();
    }
  }

  async get(id: string): Promise<IndexedChunk | undefined> {
    return (await this.getMany([id]))[0];
  }

  /** The chunks found, in the order of `ids`. */
  async getMany(chunkIds: string[], options: ChunkLoadOptions = {}): Promise<IndexedChunk[]> {
    if (chunkIds.length === 0) return [];
    const statement = options.vectors === false ? this.sql.getManyWithoutVectors : this.sql.getMany;
    const rows = statement.all(ids(new Set(chunkIds))) as ChunkRow[];
    const byId = new Map(rows.map((r) => [r.id, toChunk(r)]));
    return chunkIds.flatMap((id) => byId.get(id) ?? []);
  }

  async update(id: string, patch: ChunkPatch): Promise<void> {
    this.db.transaction(() => {
      const row = this.sql.getMany.get(ids([id])) as ChunkRow | undefined;
      if (!row) throw new ChunkNotFoundError(id);
      const given = Object.entries(patch).filter(([, value]) => value !== undefined);
      const merged: IndexedChunk = { ...toChunk(row), ...Object.fromEntries(given) };
      this.removeDerived([{ rowid: row.rowid, dataset_id: row.dataset_id }]);
      this.writeChunks([merged]);
      this.touch([row.dataset_id]);
    })();
  }

  async deleteChunks(chunkIds: string[]): Promise<number> {
    let removed = 0;
    await eachSlice([...new Set(chunkIds)], REMOVE_SLICE, (slice) => {
      removed += this.remove(() => this.sql.targetsById.all(ids(slice)) as Target[]);
    });
    return removed;
  }

  async deleteByDocument(documentId: string): Promise<number> {
    return this.removeAll((limit) => this.sql.targetsByDocument.all(documentId, limit) as Target[]);
  }

  /**
   * Renames the chunks the document has when called, WRITE_SLICE a transaction (chunks removed meanwhile are
   * skipped): their rows and full text (the title is a column of it); keys and vectors do not hold the name.
   */
  async renameDocument(documentId: string, name: string): Promise<number> {
    let renamed = 0;
    await eachSlice(this.sql.rowsByDocument.all(documentId) as number[], WRITE_SLICE, this.db.transaction((slice: number[]) => {
      const targets = this.sql.renameRows.all(name, documentId, ids(slice)) as Target[];
      const rowids = ids(targets.map((t) => t.rowid));
      this.sql.deleteFts.run(rowids);
      this.sql.refillFts.run(rowids);
      this.touch(targets.map((t) => t.dataset_id));
      renamed += targets.length;
    }));
    return renamed;
  }

  async deleteByDataset(datasetId: string): Promise<number> {
    return this.removeAll((limit) => this.sql.targetsByDataset.all(datasetId, limit) as Target[]);
  }

  async countByDocument(documentId: string): Promise<number> {
    return (this.sql.countByDocument.get(documentId) as { n: number }).n;
  }

  /** Chunks of a document in reading order (page, top, creation), filtered by content keywords or id. */
  async list(documentId: string, query: ChunkListQuery): Promise<{ total: number; chunks: IndexedChunk[] }> {
    const params = { document: documentId, id: query.id ?? null, keywords: query.keywords?.trim() || null };
    const pageSize = Math.max(1, Math.floor(query.pageSize));
    const page = Math.max(1, Math.floor(query.page));
    const total = (this.sql.listCount.get(params) as { n: number }).n;
    const rows = this.sql.listPage.all({ ...params, limit: pageSize, offset: (page - 1) * pageSize }) as ChunkRow[];
    return { total, chunks: rows.map(toChunk) };
  }

  async fullText(query: string, filter: ChunkFilter, limit: number): Promise<Candidate[]> {
    return this.fullTextHits(query, filter, limit).map(toCandidate);
  }

  /** fullText's hits as rows: plain data that can cross to another thread. */
  fullTextHits(query: string, filter: ChunkFilter, limit: number): HitRow[] {
    if (filter.datasetIds.length === 0 || limit <= 0) return [];
    const terms = queryTerms(query);
    const inMemory = this.fullTextInMemory(terms.map((t) => t.stem), filter, limit);
    if (inMemory) return inMemory;
    const stats = this.termStatsNow(terms.map((t) => t.stem));
    const match = buildMatchExpression(
      terms.map((t) => ({ word: t.word, chunkFrequency: stats.chunkFrequency.get(t.stem) ?? 0 })),
      stats.chunkCount,
      Math.max(this.matchRowBudget, 4 * limit),
    );
    if (match === null) return [];
    const share = this.scopeShare(filter);
    if (share >= MIN_SCOPE_SHARE) {
      // Most chunks are in scope: rank without a join per matched row, then filter the winners.
      const fetch = Math.ceil((limit / share) * SCOPE_OVERFETCH);
      const ranked = this.sql.fullTextUnscoped.all({ match, limit: fetch }) as RankedRow[];
      const hits = this.scopedHits(ranked, filter, limit);
      if (hits.length >= limit || ranked.length < fetch) return hits;
    }
    return this.sql.fullText.all({ ...filterParams(filter), match, limit }) as HitRow[];
  }

  /**
   * fullTextHits from the datasets' in-memory copies (../fulltext/): bm25 over every word of the
   * question, as FTS5 computes it for an OR of the words, without SQL per matched row. Undefined when a
   * dataset has no current copy (being written, or too big), and full text then comes from FTS5.
   */
  private fullTextInMemory(stems: string[], filter: ChunkFilter, limit: number): HitRow[] | undefined {
    const totals = decodeTotals(this.sql.ftsTotals.get() as Buffer | undefined, FTS_COLUMNS.length);
    if (!totals) return undefined;
    const copies = this.postings.current(filter.datasetIds, totals.averageLength);
    if (!copies) return undefined;
    // bm25's idf counts the rows of the whole table: from the copies when they hold every row, else from FTS5.
    const wholeTable = copies.reduce((rows, copy) => rows + copy.rowCount, 0) === totals.rowCount;
    const stats = wholeTable
      ? this.termStatsNow(stems, (missing) => new Map(missing.map((s) => [s, copies.reduce((n, copy) => n + copy.rowsWith(s), 0)])))
      : this.termStatsNow(stems);
    const words = this.weightedStems(stems, stats, totals);
    const postingFilter = { availableOnly: filter.availableOnly, documentIds: filter.documentIds ? new Set(filter.documentIds) : undefined };
    const hits = copies.flatMap((copy) => copy.search(words, totals, postingFilter, limit));
    if (copies.length > 1) hits.sort((a, b) => b[1] - a[1]);
    return hits.slice(0, limit);
  }

  /** The question's stems found in the index with their idf, computed by SQLite's ln() as FTS5 computes it. */
  private weightedStems(stems: string[], stats: TermStats, totals: TableTotals): WeightedStem[] {
    const found = stems.filter((s) => (stats.chunkFrequency.get(s) ?? 0) > 0);
    if (found.length === 0) return [];
    const logs = this.sql.logRatios.all({ rows: totals.rowCount, hits: ids(found.map((s) => stats.chunkFrequency.get(s)!)) }) as number[];
    return found.map((stem, i) => ({ stem, idf: idfOf(logs[i]!) }));
  }

  /**
   * The share of all chunks that the filter's datasets hold (0 with a document filter, which is usually
   * narrow), counted once per write to the index.
   */
  private scopeShare(filter: ChunkFilter): number {
    if (filter.documentIds) return 0;
    const [chunkCount, writes] = this.sql.counters.get() as [number, number];
    if (!(chunkCount > 0)) return 0;
    if (this.scopeCounts.writes !== writes || this.scopeCounts.byDatasets.size >= MAX_CACHED_SCOPES) {
      this.scopeCounts = { writes, byDatasets: new Map() };
    }
    const key = ids([...new Set(filter.datasetIds)].sort());
    let count = this.scopeCounts.byDatasets.get(key);
    if (count === undefined) {
      count = this.sql.chunksInDatasets.get(key) as number;
      this.scopeCounts.byDatasets.set(key, count);
    }
    return count / chunkCount;
  }

  /**
   * The first `limit` of `ranked` (best first) that pass the filter on their current rows, as hits. Rows
   * are looked up in slices, so that a filter that rejects few reads few more than `limit` rows.
   */
  private scopedHits(ranked: RankedRow[], filter: ChunkFilter, limit: number): HitRow[] {
    const datasets = new Set(filter.datasetIds);
    const documents = filter.documentIds ? new Set(filter.documentIds) : undefined;
    const hits: HitRow[] = [];
    for (let next = 0; next < ranked.length && hits.length < limit;) {
      const slice = ranked.slice(next, next + Math.max(MIN_FEATURE_SLICE, limit - hits.length));
      next += slice.length;
      const rows = this.sql.hitFeatures.all(ids(slice.map(([row]) => row))) as FeatureRow[];
      const features = new Map(rows.map((f) => [f[0], f]));
      for (const [row, score] of slice) {
        const f = features.get(row);
        if (!f || !datasets.has(f[2]) || (filter.availableOnly && f[5] !== 1) || (documents && !documents.has(f[3]))) continue;
        hits.push([f[1], score, f[2], f[3], f[4]]);
        if (hits.length === limit) break;
      }
    }
    return hits;
  }

  /**
   * Two stages: chunks are preselected by int8 cosine when every dataset has a current in-memory copy
   * (`limit × 1.25`, at least 256; vector-copies.ts, int8-candidates.ts), else by Hamming distance of their
   * sign bits (`limit × vectorOversample`, at least 256); then their exact cosines come from the datasets'
   * exact copies or, when a dataset has none, from SQLite; the best that pass the filter on their current rows are the hits. One read
   * transaction: the copies' generations and the rows are of one snapshot.
   */
  async vectorSearch(vector: number[], filter: ChunkFilter, limit: number): Promise<Candidate[]> {
    return this.vectorSearchHits(vector, filter, limit).map(toCandidate);
  }

  /** vectorSearch's hits as rows: plain data that can cross to another thread. */
  vectorSearchHits(vector: number[], filter: ChunkFilter, limit: number): HitRow[] {
    if (vector.length === 0 || filter.datasetIds.length === 0 || limit <= 0) return [];
    return this.inReadTransaction(() => {
      const rows = filter.documentIds
        ? new Set(this.sql.rowsOfDocuments.all(ids(filter.documentIds)) as number[])
        : undefined;
      const count = (oversample: number) => Math.max(MIN_COARSE_CANDIDATES, Math.ceil(limit * oversample));
      const copies = this.vectors.current(filter.datasetIds, this.generationsOf(filter.datasetIds));
      const located = copies ? int8Candidates(
        copies.flatMap((c) => c.groups), vector, { availableOnly: filter.availableOnly, rows },
        count(Number.isFinite(this.vectorOversample) ? Math.min(this.vectorOversample, INT8_OVERSAMPLE) : Infinity),
      ) : undefined;
      // The int8 copies serve these datasets: their sign bits are not needed (reloaded if a copy is dropped).
      if (located) this.signBits.forget(filter.datasetIds);
      const coarse = located?.rows
        ?? this.signBits.nearest(toSignBits(vector), vector.length, { datasetIds: filter.datasetIds, availableOnly: filter.availableOnly, rows }, count(this.vectorOversample));
      if (coarse.length === 0) return [];
      const exact = copies?.filter((c): c is ExactDatasetVectors => c.kind === 'exact');
      if (exact && exact.length === copies!.length) return hitsOfRows(exact, coarse, toQuery(vector), filter, limit, located);
      const ranked = this.sql.cosinesOfRows.all({ rows: ids(coarse), bytes: vector.length * 4, vector: toFloat32Blob(vector) }) as RankedRow[];
      ranked.sort((a, b) => b[1] - a[1]);
      return this.scopedHits(ranked, filter, limit);
    });
  }

  private generationsOf(datasetIds: string[]): Map<string, number> {
    return new Map(this.sql.generations.all(ids(datasetIds)) as [string, number][]);
  }

  /**
   * fts5vocab counts a term's chunks by walking its whole posting list (the longer, the more common the
   * word), so counts are cached until the next write to the index, by any process. `count` finds
   * the missing ones (default: fts5vocab; the in-memory copies when they hold the whole table).
   */
  private termStatsNow(stems: string[], count = (missing: string[]) => new Map(this.sql.termFrequencies.all(ids(missing)) as [string, number][])): TermStats {
    const [chunkCount, writes] = this.sql.counters.get() as [number, number];
    const unique = [...new Set(stems)];
    const known = this.frequencies.writes === writes ? this.frequencies.byStem : undefined;
    // Starts over after a write, and rather than grow past its bound (a query's own words always fit).
    if (!known || known.size + unique.filter((s) => !known.has(s)).length > this.maxCachedFrequencies) {
      this.frequencies = { writes, byStem: new Map() };
    }
    const { byStem } = this.frequencies;
    const missing = unique.filter((s) => !byStem.has(s));
    if (missing.length > 0) {
      const found = count(missing);
      for (const stem of missing) byStem.set(stem, found.get(stem) ?? 0);
    }
    return { chunkCount, chunkFrequency: new Map(stems.flatMap((s) => (byStem.get(s) ? [[s, byStem.get(s)!]] : []))) };
  }

  async cosineSimilarities(chunkIds: string[], vector: number[]): Promise<Map<string, number>> {
    return this.cosineSimilaritiesNow(chunkIds, vector);
  }

  /**
   * cosineSimilarities, synchronously: the ids found in a current in-memory vector copy get their cosine
   * from it, the others (datasets without a current copy, chunks without a vector of the query's
   * dimension) from SQLite. One read transaction: the copies' generations and the rows are of one snapshot.
   */
  cosineSimilaritiesNow(chunkIds: string[], vector: number[]): Map<string, number> {
    if (chunkIds.length === 0 || vector.length === 0) return new Map();
    return this.inReadTransaction(() => {
      const unique = [...new Set(chunkIds)];
      const groups = this.vectors.currentHeld((datasetIds) => this.generationsOf(datasetIds))
        .flatMap((copy) => copy.groups.filter((g) => g.dim === vector.length));
      const { cosines, missing } = cosinesOfIds(groups, unique, toQuery(vector));
      if (missing.length > 0) {
        const rows = this.sql.cosines.all({ ids: ids(missing), bytes: vector.length * 4, vector: toFloat32Blob(vector) }) as [string, number][];
        for (const [id, cosine] of rows) cosines.set(id, cosine);
      }
      return cosines;
    });
  }

  /** Takes the vector copies another thread of the pool built, and forgets the ones the pool dropped. */
  syncVectors(sync: VectorSync): void {
    this.vectors.drop(sync.drop);
    this.vectors.adopt(sync.adopt);
  }

  /** The datasets whose vectors were searched since the last call (the pool's least-recently-used order). */
  takeVectorsUsed(): string[] {
    return this.vectors.takeUsed();
  }

  async ping(): Promise<void> {
    this.sql.ping.get();
  }

  /** Nothing to end: the connection belongs to whoever opened it, and the in-memory copies go with this object. */
  async close(): Promise<void> {}

  async cacheSizes(): Promise<CacheSize[]> {
    const signBits = this.signBits.size();
    const postings = this.postings.size();
    const vectors = this.vectors.size();
    return [
      { name: 'sign_bits', entries: signBits.vectors, bytes: signBits.bytes },
      { name: 'vectors', entries: vectors.vectors, bytes: vectors.bytes },
      { name: 'term_frequencies', entries: this.frequencies.byStem.size },
      { name: 'postings', entries: postings.chunks, bytes: postings.bytes },
    ];
  }
}
