import type { Database } from 'better-sqlite3';
import { queryTerms, termSet } from '../retrieval/tokenizer.js';
import { buildMatchExpression, FTS_WEIGHTS, MATCH_ROW_BUDGET, SCOPE_TOKEN } from './fts-query.js';
import { ensureChunkSchema } from './sqlite-schema.js';
import type { Candidate, ChunkFilter, ChunkIndex, ChunkListQuery, ChunkPatch, IndexedChunk, TermStats } from './types.js';
import { ChunkNotFoundError } from './types.js';
import { encodeTermHashes, termHashLookup } from './term-hashes.js';
import { fromFloat32Blob, toFloat32Blob, toSignBits } from './vector-codec.js';

export interface SqliteChunkIndexOptions {
  /**
   * Vector search first ranks the filtered chunks by Hamming distance of their sign bits, keeps
   * `limit × vectorOversample` of them, then ranks those by exact cosine. Infinity = exact search.
   */
  vectorOversample?: number;
  /** Rows the required words of a full-text query may match; see fts-query.ts. */
  matchRowBudget?: number;
}

interface ChunkRow {
  rowid: number;
  id: string;
  tenant_id: string;
  dataset_id: string;
  document_id: string;
  document_name: string;
  content: string;
  important_keywords: string;
  questions: string;
  tag_kwd: string;
  image_id: string;
  positions: string;
  available: number;
  create_time: string;
  create_timestamp: number;
  parent_content: string | null;
  vector: Buffer | null;
}

interface Target {
  rowid: number;
  dataset_id: string;
}

const MIN_COARSE_CANDIDATES = 256;

const ids = (values: Iterable<string | number>) => JSON.stringify([...values]);

function filterParams(filter: ChunkFilter) {
  return {
    datasets: ids(filter.datasetIds),
    documents: filter.documentIds ? ids(filter.documentIds) : null,
    available: filter.availableOnly ? 1 : 0,
  };
}

const FILTER_SQL = `
  (:available = 0 OR k.available = 1)
  AND (:documents IS NULL OR k.document_id IN (SELECT value FROM json_each(:documents)))`;

const ROW_COLUMNS = `r.rowid, r.id, r.tenant_id, r.dataset_id, r.document_id, r.document_name, r.content,
  r.important_keywords, r.questions, r.tag_kwd, r.image_id, r.positions, r.available, r.create_time,
  r.create_timestamp, r.parent_content, v.vector`;

/** Columns of a search hit after its id and score, in the order of HitRow. */
const HIT_FEATURES = 'r.dataset_id, r.document_id, r.document_name, r.terms';
type HitRow = [id: string, score: number, dataset_id: string, document_id: string, document_name: string, terms: Buffer];

function toCandidate([id, score, dataset_id, document_id, document_name, terms]: HitRow): Candidate {
  return { id, score, dataset_id, document_id, document_name, hasTerm: termHashLookup(terms) };
}

function toChunk(row: ChunkRow): IndexedChunk {
  const chunk: IndexedChunk = {
    id: row.id,
    tenant_id: row.tenant_id,
    dataset_id: row.dataset_id,
    document_id: row.document_id,
    document_name: row.document_name,
    content: row.content,
    important_keywords: JSON.parse(row.important_keywords),
    questions: JSON.parse(row.questions),
    tag_kwd: JSON.parse(row.tag_kwd),
    image_id: row.image_id,
    positions: JSON.parse(row.positions),
    available: row.available === 1,
    create_time: row.create_time,
    create_timestamp: row.create_timestamp,
    vector: row.vector ? fromFloat32Blob(row.vector) : [],
  };
  if (row.parent_content !== null) chunk.parent_content = row.parent_content;
  return chunk;
}

/** The stems a chunk is matched on by term similarity, as stored in chunk_rows.terms. */
function chunkTerms(c: IndexedChunk): Buffer {
  return encodeTermHashes(termSet([c.content, ...c.important_keywords, ...c.questions, c.document_name]));
}

