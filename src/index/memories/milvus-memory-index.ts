import type { MilvusClient } from '@zilliz/milvus2-sdk-node';
import type { MetaDb } from '../../store/db.js';
import type { MilvusLocation } from '../location.js';
import type {
  AddOptions, AddResult, MemoryCandidate, MemoryIndex, MemoryListQuery, MemoryMessage, MemoryRecentQuery, MemoryScanCounters,
  MemorySearchFilter, MemoryUsage, NewMemoryMessage,
} from './memory-index.js';
import { fromFloat32Blob } from '../vectors/vector-codec.js';
import { bm25Query } from '../chunks/milvus/analysis.js';
import { chunksOf } from '../../batching.js';
import { call, connectMilvus, MilvusIndexError } from '../chunks/milvus/client.js';
import { checkStorableDim, CollectionCatalog, searchableVector, type CollectionSpec } from '../chunks/milvus/collections.js';
import { equals, isInIntegers } from '../chunks/milvus/expressions.js';
import { filterKey, memoryFilter, memoryTextSpec, memoryVectorsSpec, textRow, vectorRow, VECTORS_STEM } from './milvus-memory-collections.js';
import { MemoryLedger, WHOLE_MEMORY, type LedgerRow, type SyncEntry } from '../../store/milvus-memory-ledger.js';
import { bm25Score, cosine, cosineSearch, deleteWhere, IDS_PER_REQUEST, queryRows, RESULT_WINDOW, upsertRows } from '../chunks/milvus/operations.js';
import { mayAnalyseDifferently, Reanalysis, type ProgressLog, type ReanalysisRun } from '../chunks/milvus/reanalysis.js';

export interface MilvusMemoryIndexOptions {
  /** Prefix of the collection names (default `cairn_`), as for the chunk index. */
  prefix?: string;
  /** Where the re-analysis of stored text logs its progress (reanalysis.ts); default JSON lines on stderr. */
  log?: ProgressLog;
}

/** Sync entries handled per round. */
const SYNC_PAGE = 1000;
/** Ledger messages read per round of the re-analysis. */
const REANALYSIS_PAGE = 1000;
/** Rounds of "write the copies, then check that nothing changed meanwhile" before leaving the rest to the next writer. */
const SYNC_ROUNDS = 5;

/** What a search copy depends on: a change of any of it since the copy was read means writing it again. */
const signature = (r: LedgerRow | undefined) =>
  r ? JSON.stringify([r.memory_id, r.agent_id, r.session_id, r.user_id, r.status, r.forget_at === null, r.dim, r.size, r.create_time]) : 'absent';

function checkVectors(messages: { vector: number[] }[]): void {
  for (const { vector } of messages) checkStorableDim('memory message', vector.length);
}

/**
 * MemoryIndex for the scale-out profile: the messages and everything the port keeps exact (ids, size
 * totals, FIFO, dedup keys, guards) in the metadata database (MemoryLedger, one transaction per write),
 * and a search copy of each message in Milvus (BM25 full text and COSINE vectors, milvus-memory-collections.ts).
 *
 * Milvus has no transactions, so a write commits in the database first, with a sync entry for every
 * message it changed, and then writes those messages' search copies (upsert by message id, or delete),
 * settling the entries. If the process dies in between, the entries remain, and the next write to that
 * memory or search of it (in any process) writes the copies again: idempotent, so the two converge.
 * Searches re-check every Milvus hit against the ledger (exists, enabled, not forgotten, filters), so a
 * copy not yet written again never yields a message that must not be found.
 */
export class MilvusMemoryIndex implements MemoryIndex {
  private readonly text: CollectionSpec;
  private reanalysis?: Reanalysis;
  /** Milvus searches only the partitions of the named memories (memory_id is the partition key); what Cairn examines is the hits it re-checks. */
  readonly scans: MemoryScanCounters = { examined: 0 };

  private constructor(
    private readonly client: MilvusClient,
    private readonly catalog: CollectionCatalog,
    private readonly ledger: MemoryLedger,
    private readonly ownsClient: boolean,
  ) {
    this.text = memoryTextSpec(catalog.prefix);
  }

