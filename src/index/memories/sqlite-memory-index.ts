import type { Database, Statement } from 'better-sqlite3';
import { queryTerms } from '../../retrieval/tokenizer.js';
import { messageSize, planEviction, type FifoCandidate } from '../../memories/size.js';
import { ensureMemorySchema } from './sqlite-memory-schema.js';
import { toFloat32Blob } from '../vectors/vector-codec.js';
import { toMessage, type MessageRow } from './memory-rows.js';
import { memoryScopeToken, scopedMatch } from './memory-scope.js';
import type {
  AddOptions, AddResult, MemoryCandidate, MemoryIndex, MemoryListQuery, MemoryMessage, MemoryRecentQuery,
  MemoryScanCounters, MemorySearchFilter, MemoryUsage, NewMemoryMessage,
} from './memory-index.js';

type Row = MessageRow;

type HitRow = [message_id: number, score: number];

const COLUMNS = `message_id, memory_id, tenant_id, message_type, source_id, user_id, agent_id, session_id, content,
  valid_at, invalid_at, replaced_by, forget_at, status, size, create_time, vector`;

/** Conditions of a search filter on memory_rows aliased `r`; searchable = enabled and not forgotten. */
const FILTER = `r.memory_id IN (SELECT value FROM json_each(:memories))
  AND (:agent IS NULL OR r.agent_id = :agent)
  AND (:session IS NULL OR r.session_id = :session)
  AND (:user IS NULL OR r.user_id = :user)
  AND (:current IS NULL OR r.invalid_at IS NULL OR r.invalid_at > :current)`;
const SEARCHABLE = `${FILTER} AND r.status = 1 AND r.forget_at IS NULL`;

const json = (values: Iterable<string | number>) => JSON.stringify([...values]);

function filterParams(f: MemorySearchFilter) {
  return { memories: json(f.memoryIds), agent: f.agentId ?? null, session: f.sessionId ?? null, user: f.userId ?? null, current: f.currentAt ?? null };
}


function toCandidate([message_id, score]: HitRow): MemoryCandidate {
  return { message_id, score };
}

/** memory_rows.terms held stems for term similarity before it came from BM25: kept in the schema, left empty. */
const NO_TERMS = Buffer.alloc(0);

/** FTS5 phrase for one word (double quotes doubled). */
const phrase = (word: string) => `"${word.replaceAll('"', '""')}"`;

/**
 * MemoryIndex on the service's SQLite database (FTS5 for full text, sqlite-vec for cosine). The
 * connection must have sqlite-vec loaded (configureIndexConnection); the constructor creates the
 * tables if needed. Writes run in IMMEDIATE transactions, so the API process and workers never
 * interleave a FIFO decision with another writer's insert.
 */
export class SqliteMemoryIndex implements MemoryIndex {
  private readonly s: ReturnType<typeof prepare>;
  private readonly imports: ReturnType<typeof prepareImport>;
  readonly scans: MemoryScanCounters = { examined: 0 };

  constructor(private readonly db: Database) {
    try {
      db.prepare('SELECT vec_version()').get();
    } catch {
      throw new Error('SqliteMemoryIndex needs sqlite-vec: call sqliteVec.load(db) on the connection first');
    }
    ensureMemorySchema(db);
    db.function('memory_icontains', { deterministic: true }, (text: unknown, needle: unknown) =>
      String(text).toLowerCase().includes(String(needle).toLowerCase()) ? 1 : 0);
    // Counts the rows a search statement examines (true for each): the FTS5 matches it steps through and
    // the vectors it compares, before the filters on memory_rows and the limit.
    db.function('memory_examined', { deterministic: false }, (_row: unknown) => {
      this.scans.examined++;
      return 1;
    });
    this.s = prepare(db);
    this.imports = prepareImport(db);
  }