function prepareStatements(db: Database) {
  const p = (source: string) => db.prepare(source);
  return {
    upsertRow: p(`
      INSERT INTO chunk_rows (id, tenant_id, dataset_id, document_id, document_name, content, important_keywords,
        questions, tag_kwd, image_id, positions, available, create_time, create_timestamp, parent_content, terms,
        page_number, top)
      VALUES (:id, :tenant_id, :dataset_id, :document_id, :document_name, :content, :important_keywords,
        :questions, :tag_kwd, :image_id, :positions, :available, :create_time, :create_timestamp, :parent_content,
        :terms, :page_number, :top)
      ON CONFLICT (id) DO UPDATE SET tenant_id = excluded.tenant_id, dataset_id = excluded.dataset_id,
        document_id = excluded.document_id, document_name = excluded.document_name, content = excluded.content,
        important_keywords = excluded.important_keywords, questions = excluded.questions, tag_kwd = excluded.tag_kwd,
        image_id = excluded.image_id, positions = excluded.positions, available = excluded.available,
        create_time = excluded.create_time, create_timestamp = excluded.create_timestamp,
        parent_content = excluded.parent_content, terms = excluded.terms, page_number = excluded.page_number,
        top = excluded.top
      RETURNING rowid`),
    insertFts: p(`INSERT INTO chunk_fts (rowid, title, content, important_keywords, questions, scope)
      VALUES (?, ?, ?, ?, ?, '${SCOPE_TOKEN}')`),
    insertKey: p(`INSERT INTO chunk_keys (dataset_id, row, document_id, available, dim, bits) VALUES (?, ?, ?, ?, ?, ?)`),
    insertVector: p(`INSERT INTO chunk_vectors (row, vector) VALUES (?, ?)`),
    deleteFts: p(`DELETE FROM chunk_fts WHERE rowid IN (SELECT value FROM json_each(?))`),
    deleteVectors: p(`DELETE FROM chunk_vectors WHERE row IN (SELECT value FROM json_each(?))`),
    deleteKeys: p(`DELETE FROM chunk_keys WHERE (dataset_id, row) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`),
    deleteRows: p(`DELETE FROM chunk_rows WHERE rowid IN (SELECT value FROM json_each(?))`),
    targetsById: p(`SELECT rowid, dataset_id FROM chunk_rows WHERE id IN (SELECT value FROM json_each(?))`),
    targetsByDocument: p(`SELECT rowid, dataset_id FROM chunk_rows WHERE document_id = ?`),
    targetsByDataset: p(`SELECT rowid, dataset_id FROM chunk_rows WHERE dataset_id = ?`),
    getMany: p(`SELECT ${ROW_COLUMNS} FROM json_each(?) j JOIN chunk_rows r ON r.id = j.value
      LEFT JOIN chunk_vectors v ON v.row = r.rowid`),
    countByDocument: p(`SELECT count(*) AS n FROM chunk_rows WHERE document_id = ?`),
    listPage: p(`SELECT ${ROW_COLUMNS} FROM chunk_rows r LEFT JOIN chunk_vectors v ON v.row = r.rowid
      WHERE r.document_id = :document AND (:id IS NULL OR r.id = :id)
        AND (:keywords IS NULL OR chunk_icontains(r.content, :keywords))
      ORDER BY r.page_number, r.top, r.create_timestamp, r.rowid LIMIT :limit OFFSET :offset`),
    listCount: p(`SELECT count(*) AS n FROM chunk_rows r
      WHERE r.document_id = :document AND (:id IS NULL OR r.id = :id)
        AND (:keywords IS NULL OR chunk_icontains(r.content, :keywords))`),
    fullText: p(`
      WITH hits AS (
        SELECT chunk_fts.rowid AS row, bm25(chunk_fts, ${FTS_WEIGHTS.join(', ')}) AS rank
        FROM chunk_fts
        JOIN chunk_keys k ON k.dataset_id IN (SELECT value FROM json_each(:datasets)) AND k.row = chunk_fts.rowid
        WHERE chunk_fts MATCH :match AND ${FILTER_SQL}
        ORDER BY rank LIMIT :limit)
      SELECT r.id, -h.rank, ${HIT_FEATURES}
      FROM hits h JOIN chunk_rows r ON r.rowid = h.row ORDER BY h.rank`).raw(),
    vectorSearch: p(`
      WITH coarse AS (
        SELECT k.row FROM chunk_keys k
        WHERE k.dataset_id IN (SELECT value FROM json_each(:datasets)) AND k.dim = :dim AND ${FILTER_SQL}
        ORDER BY vec_distance_hamming(vec_bit(k.bits), vec_bit(:bits)) LIMIT :coarse),
      fine AS (
        SELECT row, distance FROM (
          SELECT c.row, vec_distance_cosine(v.vector, :vector) AS distance
          FROM coarse c JOIN chunk_vectors v ON v.row = c.row)
        WHERE distance IS NOT NULL ORDER BY distance LIMIT :limit)
      SELECT r.id, 1 - f.distance, ${HIT_FEATURES}
      FROM fine f JOIN chunk_rows r ON r.rowid = f.row ORDER BY f.distance`).raw(),
    cosines: p(`
      SELECT id, cosine FROM (
        SELECT r.id, 1 - vec_distance_cosine(v.vector, :vector) AS cosine
        FROM json_each(:ids) j JOIN chunk_rows r ON r.id = j.value JOIN chunk_vectors v ON v.row = r.rowid
        WHERE length(v.vector) = :bytes)
      WHERE cosine IS NOT NULL`).raw(),
    termFrequencies: p(`SELECT term, doc FROM chunk_fts_terms WHERE term IN (SELECT value FROM json_each(?))`),
    chunkCount: p(`SELECT value AS n FROM chunk_stats WHERE name = 'chunk_count'`),
    addChunkCount: p(`UPDATE chunk_stats SET value = value + ? WHERE name = 'chunk_count'`),
    ping: p(`SELECT 1 FROM chunk_rows LIMIT 1`),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

/**
 * ChunkIndex on the service's SQLite database: FTS5 for full text, sqlite-vec distance functions for
 * vectors. The connection must have sqlite-vec loaded; the constructor creates the tables if needed.
 */
export class SqliteChunkIndex implements ChunkIndex {
  private readonly vectorOversample: number;
  private readonly matchRowBudget: number;
  private readonly sql: Statements;

  constructor(private readonly db: Database, options: SqliteChunkIndexOptions = {}) {
    try {
      db.prepare('SELECT vec_version()').get();
    } catch {
      throw new Error('SqliteChunkIndex needs sqlite-vec: call sqliteVec.load(db) on the connection first');
    }
    ensureChunkSchema(db);
    db.function('chunk_icontains', { deterministic: true }, (text: unknown, needle: unknown) =>
      String(text).toLowerCase().includes(String(needle).toLowerCase()) ? 1 : 0);
    this.vectorOversample = options.vectorOversample ?? 2;
    this.matchRowBudget = options.matchRowBudget ?? MATCH_ROW_BUDGET;
    this.sql = prepareStatements(db);
  }

  async upsert(chunks: IndexedChunk[]): Promise<void> {
    if (chunks.length === 0) return;
    this.db.transaction(() => {
      // Last write wins when a batch repeats an id.
      const unique = [...new Map(chunks.map((c) => [c.id, c])).values()];
      const existing = this.sql.targetsById.all(ids(unique.map((c) => c.id))) as Target[];
      this.removeDerived(existing);
      for (const chunk of unique) this.writeChunk(chunk);
      this.sql.addChunkCount.run(unique.length - existing.length);
    })();
  }

  private writeChunk(c: IndexedChunk): void {
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
      terms: chunkTerms(c),
      page_number: first ? first[0] : 0,
      top: first ? first[3] : 0,
    }) as { rowid: number };
    this.sql.insertFts.run(rowid, c.document_name, c.content, c.important_keywords.join('\n'), c.questions.join('\n'));
    const dim = c.vector.length;
    this.sql.insertKey.run(c.dataset_id, rowid, c.document_id, c.available ? 1 : 0, dim, dim > 0 ? toSignBits(c.vector) : null);
    if (dim > 0) this.sql.insertVector.run(rowid, toFloat32Blob(c.vector));
  }

  /** Removes everything derived from the rows (full text, keys, vectors), leaving chunk_rows. */
  private removeDerived(targets: Target[]): void {
    if (targets.length === 0) return;
    const rowids = ids(targets.map((t) => t.rowid));
    this.sql.deleteFts.run(rowids);
    this.sql.deleteVectors.run(rowids);
    this.sql.deleteKeys.run(JSON.stringify(targets.map((t) => [t.dataset_id, t.rowid])));
  }

  private remove(select: () => Target[]): number {
    return this.db.transaction(() => {
      const targets = select();
      this.removeDerived(targets);
      if (targets.length > 0) this.sql.deleteRows.run(ids(targets.map((t) => t.rowid)));
      this.sql.addChunkCount.run(-targets.length);
      return targets.length;
    })();
  }

  async get(id: string): Promise<IndexedChunk | undefined> {
    return (await this.getMany([id]))[0];
  }

  /** The chunks found, in the order of `ids`. */
  async getMany(chunkIds: string[]): Promise<IndexedChunk[]> {
    if (chunkIds.length === 0) return [];
    const rows = this.sql.getMany.all(ids(new Set(chunkIds))) as ChunkRow[];
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
      this.writeChunk(merged);
    })();
  }

  async deleteChunks(chunkIds: string[]): Promise<number> {
    if (chunkIds.length === 0) return 0;
    return this.remove(() => this.sql.targetsById.all(ids(new Set(chunkIds))) as Target[]);
  }

  async deleteByDocument(documentId: string): Promise<number> {
    return this.remove(() => this.sql.targetsByDocument.all(documentId) as Target[]);
  }

  async deleteByDataset(datasetId: string): Promise<number> {
    return this.remove(() => this.sql.targetsByDataset.all(datasetId) as Target[]);
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
    if (filter.datasetIds.length === 0 || limit <= 0) return [];
    const terms = queryTerms(query);
    const stats = this.termStatsNow(terms.map((t) => t.stem));
    const match = buildMatchExpression(
      terms.map((t) => ({ word: t.word, chunkFrequency: stats.chunkFrequency.get(t.stem) ?? 0 })),
      stats.chunkCount,
      Math.max(this.matchRowBudget, 4 * limit),
    );
    if (match === null) return [];
    return (this.sql.fullText.all({ ...filterParams(filter), match, limit }) as HitRow[]).map(toCandidate);
  }

  async vectorSearch(vector: number[], filter: ChunkFilter, limit: number): Promise<Candidate[]> {
    if (vector.length === 0 || filter.datasetIds.length === 0 || limit <= 0) return [];
    const coarse = Math.max(MIN_COARSE_CANDIDATES, limit * this.vectorOversample);
    return (this.sql.vectorSearch.all({
      ...filterParams(filter),
      dim: vector.length,
      bits: toSignBits(vector),
      vector: toFloat32Blob(vector),
      // LIMIT -1 is unbounded (exact search); Infinity is not bindable.
      coarse: Number.isFinite(coarse) ? coarse : -1,
      limit,
    }) as HitRow[]).map(toCandidate);
  }

  async termStats(stems: string[]): Promise<TermStats> {
    return this.termStatsNow(stems);
  }

  private termStatsNow(stems: string[]): TermStats {
    const rows = stems.length ? (this.sql.termFrequencies.all(ids(new Set(stems))) as { term: string; doc: number }[]) : [];
    return {
      chunkCount: (this.sql.chunkCount.get() as { n: number }).n,
      chunkFrequency: new Map(rows.map((r) => [r.term, r.doc])),
    };
  }

  async cosineSimilarities(chunkIds: string[], vector: number[]): Promise<Map<string, number>> {
    if (chunkIds.length === 0 || vector.length === 0) return new Map();
    const rows = this.sql.cosines.all({ ids: ids(new Set(chunkIds)), bytes: vector.length * 4, vector: toFloat32Blob(vector) });
    return new Map(rows as [string, number][]);
  }

  async ping(): Promise<void> {
    this.sql.ping.get();
  }
}