  /** Connects to the location's database and opens the index on it; `close` disconnects. The ledger is `db`'s (not closed here). */
  static async connect(location: MilvusLocation, db: MetaDb, options: MilvusMemoryIndexOptions = {}): Promise<MilvusMemoryIndex> {
    const client = await connectMilvus(location);
    try {
      return await MilvusMemoryIndex.open(client, db, options, true);
    } catch (err) {
      await client.closeConnection().catch(() => undefined);
      throw err;
    }
  }

  /**
   * The index on a connected client (its current database), making sure the text collection exists;
   * `close` leaves the client open unless `ownsClient`. Copies analysed by an older analysis are written
   * again in the background (reanalysis.ts).
   */
  static async open(client: MilvusClient, db: MetaDb, options: MilvusMemoryIndexOptions = {}, ownsClient = false): Promise<MilvusMemoryIndex> {
    const index = new MilvusMemoryIndex(client, new CollectionCatalog(client, options.prefix ?? 'cairn_'), new MemoryLedger(db), ownsClient);
    await index.catalog.ensure(index.text);
    index.reanalysis = new Reanalysis(index.catalog, index.text.name, (run) => index.rewriteAnalysis(run), options.log);
    return index;
  }

  async close(): Promise<void> {
    await this.reanalysis?.stop();
    if (this.ownsClient) await this.client.closeConnection();
  }

  /** Settles when the re-analysis started by `open` has finished, failed or stopped (tests). */
  async reanalysed(): Promise<void> {
    await this.reanalysis?.finished;
  }

  // ------------------------------------------------------------------ writes: the ledger, then the search copies

  async add(memoryId: string, messages: NewMemoryMessage[], options: AddOptions): Promise<AddResult> {
    checkVectors(messages);
    const result = await this.ledger.add(memoryId, messages, options);
    // Also when nothing was added: a retry after a crash is what writes the copies the crash left out.
    await this.sync([memoryId]);
    return result;
  }

  async fitWithin(memoryId: string, limit: number): Promise<number[]> {
    const evicted = await this.ledger.fitWithin(memoryId, limit);
    await this.sync([memoryId]);
    return evicted;
  }

  async forget(memoryId: string, messageId: number, at: number): Promise<boolean> {
    const found = await this.ledger.forget(memoryId, messageId, at);
    await this.sync([memoryId]);
    return found;
  }

  async invalidate(memoryId: string, messageId: number, at: number, replacedBy: number | null): Promise<boolean> {
    const found = await this.ledger.invalidate(memoryId, messageId, at, replacedBy);
    await this.sync([memoryId]);
    return found;
  }

  itemsOf(memoryId: string, sourceIds: number[]): Promise<MemoryMessage[]> {
    return this.ledger.itemsOf(memoryId, sourceIds);
  }

  async setStatus(memoryId: string, messageId: number, status: boolean): Promise<boolean> {
    const found = await this.ledger.setStatus(memoryId, messageId, status);
    await this.sync([memoryId]);
    return found;
  }

  async remove(memoryId: string, messageIds: number[]): Promise<number> {
    const n = await this.ledger.remove(memoryId, messageIds);
    await this.sync([memoryId]);
    return n;
  }

  async deleteMemory(memoryId: string): Promise<number> {
    const n = await this.ledger.deleteMemory(memoryId);
    await this.sync([memoryId]);
    return n;
  }

  async importMessages(memoryId: string, messages: MemoryMessage[], options: { idsUsedThrough?: number } = {}): Promise<void> {
    const stray = messages.find((m) => m.memory_id !== memoryId);
    if (stray) throw new Error(`cannot import message ${stray.message_id} of memory ${stray.memory_id} into memory ${memoryId}`);
    checkVectors(messages);
    await this.ledger.importMessages(memoryId, messages, options.idsUsedThrough);
    await this.sync([memoryId]);
  }

  // ------------------------------------------------------------------ reads from the ledger

  get(memoryId: string, messageId: number): Promise<MemoryMessage | undefined> {
    return this.ledger.get(memoryId, messageId);
  }

  getMany(ids: number[]): Promise<MemoryMessage[]> {
    return this.ledger.getMany(ids);
  }

  usage(memoryId: string): Promise<MemoryUsage> {
    return this.ledger.usage(memoryId);
  }

  recount(memoryId: string): Promise<MemoryUsage> {
    return this.ledger.recount(memoryId);
  }

