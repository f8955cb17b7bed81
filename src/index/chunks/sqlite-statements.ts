/** The SQL of the embedded chunk index (tables in sqlite-schema.ts) and the mapping of its rows. */
import type { Database } from 'better-sqlite3';
import { FTS_WEIGHTS, SCOPE_TOKEN } from '../fulltext/fts5-match.js';
import type { Candidate, IndexedChunk } from './chunk-index.js';
import { fromFloat32Blob } from '../vectors/vector-codec.js';

export interface ChunkRow {
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
  raptor_layer: number;
  vector: Buffer | null;
}

/** Availability and document conditions on a table alias that has `available` and `document_id`. */
const filterSql = (alias: string) => `
  (:available = 0 OR ${alias}.available = 1)
  AND (:documents IS NULL OR ${alias}.document_id IN (SELECT value FROM json_each(:documents)))`;

const ROW_COLUMNS = `r.rowid, r.id, r.tenant_id, r.dataset_id, r.document_id, r.document_name, r.content,
  r.important_keywords, r.questions, r.tag_kwd, r.image_id, r.positions, r.available, r.create_time,
  r.create_timestamp, r.parent_content, r.raptor_layer, v.vector`;

/** Columns of a search hit after its id and score, in the order of HitRow. */
const HIT_FEATURES = 'r.dataset_id, r.document_id, r.document_name';
export type HitRow = [id: string, score: number, dataset_id: string, document_id: string, document_name: string];

export function toCandidate([id, score, dataset_id, document_id, document_name]: HitRow): Candidate {
  return { id, score, dataset_id, document_id, document_name };
}

export function toChunk(row: ChunkRow): IndexedChunk {
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
  if (row.raptor_layer > 0) chunk.raptor_layer = row.raptor_layer;
  return chunk;
}