  async add(memoryId: string, messages: NewMemoryMessage[], options: AddOptions): Promise<AddResult> {
    return this.db.transaction((): AddResult => {
      if (options.onceForSource !== undefined && this.s.extractionDone.get(memoryId, options.onceForSource)) {
        return { messageIds: [], evicted: [], alreadyStored: true };
      }
      const ids: (number | undefined)[] = messages.map((m) =>
        m.dedup_key ? (this.s.byDedupKey.get(memoryId, m.dedup_key) as number | undefined) : undefined);
      const fresh = messages.map((m, i) => ({ m, i, size: messageSize(m.content, m.vector.length) })).filter(({ i }) => ids[i] === undefined);
      const incoming = fresh.reduce((n, f) => n + f.size, 0);
      let evicted: number[] = [];
      if (fresh.length > 0) {
        const used = (this.s.usage.get(memoryId) as MemoryUsage | undefined)?.bytes ?? 0;
        evicted = planEviction(used, incoming, options.limit, this.fifoCandidates(memoryId));
        this.removeRows(memoryId, evicted);
        const now = Date.now();
        const fullText: [number, string][] = [];
        for (const { m, i, size } of fresh) {
          const id = (this.s.insert.get({
            memory_id: memoryId,
            tenant_id: options.tenantId,
            message_type: m.message_type,
            source_id: m.source_id,
            user_id: m.user_id,
            agent_id: m.agent_id,
            session_id: m.session_id,
            dedup_key: m.dedup_key ?? null,
            content: m.content,
            valid_at: Math.round(m.valid_at),
            invalid_at: m.invalid_at ?? null,
            size,
            create_time: now,
            terms: NO_TERMS,
            dim: m.vector.length,
            vector: m.vector.length ? toFloat32Blob(m.vector) : null,
          }) as { message_id: number }).message_id;
          fullText.push([id, m.content]);
          ids[i] = id;
        }
        this.insertFullText(memoryId, fullText);
        this.s.addUsage.run(memoryId, incoming, fresh.length);
      }
      if (options.onceForSource !== undefined) this.s.markExtraction.run(memoryId, options.onceForSource, Date.now());
      return { messageIds: ids as number[], evicted, alreadyStored: false };
    }).immediate();
  }

  async fitWithin(memoryId: string, limit: number): Promise<number[]> {
    return this.db.transaction(() => {
      const used = (this.s.usage.get(memoryId) as MemoryUsage | undefined)?.bytes ?? 0;
      const evicted = planEviction(used, 0, limit, this.fifoCandidates(memoryId));
      this.removeRows(memoryId, evicted);
      return evicted;
    }).immediate();
  }

  /** Every message of the memory in FIFO order, read lazily (the planner stops at the first that suffice). */
  private *fifoCandidates(memoryId: string): Generator<FifoCandidate> {
    yield* this.s.forgottenFirst.iterate(memoryId) as IterableIterator<FifoCandidate>;
    yield* this.s.oldestFirst.iterate(memoryId) as IterableIterator<FifoCandidate>;
  }

  /** Deletes rows and their full text, and takes their sizes off the total; call inside a transaction. */
  private removeRows(memoryId: string, ids: number[]): number {
    if (ids.length === 0) return 0;
    const list = json(ids);
    const { n, bytes } = this.s.sizeOf.get(memoryId, list) as { n: number; bytes: number | null };
    if (n === 0) return 0;
    this.s.deleteFts.run(memoryId, list);
    this.s.deleteRows.run(memoryId, list);
    this.s.addUsage.run(memoryId, -(bytes ?? 0), -n);
    return n;
  }

  async get(memoryId: string, messageId: number): Promise<MemoryMessage | undefined> {
    const row = this.s.get.get(memoryId, messageId) as Row | undefined;
    return row ? toMessage(row) : undefined;
  }