  list(memoryId: string, query: MemoryListQuery) {
    return this.ledger.list(memoryId, query);
  }

  recent(query: MemoryRecentQuery): Promise<MemoryMessage[]> {
    return this.ledger.recent(query);
  }

  async cosineSimilarities(ids: number[], vector: number[]): Promise<Map<number, number>> {
    const result = new Map<number, number>();
    if (ids.length === 0 || vector.length === 0) return result;
    for (const [id, stored] of await this.ledger.vectors(ids, vector.length)) {
      const value = cosine(stored, vector);
      if (value !== undefined) result.set(id, value);
    }
    return result;
  }

  // ------------------------------------------------------------------ searches in Milvus, re-checked in the ledger

  async fullText(query: string, filter: MemorySearchFilter, limit: number): Promise<MemoryCandidate[]> {
    const text = bm25Query(query);
    if (!text || filter.memoryIds.length === 0 || limit <= 0) return [];
    await this.sync(filter.memoryIds);
    const { results } = await call('search (BM25)', () => this.client.search({
      collection_name: this.text.name,
      anns_field: 'sparse',
      data: text,
      limit: Math.min(limit, RESULT_WINDOW),
      metric_type: 'BM25',
      filter: memoryFilter(filter),
      output_fields: ['message_id'],
    }));
    const hits = results.map((hit) => ({ message_id: Number(hit.message_id), score: bm25Score(hit.score) }))
      .filter((hit) => hit.score > 0 && Number.isFinite(hit.score));
    return this.confirmed(hits, filter);
  }

  async vectorSearch(vector: number[], filter: MemorySearchFilter, limit: number): Promise<MemoryCandidate[]> {
    if (!searchableVector(vector) || filter.memoryIds.length === 0 || limit <= 0) return [];
    await this.sync(filter.memoryIds);
    const spec = memoryVectorsSpec(this.catalog.prefix, vector.length);
    if (!(await this.catalog.exists(spec))) return [];
    const results = await cosineSearch(this.client, spec.name, vector, memoryFilter(filter), ['message_id'], limit);
    return this.confirmed(results.map((hit) => ({ message_id: Number(hit.message_id), score: Number(hit.score) })), filter);
  }

  async ping(): Promise<void> {
    await this.ledger.ping();
    const health = await call('checkHealth', () => this.client.checkHealth());
    if (!health.isHealthy) throw new MilvusIndexError('checkHealth', health.reasons.join('; ') || 'not healthy');
  }

  /** The hits the ledger confirms (a copy may lag behind its message), best first, ties newest first. */
  private async confirmed(hits: MemoryCandidate[], filter: MemorySearchFilter): Promise<MemoryCandidate[]> {
    this.scans.examined += hits.length;
    if (hits.length === 0) return [];
    const ok = await this.ledger.searchable(hits.map((h) => h.message_id), filter);
    return hits.filter((h) => ok.has(h.message_id)).sort((a, b) => b.score - a.score || b.message_id - a.message_id);
  }

  // ------------------------------------------------------------------ search copies

  /**
   * Writes again the search copies of the messages whose analysis changed (reanalysis.ts): the ledger's
   * messages in id order, those with a character beyond 7-bit ASCII get a sync entry, and the sync writes
   * them as it writes any copy (from the ledger row, checked against concurrent writes). The entries are
   * in the ledger, so a crash after asking leaves them to the next write or search of the memory.
   */
  private async rewriteAnalysis(run: ReanalysisRun): Promise<Record<string, number>> {
    const counts = { scanned: 0, rewritten: 0 };
    for (let after = 0; !run.stopping();) {
      const page = await this.ledger.contentsAfter(after, REANALYSIS_PAGE);
      if (page.length === 0) break;
      after = page[page.length - 1]!.message_id;
      const changed = page.filter((m) => mayAnalyseDifferently(m.content));
      if (changed.length > 0) {
        await this.ledger.requestCopies(changed);
        await this.sync([...new Set(changed.map((m) => m.memory_id))]);
      }
      counts.scanned += page.length;
      counts.rewritten += changed.length;
      run.progress(counts);
    }
    return counts;
  }