export function prepareStatements(db: Database) {
  const p = (source: string) => db.prepare(source);
  return {
    upsertRow: p(`
      INSERT INTO chunk_rows (id, tenant_id, dataset_id, document_id, document_name, content, important_keywords,
        questions, tag_kwd, image_id, positions, available, create_time, create_timestamp, parent_content, terms,
        page_number, top, raptor_layer)
      VALUES (:id, :tenant_id, :dataset_id, :document_id, :document_name, :content, :important_keywords,
        :questions, :tag_kwd, :image_id, :positions, :available, :create_time, :create_timestamp, :parent_content,
        :terms, :page_number, :top, :raptor_layer)
      ON CONFLICT (id) DO UPDATE SET tenant_id = excluded.tenant_id, dataset_id = excluded.dataset_id,
        document_id = excluded.document_id, document_name = excluded.document_name, content = excluded.content,
        important_keywords = excluded.important_keywords, questions = excluded.questions, tag_kwd = excluded.tag_kwd,
        image_id = excluded.image_id, positions = excluded.positions, available = excluded.available,
        create_time = excluded.create_time, create_timestamp = excluded.create_timestamp,
        parent_content = excluded.parent_content, terms = excluded.terms, page_number = excluded.page_number,
        top = excluded.top, raptor_layer = excluded.raptor_layer
      RETURNING rowid`),
    insertFts: p(`INSERT INTO chunk_fts (rowid, title, content, important_keywords, questions, scope)
      VALUES (?, ?, ?, ?, ?, '${SCOPE_TOKEN}')`),
    insertKey: p(`INSERT INTO chunk_keys (dataset_id, row, document_id, available, dim, bits) VALUES (?, ?, ?, ?, ?, ?)`),
    insertVector: p(`INSERT INTO chunk_vectors (row, vector) VALUES (?, ?)`),
    deleteFts: p(`DELETE FROM chunk_fts WHERE rowid IN (SELECT value FROM json_each(?))`),
    deleteVectors: p(`DELETE FROM chunk_vectors WHERE row IN (SELECT value FROM json_each(?))`),
    // A row number is a chunk_rows rowid, so it is in one dataset: the two lists select exactly the rows' keys, by the
    // primary key (a list of (dataset, row) pairs was read as a scan of chunk_keys when the list was long).
    deleteKeys: p(`DELETE FROM chunk_keys WHERE dataset_id IN (SELECT value FROM json_each(?)) AND row IN (SELECT value FROM json_each(?))`),
    deleteRows: p(`DELETE FROM chunk_rows WHERE rowid IN (SELECT value FROM json_each(?))`),
    targetsById: p(`SELECT rowid, dataset_id FROM chunk_rows WHERE id IN (SELECT value FROM json_each(?))`),
    targetsByDocument: p(`SELECT rowid, dataset_id FROM chunk_rows WHERE document_id = ? LIMIT ?`),
    targetsByDataset: p(`SELECT rowid, dataset_id FROM chunk_rows WHERE dataset_id = ? LIMIT ?`),
    rowsByDocument: p(`SELECT rowid FROM chunk_rows WHERE document_id = ?`).pluck(),
    renameRows: p(`UPDATE chunk_rows SET document_name = ? WHERE document_id = ? AND rowid IN (SELECT value FROM json_each(?))
      RETURNING rowid, dataset_id`),
    refillFts: p(`INSERT INTO chunk_fts (rowid, title, content, important_keywords, questions, scope)
      SELECT rowid, document_name, content,
        (SELECT coalesce(group_concat(value, char(10)), '') FROM json_each(important_keywords)),
        (SELECT coalesce(group_concat(value, char(10)), '') FROM json_each(questions)), '${SCOPE_TOKEN}'
      FROM chunk_rows WHERE rowid IN (SELECT value FROM json_each(?))`),
    getMany: p(`SELECT ${ROW_COLUMNS} FROM json_each(?) j JOIN chunk_rows r ON r.id = j.value
      LEFT JOIN chunk_vectors v ON v.row = r.rowid`),
    getManyWithoutVectors: p(`SELECT ${ROW_COLUMNS.replace('v.vector', 'NULL AS vector')} FROM json_each(?) j
      JOIN chunk_rows r ON r.id = j.value`),
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
        WHERE chunk_fts MATCH :match AND ${filterSql('k')}
        ORDER BY rank LIMIT :limit)
      SELECT r.id, -h.rank, ${HIT_FEATURES}
      FROM hits h JOIN chunk_rows r ON r.rowid = h.row ORDER BY h.rank`).raw(),
    // The unfiltered forms of the two searches: no join per matched row; the caller filters the winners
    // (scopedHits) and falls back to fullText above when too few of them pass.
    fullTextUnscoped: p(`
      SELECT rowid, -rank FROM (
        SELECT rowid, bm25(chunk_fts, ${FTS_WEIGHTS.join(', ')}) AS rank FROM chunk_fts
        WHERE chunk_fts MATCH :match ORDER BY rank LIMIT :limit)`).raw(),
    cosinesOfRows: p(`
      SELECT row, cosine FROM (
        SELECT v.row, 1 - vec_distance_cosine(v.vector, :vector) AS cosine
        FROM json_each(:rows) j JOIN chunk_vectors v ON v.row = j.value
        WHERE length(v.vector) = :bytes)
      WHERE cosine IS NOT NULL`).raw(),
    /** Per row: id, dataset, document, name, availability — what a hit needs and what filters look at. */
    hitFeatures: p(`SELECT r.rowid, r.id, ${HIT_FEATURES}, r.available
      FROM json_each(?) j JOIN chunk_rows r ON r.rowid = j.value`).raw(),
    chunksInDatasets: p(`SELECT count(*) FROM chunk_keys WHERE dataset_id IN (SELECT value FROM json_each(?))`).pluck(),
    generations: p(`SELECT dataset_id, generation FROM chunk_generations
      WHERE dataset_id IN (SELECT value FROM json_each(?))`).raw(),
    bumpGeneration: p(`INSERT INTO chunk_generations (dataset_id, generation) VALUES (?, 1)
      ON CONFLICT (dataset_id) DO UPDATE SET generation = generation + 1`),
    dimsOf: p(`SELECT DISTINCT dim FROM chunk_keys WHERE dataset_id = ? AND dim > 0`).pluck(),
    // The columns of all rows concatenated, in one and the same row order: cheaper to load than a JS
    // object per chunk. group_concat copies BLOB bytes as they are.
    keysOf: p(`SELECT group_concat(row), group_concat(available, ''), CAST(group_concat(bits, '') AS BLOB)
      FROM chunk_keys WHERE dataset_id = ? AND dim = ?`).raw(),
    rowsOfDocuments: p(`SELECT rowid FROM chunk_rows WHERE document_id IN (SELECT value FROM json_each(?))`).pluck(),
    cosines: p(`
      SELECT id, cosine FROM (
        SELECT r.id, 1 - vec_distance_cosine(v.vector, :vector) AS cosine
        FROM json_each(:ids) j JOIN chunk_rows r ON r.id = j.value JOIN chunk_vectors v ON v.row = r.rowid
        WHERE length(v.vector) = :bytes)
      WHERE cosine IS NOT NULL`).raw(),
    // For the in-memory vector copies (vector-copies.ts): a dataset's estimated size, and its vectors per
    // dimension in row order with what a hit needs.
    vectorBytesOf: p(`SELECT coalesce(sum(k.dim * 4 + :perRow + length(CAST(r.id AS BLOB))), 0)
      FROM chunk_keys k JOIN chunk_rows r ON r.rowid = k.row WHERE k.dataset_id = :dataset AND k.dim > 0`).pluck(),
    vectorCountsOf: p(`SELECT dim, count(*) FROM chunk_keys WHERE dataset_id = ? AND dim > 0 GROUP BY dim`).raw(),
    vectorsOf: p(`SELECT k.row, v.vector, r.id, r.document_id, r.document_name, r.available
      FROM chunk_keys k JOIN chunk_vectors v ON v.row = k.row JOIN chunk_rows r ON r.rowid = k.row
      WHERE k.dataset_id = ? AND k.dim = ? ORDER BY k.row`).raw(),
    termFrequencies: p(`SELECT term, doc FROM chunk_fts_terms WHERE term IN (SELECT value FROM json_each(?))`).raw(),
    // For the in-memory full-text copies (src/index/fulltext/): FTS5's totals record (row count and tokens per
    // column), a dataset's rows in rowid order, and bm25's idf computed by SQLite's own ln() so that the
    // scores are bit for bit FTS5's.
    ftsTotals: p(`SELECT block FROM chunk_fts_data WHERE id = 1`).pluck(),
    postingRowsOf: p(`SELECT rowid, id, document_id, document_name, available, content, important_keywords, questions
      FROM chunk_rows WHERE dataset_id = ? ORDER BY rowid`),
    generationOf: p(`SELECT generation FROM chunk_generations WHERE dataset_id = ?`).pluck(),
    logRatios: p(`SELECT ln((:rows - value + 0.5) / (value + 0.5)) FROM json_each(:hits)`).pluck(),
    counters: p(`SELECT (SELECT value FROM chunk_stats WHERE name = 'chunk_count'),
      (SELECT value FROM chunk_stats WHERE name = 'writes')`).raw(),
    addChunkCount: p(`UPDATE chunk_stats SET value = value + ? WHERE name = 'chunk_count'`),
    countWrite: p(`UPDATE chunk_stats SET value = value + 1 WHERE name = 'writes'`),
    ping: p(`SELECT 1 FROM chunk_rows LIMIT 1`),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