  async getMany(ids: number[]): Promise<MemoryMessage[]> {
    if (ids.length === 0) return [];
    const byId = new Map((this.s.getMany.all(json(new Set(ids))) as Row[]).map((r) => [r.message_id, toMessage(r)]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  async forget(memoryId: string, messageId: number, at: number): Promise<boolean> {
    return this.s.forget.run(at, memoryId, messageId).changes > 0 || this.s.get.get(memoryId, messageId) !== undefined;
  }

  async setStatus(memoryId: string, messageId: number, status: boolean): Promise<boolean> {
    return this.s.setStatus.run(status ? 1 : 0, memoryId, messageId).changes > 0;
  }

  async invalidate(memoryId: string, messageId: number, at: number, replacedBy: number | null): Promise<boolean> {
    return this.s.invalidate.run({ at: Math.round(at), by: replacedBy, memory: memoryId, message: messageId }).changes > 0;
  }

  async itemsOf(memoryId: string, sourceIds: number[]): Promise<MemoryMessage[]> {
    return (this.s.extractedOf.all(memoryId, json(sourceIds)) as Row[]).map(toMessage);
  }

  async remove(memoryId: string, messageIds: number[]): Promise<number> {
    return this.db.transaction(() => this.removeRows(memoryId, messageIds)).immediate();
  }

  /**
   * The messages' full text, after their rows and in ascending id: FTS5 writes out what it holds in memory whenever a
   * later statement of the transaction opens a statement journal (the row inserts do) and whenever an id is lower
   * than the one before, so otherwise each message became a segment of its own (the chunk index's writeChunks).
   */
  private insertFullText(memoryId: string, rows: [number, string][]): void {
    const scope = memoryScopeToken(memoryId);
    for (const [id, content] of rows.sort((a, b) => a[0] - b[0])) this.s.insertFts.run(id, content, scope);
  }

  async deleteMemory(memoryId: string): Promise<number> {
    return this.db.transaction(() => {
      const n = this.removeRows(memoryId, this.s.idsOfMemory.all(memoryId) as number[]);
      this.s.deleteUsage.run(memoryId);
      this.s.deleteExtractions.run(memoryId);
      return n;
    }).immediate();
  }

  async importMessages(memoryId: string, messages: MemoryMessage[], options: { idsUsedThrough?: number } = {}): Promise<void> {
    const byId = new Map(messages.map((m) => [m.message_id, m]));
    const stray = messages.find((m) => m.memory_id !== memoryId);
    if (stray) throw new Error(`cannot import message ${stray.message_id} of memory ${stray.memory_id} into memory ${memoryId}`);
    const ids = [...byId.keys()];
    this.db.transaction(() => {
      const taken = this.imports.ofOtherMemories.all(memoryId, json(ids)) as number[];
      if (taken.length) throw new Error(`cannot import into memory ${memoryId}: message id(s) ${taken.slice(0, 5).join(', ')} belong to another memory`);
      this.removeRows(memoryId, ids);
      let bytes = 0;
      const fullText: [number, string][] = [];
      for (const m of byId.values()) {
        this.imports.insert.run({
          ...m,
          status: m.status ? 1 : 0,
          terms: NO_TERMS,
          dim: m.vector.length,
          vector: m.vector.length ? toFloat32Blob(m.vector) : null,
        });
        fullText.push([m.message_id, m.content]);
        bytes += m.size;
      }
      this.insertFullText(memoryId, fullText);
      if (ids.length) this.s.addUsage.run(memoryId, bytes, ids.length);
      // AUTOINCREMENT already continues after the largest id inserted; this covers ids used by gone messages.
      const floor = ids.reduce((max, id) => Math.max(max, id), options.idsUsedThrough ?? 0);
      if (floor > 0) {
        this.imports.seedSequence.run(floor);
        this.imports.raiseSequence.run(floor, floor);
      }
    }).immediate();
  }

  async usage(memoryId: string): Promise<MemoryUsage> {
    return (this.s.usage.get(memoryId) as MemoryUsage | undefined) ?? { bytes: 0, messages: 0 };
  }

  async recount(memoryId: string): Promise<MemoryUsage> {
    const row = this.s.recount.get(memoryId) as { bytes: number | null; messages: number };
    return { bytes: row.bytes ?? 0, messages: row.messages };
  }

  async list(memoryId: string, query: MemoryListQuery) {
    const pageSize = Math.max(1, Math.floor(query.pageSize));
    const page = Math.max(1, Math.floor(query.page));
    const params = {
      memory: memoryId,
      agents: query.agentIds?.length ? json(query.agentIds) : null,
      keywords: query.sessionKeywords?.trim() || null,
    };
    const total = (this.s.listCount.get(params) as { n: number }).n;
    const messages = (this.s.listPage.all({ ...params, limit: pageSize, offset: (page - 1) * pageSize }) as Row[]).map(toMessage);
    const extracted = new Map<number, MemoryMessage[]>();
    const raw = messages.filter((m) => m.message_type === 'raw').map((m) => m.message_id);
    if (raw.length) {
      for (const row of this.s.extractedOf.all(memoryId, json(raw)) as Row[]) {
        const item = toMessage(row);
        extracted.set(item.source_id, [...(extracted.get(item.source_id) ?? []), item]);
      }
    }
    return { total, messages, extracted };
  }

  async recent(query: MemoryRecentQuery): Promise<MemoryMessage[]> {
    if (query.memoryIds.length === 0 || query.limit <= 0) return [];
    return (this.s.recent.all({ ...filterParams(query), limit: Math.floor(query.limit) }) as Row[]).map(toMessage);
  }

  /**
   * bm25 over an OR of the query's words (the retrieval tokenizer's, stopwords removed), within the
   * memories' scope tokens (memory-scope.ts): FTS5 yields only matches of the searched memories.
   */
  async fullText(query: string, filter: MemorySearchFilter, limit: number): Promise<MemoryCandidate[]> {
    const words = queryTerms(query).map((t) => t.word);
    if (words.length === 0 || filter.memoryIds.length === 0 || limit <= 0) return [];
    const match = scopedMatch(words.map(phrase), filter.memoryIds);
    return (this.s.fullText.all({ ...filterParams(filter), match, limit }) as HitRow[]).map(toCandidate);
  }

  async vectorSearch(vector: number[], filter: MemorySearchFilter, limit: number): Promise<MemoryCandidate[]> {
    if (vector.length === 0 || filter.memoryIds.length === 0 || limit <= 0) return [];
    return (this.s.vectorSearch.all({ ...filterParams(filter), dim: vector.length, vector: toFloat32Blob(vector), limit }) as HitRow[]).map(toCandidate);
  }

  async cosineSimilarities(ids: number[], vector: number[]): Promise<Map<number, number>> {
    if (ids.length === 0 || vector.length === 0) return new Map();
    return new Map(this.s.cosines.all({ ids: json(new Set(ids)), dim: vector.length, vector: toFloat32Blob(vector) }) as [number, number][]);
  }

  async ping(): Promise<void> {
    this.s.ping.get();
  }

  /** Nothing to end: the connection belongs to whoever opened it. */
  async close(): Promise<void> {}
}

function prepare(db: Database) {
  const p = (source: string): Statement => db.prepare(source);
  return {
    insert: p(`INSERT INTO memory_rows (memory_id, tenant_id, message_type, source_id, user_id, agent_id, session_id,
        dedup_key, content, valid_at, invalid_at, forget_at, status, size, create_time, terms, dim, vector)
      VALUES (:memory_id, :tenant_id, :message_type, :source_id, :user_id, :agent_id, :session_id, :dedup_key, :content,
        :valid_at, :invalid_at, NULL, 1, :size, :create_time, :terms, :dim, :vector)
      RETURNING message_id`),
    insertFts: p(`INSERT INTO memory_fts (rowid, content, memory) VALUES (?, ?, ?)`),
    byDedupKey: p(`SELECT message_id FROM memory_rows WHERE memory_id = ? AND dedup_key = ?`).pluck(),
    extractionDone: p(`SELECT 1 FROM memory_extractions WHERE memory_id = ? AND source_id = ?`),
    markExtraction: p(`INSERT OR IGNORE INTO memory_extractions (memory_id, source_id, create_time) VALUES (?, ?, ?)`),
    usage: p(`SELECT bytes, messages FROM memory_usage WHERE memory_id = ?`),
    addUsage: p(`INSERT INTO memory_usage (memory_id, bytes, messages) VALUES (?, ?, ?)
      ON CONFLICT (memory_id) DO UPDATE SET bytes = bytes + excluded.bytes, messages = messages + excluded.messages`),
    deleteUsage: p(`DELETE FROM memory_usage WHERE memory_id = ?`),
    deleteExtractions: p(`DELETE FROM memory_extractions WHERE memory_id = ?`),
    recount: p(`SELECT sum(size) AS bytes, count(*) AS messages FROM memory_rows WHERE memory_id = ?`),
    forgottenFirst: p(`SELECT message_id, size, forget_at, valid_at FROM memory_rows
      WHERE memory_id = ? AND forget_at IS NOT NULL ORDER BY forget_at, valid_at, message_id`),
    oldestFirst: p(`SELECT message_id, size, forget_at, valid_at FROM memory_rows
      WHERE memory_id = ? AND forget_at IS NULL ORDER BY valid_at, message_id`),
    sizeOf: p(`SELECT count(*) AS n, sum(size) AS bytes FROM memory_rows
      WHERE memory_id = ? AND message_id IN (SELECT value FROM json_each(?))`),
    deleteFts: p(`DELETE FROM memory_fts WHERE rowid IN (SELECT message_id FROM memory_rows
      WHERE memory_id = ? AND message_id IN (SELECT value FROM json_each(?)))`),
    deleteRows: p(`DELETE FROM memory_rows WHERE memory_id = ? AND message_id IN (SELECT value FROM json_each(?))`),
    idsOfMemory: p(`SELECT message_id FROM memory_rows WHERE memory_id = ?`).pluck(),
    get: p(`SELECT ${COLUMNS} FROM memory_rows WHERE memory_id = ? AND message_id = ?`),
    getMany: p(`SELECT ${COLUMNS} FROM memory_rows WHERE message_id IN (SELECT value FROM json_each(?))`),
    forget: p(`UPDATE memory_rows SET forget_at = ? WHERE memory_id = ? AND message_id = ? AND forget_at IS NULL`),
    setStatus: p(`UPDATE memory_rows SET status = ? WHERE memory_id = ? AND message_id = ?`),
    invalidate: p(`UPDATE memory_rows SET invalid_at = min(coalesce(invalid_at, :at), :at), replaced_by = :by
      WHERE memory_id = :memory AND message_id = :message`),
    listCount: p(`SELECT count(*) AS n FROM memory_rows r WHERE r.memory_id = :memory AND ${ROOT}`),
    listPage: p(`SELECT ${COLUMNS} FROM memory_rows r WHERE r.memory_id = :memory AND ${ROOT}
      ORDER BY r.valid_at DESC, r.message_id DESC LIMIT :limit OFFSET :offset`),
    extractedOf: p(`SELECT ${COLUMNS} FROM memory_rows
      WHERE memory_id = ? AND source_id IN (SELECT value FROM json_each(?)) ORDER BY source_id, message_id`),
    recent: p(`SELECT ${COLUMNS} FROM memory_rows r
      WHERE ${FILTER} AND r.forget_at IS NULL ORDER BY r.valid_at DESC, r.message_id DESC LIMIT :limit`),
    // bm25 weights: the content 1, the scope token (memory-scope.ts) 0.
    fullText: p(`SELECT r.message_id, -bm25(memory_fts, 1.0, 0.0)
      FROM memory_fts JOIN memory_rows r ON r.message_id = memory_fts.rowid
      WHERE memory_fts MATCH :match AND memory_examined(memory_fts.rowid) AND ${SEARCHABLE}
      ORDER BY bm25(memory_fts, 1.0, 0.0) LIMIT :limit`).raw(),
    // memory_rows_valid leads with memory_id: only the searched memories' rows are read.
    vectorSearch: p(`SELECT message_id, cosine FROM (
        SELECT r.message_id, 1 - vec_distance_cosine(r.vector, :vector) AS cosine
        FROM memory_rows r INDEXED BY memory_rows_valid WHERE ${SEARCHABLE} AND r.dim = :dim AND memory_examined(r.message_id))
      WHERE cosine IS NOT NULL ORDER BY cosine DESC, message_id DESC LIMIT :limit`).raw(),
    cosines: p(`SELECT message_id, cosine FROM (
        SELECT r.message_id, 1 - vec_distance_cosine(r.vector, :vector) AS cosine
        FROM memory_rows r WHERE r.message_id IN (SELECT value FROM json_each(:ids)) AND r.dim = :dim)
      WHERE cosine IS NOT NULL`).raw(),
    ping: p(`SELECT 1 FROM memory_rows LIMIT 1`),
  };
}

/** A top-level message of a listing: raw, or an extracted item whose raw message is gone. */
const ROOT = `(r.source_id = 0 OR NOT EXISTS (SELECT 1 FROM memory_rows s WHERE s.message_id = r.source_id))
  AND (:agents IS NULL OR r.agent_id IN (SELECT value FROM json_each(:agents)))
  AND (:keywords IS NULL OR memory_icontains(r.session_id, :keywords))`;

/** Statements of importMessages: rows inserted with the ids they had, and the id sequence moved past gone ones. */
function prepareImport(db: Database) {
  return {
    insert: db.prepare(`INSERT INTO memory_rows (message_id, memory_id, tenant_id, message_type, source_id, user_id, agent_id,
        session_id, dedup_key, content, valid_at, invalid_at, replaced_by, forget_at, status, size, create_time, terms, dim, vector)
      VALUES (:message_id, :memory_id, :tenant_id, :message_type, :source_id, :user_id, :agent_id, :session_id, NULL, :content,
        :valid_at, :invalid_at, :replaced_by, :forget_at, :status, :size, :create_time, :terms, :dim, :vector)`),
    ofOtherMemories: db.prepare(`SELECT message_id FROM memory_rows
      WHERE memory_id != ? AND message_id IN (SELECT value FROM json_each(?))`).pluck(),
    seedSequence: db.prepare(`INSERT INTO sqlite_sequence (name, seq)
      SELECT 'memory_rows', ? WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'memory_rows')`),
    raiseSequence: db.prepare(`UPDATE sqlite_sequence SET seq = ? WHERE name = 'memory_rows' AND seq < ?`),
  };
}