  /** Writes the search copies the ledger asks for in these memories, until none is left (or only ones another writer is changing). */
  private async sync(memoryIds: string[]): Promise<void> {
    for (;;) {
      const entries = await this.ledger.pending(memoryIds, SYNC_PAGE);
      if (entries.length === 0) return;
      const settled = await this.reconcile(entries);
      await this.ledger.settle(settled);
      if (entries.length < SYNC_PAGE || settled.length === 0) return;
    }
  }

  /**
   * Makes the Milvus copies of the entries' messages equal to the ledger, and returns the entries it did.
   * A copy written from a row that changed meanwhile (another process's write, whose own sync may have
   * finished first) is written again, so the last copy written is never older than the ledger.
   */
  private async reconcile(entries: SyncEntry[]): Promise<SyncEntry[]> {
    const done: SyncEntry[] = [];
    for (const entry of entries.filter((e) => e.message_id === WHOLE_MEMORY)) {
      await this.removeStrayCopies(entry.memory_id);
      done.push(entry);
    }
    const single = entries.filter((e) => e.message_id !== WHOLE_MEMORY);
    let ids = [...new Set(single.map((e) => e.message_id))];
    for (let round = 0; round < SYNC_ROUNDS && ids.length > 0; round++) {
      const rows = await this.ledger.rows(ids);
      await this.writeCopies(ids, rows);
      const now = await this.ledger.rows(ids);
      ids = ids.filter((id) => signature(rows.get(id)) !== signature(now.get(id)));
    }
    const unsettled = new Set(ids);
    return [...done, ...single.filter((e) => !unsettled.has(e.message_id))];
  }

  /** Upserts the copies of the messages in `rows`, deletes those of the other ids. */
  private async writeCopies(ids: number[], rows: Map<number, LedgerRow>): Promise<void> {
    const dims = await this.catalog.vectorDims(VECTORS_STEM);
    const present = ids.flatMap((id) => rows.get(id) ?? []);
    const absent = ids.filter((id) => !rows.has(id));
    if (present.length > 0) {
      await upsertRows(this.client, this.text.name, present.map(textRow));
      const byDim = new Map<number, object[]>();
      const inDim = new Map<number, Set<number>>();
      for (const row of present) {
        const vector = row.vector ? fromFloat32Blob(row.vector) : [];
        if (!searchableVector(vector)) continue;
        byDim.set(vector.length, [...(byDim.get(vector.length) ?? []), vectorRow(row, vector)]);
        inDim.set(vector.length, (inDim.get(vector.length) ?? new Set()).add(row.message_id));
      }
      for (const [dim, vectorRows] of byDim) {
        const spec = memoryVectorsSpec(this.catalog.prefix, dim);
        await this.catalog.ensure(spec);
        await upsertRows(this.client, spec.name, vectorRows);
      }
      // A message imported again with another vector (or none) leaves no copy in another dimension.
      for (const dim of dims) {
        const stale = present.map((r) => r.message_id).filter((id) => !inDim.get(dim)?.has(id));
        await this.deleteCopies([memoryVectorsSpec(this.catalog.prefix, dim).name], stale);
      }
    }
    await this.deleteCopies([this.text.name, ...dims.map((dim) => memoryVectorsSpec(this.catalog.prefix, dim).name)], absent);
  }

  private async deleteCopies(collections: string[], ids: number[]): Promise<void> {
    for (const batch of chunksOf(ids, IDS_PER_REQUEST)) {
      for (const name of collections) await deleteWhere(this.client, name, isInIntegers('message_id', batch));
    }
  }

  /** After deleteMemory: removes the memory's copies of messages the ledger no longer has (all of them, normally). */
  private async removeStrayCopies(memoryId: string): Promise<void> {
    const kept = await this.ledger.messageIdsOf(memoryId);
    const names = [this.text.name, ...(await this.catalog.vectorDims(VECTORS_STEM)).map((dim) => memoryVectorsSpec(this.catalog.prefix, dim).name)];
    if (kept.size === 0) {
      for (const name of names) await deleteWhere(this.client, name, equals('memory_id', filterKey(memoryId)));
      return;
    }
    // Messages added again after the deletion (an extraction that was running): keep their copies.
    const copies = await queryRows(this.client, this.text.name, equals('memory_id', filterKey(memoryId)), ['message_id'], RESULT_WINDOW);
    await this.deleteCopies(names, copies.map((r) => Number(r.message_id)).filter((id) => !kept.has(id)));
  }
}
