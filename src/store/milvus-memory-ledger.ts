/**
 * The memory index's ledger on the scale-out profile: every memory message, whole, in the metadata
 * database (SQLite or PostgreSQL through Kysely), with what the MemoryIndex port promises and Milvus
 * cannot keep without transactions: the global id sequence, each memory's exact size total (changed in
 * the transaction of every insert and removal), FIFO order, dedup keys and the once-per-source guards.
 * Milvus holds only a search copy of each message (memory-index.ts); `memory_message_sync` lists, in the
 * same transaction as every change, the messages whose search copy must be written again.
 *
 * Writes to one memory are serialised by its `memory_message_totals` row: the first statement of each
 * write transaction is an upsert of that row, which takes its row lock on PostgreSQL (READ COMMITTED: a
 * second writer waits for the commit, then reads the new total) and the database's write lock on SQLite.
 * Tables: migration 0011_memory_messages (src/store/migrations.ts).
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { MetaDb } from './db.js';
import { escapeLike } from './paging.js';
import { messageSize, planEviction, type FifoCandidate } from '../memories/size.js';
import { chunksOf } from '../batching.js';
import { float32sOf, toFloat32Blob } from '../index/vectors/vector-codec.js';
import { toMessage, type MessageRow } from '../index/memories/memory-rows.js';
import type {
  AddOptions, AddResult, MemoryListQuery, MemoryMessage, MemoryRecentQuery, MemorySearchFilter, MemoryUsage, NewMemoryMessage,
} from '../index/memories/memory-index.js';

/** The shared message row, plus what only the ledger keeps. */
interface MessagesTable extends MessageRow {
  /** session_id lower-cased (JavaScript's toLowerCase), for the listing's case-insensitive session filter. */
  session_key: string;
  dedup_key: string | null;
  dim: number;
}

export interface LedgerTables {
  memory_messages: MessagesTable;
  memory_message_totals: { memory_id: string; bytes: number; messages: number };
  memory_message_guards: { memory_id: string; source_id: number; create_time: number };
  memory_message_sequence: { id: number; last_id: number };
  /** message_id 0 = the whole memory (deleteMemory): every search copy of it that the ledger no longer has. */
  memory_message_sync: { memory_id: string; message_id: number; token: string };
}

type Db = Kysely<LedgerTables>;
type Trx = Transaction<LedgerTables>;
type Row = MessagesTable;
/** A message as the ledger stores it. */
export type LedgerRow = MessagesTable;

/** A search copy to write again: the token of the transaction that asked, so a newer request is not settled by an older write. */
export interface SyncEntry {
  memory_id: string;
  message_id: number;
  token: string;
}

/** The sync entry of a whole memory. */
export const WHOLE_MEMORY = 0;

/** Ids per `in (…)` list, far below SQLite's and PostgreSQL's parameter limits. */
const IDS_PER_STATEMENT = 500;
/** Rows per insert (20 columns each). */
const ROWS_PER_INSERT = 100;
/** FIFO candidates read per page until enough bytes are found. */
const FIFO_PAGE = 256;


/** PostgreSQL's int8 refuses fractions, which SQLite keeps: times are whole milliseconds in both. */
const whole = (n: number) => Math.round(n);

/** The row of a message as stored (the embedded index's columns, plus session_key). */
function toRow(m: MemoryMessage, dedupKey: string | null): Row {
  return {
    message_id: m.message_id,
    memory_id: m.memory_id,
    tenant_id: m.tenant_id,
    message_type: m.message_type,
    source_id: m.source_id,
    user_id: m.user_id,
    agent_id: m.agent_id,
    session_id: m.session_id,
    session_key: m.session_id.toLowerCase(),
    dedup_key: dedupKey,
    content: m.content,
    valid_at: whole(m.valid_at),
    invalid_at: m.invalid_at === null ? null : whole(m.invalid_at),
    replaced_by: m.replaced_by ?? null,
    forget_at: m.forget_at === null ? null : whole(m.forget_at),
    status: m.status ? 1 : 0,
    size: m.size,
    create_time: whole(m.create_time),
    dim: m.vector.length,
    vector: m.vector.length ? toFloat32Blob(m.vector) : null,
  };
}

const newToken = () => randomBytes(16).toString('hex');

export class MemoryLedger {
  private readonly db: Db;

  constructor(meta: MetaDb) {
    this.db = meta.kysely as unknown as Db;
  }

  // ------------------------------------------------------------------ writes (each one transaction)

  async add(memoryId: string, messages: NewMemoryMessage[], options: AddOptions): Promise<AddResult> {
    return this.db.transaction().execute(async (trx) => {
      const used = await lockTotals(trx, memoryId);
      if (options.onceForSource !== undefined) {
        const done = await trx.selectFrom('memory_message_guards').select('source_id')
          .where('memory_id', '=', memoryId).where('source_id', '=', options.onceForSource).executeTakeFirst();
        if (done) return { messageIds: [], evicted: [], alreadyStored: true };
      }
      const keys = [...new Set(messages.flatMap((m) => (m.dedup_key ? [m.dedup_key] : [])))];
      const stored = new Map<string, number>();
      for (const batch of chunksOf(keys, IDS_PER_STATEMENT)) {
        const rows = await trx.selectFrom('memory_messages').select(['dedup_key', 'message_id'])
          .where('memory_id', '=', memoryId).where('dedup_key', 'in', batch).execute();
        for (const r of rows) stored.set(r.dedup_key!, r.message_id);
      }
      const ids = messages.map((m) => (m.dedup_key ? stored.get(m.dedup_key) : undefined));
      const fresh = messages.map((m, i) => ({ m, i, size: messageSize(m.content, m.vector.length) })).filter(({ i }) => ids[i] === undefined);
      let evicted: number[] = [];
      const token = newToken();
      if (fresh.length > 0) {
        const incoming = fresh.reduce((n, f) => n + f.size, 0);
        evicted = await planFifo(trx, memoryId, used.bytes, incoming, options.limit);
        await removeRows(trx, memoryId, evicted, token);
        const first = await allocateIds(trx, fresh.length);
        const now = Date.now();
        const rows = fresh.map(({ m, i, size }, j) => {
          ids[i] = first + j;
          const message: MemoryMessage = {
            ...m, message_id: first + j, memory_id: memoryId, tenant_id: options.tenantId, invalid_at: m.invalid_at ?? null, replaced_by: null,
            forget_at: null, status: true, size, create_time: now,
          };
          return toRow(message, m.dedup_key ?? null);
        });
        await insertRows(trx, rows);
        await addToTotals(trx, memoryId, incoming, fresh.length);
        await requestSync(trx, memoryId, rows.map((r) => r.message_id), token);
      }
      if (options.onceForSource !== undefined) {
        await trx.insertInto('memory_message_guards').values({ memory_id: memoryId, source_id: options.onceForSource, create_time: Date.now() })
          .onConflict((oc) => oc.columns(['memory_id', 'source_id']).doNothing()).execute();
      }
      return { messageIds: ids as number[], evicted, alreadyStored: false };
    });
  }

  async fitWithin(memoryId: string, limit: number): Promise<number[]> {
    return this.db.transaction().execute(async (trx) => {
      const used = await lockTotals(trx, memoryId);
      const evicted = await planFifo(trx, memoryId, used.bytes, 0, limit);
      await removeRows(trx, memoryId, evicted, newToken());
      return evicted;
    });
  }

  async remove(memoryId: string, messageIds: number[]): Promise<number> {
    if (messageIds.length === 0) return 0;
    return this.db.transaction().execute(async (trx) => {
      await lockTotals(trx, memoryId);
      return (await removeRows(trx, memoryId, [...new Set(messageIds)], newToken())).length;
    });
  }

  async deleteMemory(memoryId: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      await lockTotals(trx, memoryId);
      const { n } = await trx.selectFrom('memory_messages').select((eb) => eb.fn.countAll<number>().as('n'))
        .where('memory_id', '=', memoryId).executeTakeFirstOrThrow();
      await trx.deleteFrom('memory_messages').where('memory_id', '=', memoryId).execute();
      await trx.deleteFrom('memory_message_guards').where('memory_id', '=', memoryId).execute();
      // One entry stands for every search copy of the memory (however many messages it had).
      await trx.deleteFrom('memory_message_sync').where('memory_id', '=', memoryId).execute();
      await requestSync(trx, memoryId, [WHOLE_MEMORY], newToken());
      await trx.deleteFrom('memory_message_totals').where('memory_id', '=', memoryId).execute();
      return Number(n);
    });
  }

  async forget(memoryId: string, messageId: number, at: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await lockTotals(trx, memoryId);
      const { numUpdatedRows } = await trx.updateTable('memory_messages').set({ forget_at: whole(at) })
        .where('memory_id', '=', memoryId).where('message_id', '=', messageId).where('forget_at', 'is', null).executeTakeFirst();
      if (numUpdatedRows > 0n) {
        await requestSync(trx, memoryId, [messageId], newToken());
        return true;
      }
      return (await trx.selectFrom('memory_messages').select('message_id')
        .where('memory_id', '=', memoryId).where('message_id', '=', messageId).executeTakeFirst()) !== undefined;
    });
  }

  /** MemoryIndex.invalidate: invalid_at (an earlier one kept) and replaced_by, the search copy rewritten. */
  async invalidate(memoryId: string, messageId: number, at: number, replacedBy: number | null): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await lockTotals(trx, memoryId);
      const row = await trx.selectFrom('memory_messages').select('invalid_at')
        .where('memory_id', '=', memoryId).where('message_id', '=', messageId).executeTakeFirst();
      if (!row) return false;
      const invalidAt = row.invalid_at === null ? whole(at) : Math.min(row.invalid_at, whole(at));
      await trx.updateTable('memory_messages').set({ invalid_at: invalidAt, replaced_by: replacedBy })
        .where('memory_id', '=', memoryId).where('message_id', '=', messageId).execute();
      await requestSync(trx, memoryId, [messageId], newToken());
      return true;
    });
  }

  async itemsOf(memoryId: string, sourceIds: number[]): Promise<MemoryMessage[]> {
    if (sourceIds.length === 0) return [];
    const rows = await this.db.selectFrom('memory_messages').selectAll()
      .where('memory_id', '=', memoryId).where('source_id', 'in', sourceIds).orderBy('source_id').orderBy('message_id').execute();
    return rows.map(toMessage);
  }

  async setStatus(memoryId: string, messageId: number, status: boolean): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await lockTotals(trx, memoryId);
      const { numUpdatedRows } = await trx.updateTable('memory_messages').set({ status: status ? 1 : 0 })
        .where('memory_id', '=', memoryId).where('message_id', '=', messageId).executeTakeFirst();
      if (numUpdatedRows === 0n) return false;
      await requestSync(trx, memoryId, [messageId], newToken());
      return true;
    });
  }

  /** MemoryIndex.importMessages: rows replaced by id, sizes added, no FIFO; the id sequence raised past them. */
  async importMessages(memoryId: string, messages: MemoryMessage[], idsUsedThrough = 0): Promise<void> {
    const byId = new Map(messages.map((m) => [m.message_id, m]));
    const ids = [...byId.keys()];
    await this.db.transaction().execute(async (trx) => {
      await lockTotals(trx, memoryId);
      for (const batch of chunksOf(ids, IDS_PER_STATEMENT)) {
        const taken = await trx.selectFrom('memory_messages').select('message_id')
          .where('memory_id', '!=', memoryId).where('message_id', 'in', batch).limit(5).execute();
        if (taken.length) {
          throw new Error(`cannot import into memory ${memoryId}: message id(s) ${taken.map((t) => t.message_id).join(', ')} belong to another memory`);
        }
      }
      const token = newToken();
      await removeRows(trx, memoryId, ids, token);
      await insertRows(trx, [...byId.values()].map((m) => toRow(m, null)));
      if (ids.length) await addToTotals(trx, memoryId, [...byId.values()].reduce((n, m) => n + m.size, 0), ids.length);
      await requestSync(trx, memoryId, ids, token);
      const floor = ids.reduce((max, id) => Math.max(max, id), idsUsedThrough);
      await trx.updateTable('memory_message_sequence').set({ last_id: floor }).where('id', '=', 1).where('last_id', '<', floor).execute();
    });
  }

  // ------------------------------------------------------------------ reads

  async get(memoryId: string, messageId: number): Promise<MemoryMessage | undefined> {
    const row = await this.db.selectFrom('memory_messages').selectAll()
      .where('memory_id', '=', memoryId).where('message_id', '=', messageId).executeTakeFirst();
    return row ? toMessage(row) : undefined;
  }

  async getMany(ids: number[]): Promise<MemoryMessage[]> {
    const byId = await this.rows(ids);
    return ids.flatMap((id) => (byId.has(id) ? [toMessage(byId.get(id)!)] : []));
  }

  /** Stored rows by id (for the search copies). */
  async rows(ids: number[]): Promise<Map<number, Row>> {
    const found = new Map<number, Row>();
    for (const batch of chunksOf([...new Set(ids)], IDS_PER_STATEMENT)) {
      for (const r of await this.db.selectFrom('memory_messages').selectAll().where('message_id', 'in', batch).execute()) found.set(r.message_id, r);
    }
    return found;
  }

  async usage(memoryId: string): Promise<MemoryUsage> {
    const row = await this.db.selectFrom('memory_message_totals').select(['bytes', 'messages']).where('memory_id', '=', memoryId).executeTakeFirst();
    return row ? { bytes: Number(row.bytes), messages: Number(row.messages) } : { bytes: 0, messages: 0 };
  }

  async recount(memoryId: string): Promise<MemoryUsage> {
    const row = await this.db.selectFrom('memory_messages')
      .select((eb) => [eb.fn.sum<number | null>('size').as('bytes'), eb.fn.countAll<number>().as('messages')])
      .where('memory_id', '=', memoryId).executeTakeFirstOrThrow();
    return { bytes: Number(row.bytes ?? 0), messages: Number(row.messages) };
  }

  async list(memoryId: string, query: MemoryListQuery) {
    const pageSize = Math.max(1, Math.floor(query.pageSize));
    const page = Math.max(1, Math.floor(query.page));
    const keywords = query.sessionKeywords?.trim().toLowerCase() || undefined;
    const roots = this.db.selectFrom('memory_messages as r')
      .where('r.memory_id', '=', memoryId)
      // Top level: raw messages, and extracted items whose raw message is gone.
      .where((eb) => eb.or([
        eb('r.source_id', '=', 0),
        eb.not(eb.exists(eb.selectFrom('memory_messages as s').select('s.message_id').whereRef('s.message_id', '=', 'r.source_id'))),
      ]))
      .$if(Boolean(query.agentIds?.length), (q) => q.where('r.agent_id', 'in', query.agentIds!))
      .$if(keywords !== undefined, (q) => q.where(sql<boolean>`r.session_key like ${`%${escapeLike(keywords!)}%`} escape '\\'`));
    const { n } = await roots.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const messages = (await roots.selectAll('r').orderBy('r.valid_at', 'desc').orderBy('r.message_id', 'desc')
      .limit(pageSize).offset((page - 1) * pageSize).execute()).map(toMessage);
    const extracted = new Map<number, MemoryMessage[]>();
    const raw = messages.filter((m) => m.message_type === 'raw').map((m) => m.message_id);
    for (const batch of chunksOf(raw, IDS_PER_STATEMENT)) {
      const items = await this.db.selectFrom('memory_messages').selectAll()
        .where('memory_id', '=', memoryId).where('source_id', 'in', batch).orderBy('source_id').orderBy('message_id').execute();
      for (const row of items) {
        const item = toMessage(row);
        extracted.set(item.source_id, [...(extracted.get(item.source_id) ?? []), item]);
      }
    }
    return { total: Number(n), messages, extracted };
  }

  async recent(query: MemoryRecentQuery): Promise<MemoryMessage[]> {
    if (query.memoryIds.length === 0 || query.limit <= 0) return [];
    const rows = await this.db.selectFrom('memory_messages').selectAll()
      .where('memory_id', 'in', query.memoryIds)
      .$if(query.agentId !== undefined, (q) => q.where('agent_id', '=', query.agentId!))
      .$if(query.sessionId !== undefined, (q) => q.where('session_id', '=', query.sessionId!))
      .$if(query.userId !== undefined, (q) => q.where('user_id', '=', query.userId!))
      .where('forget_at', 'is', null)
      .$if(query.currentAt !== undefined, (q) => q.where((eb) => eb.or([eb('invalid_at', 'is', null), eb('invalid_at', '>', whole(query.currentAt!))])))
      .orderBy('valid_at', 'desc').orderBy('message_id', 'desc')
      .limit(Math.floor(query.limit)).execute();
    return rows.map(toMessage);
  }

  /** Of `ids`, those that search may return under `filter`: enabled, not forgotten, of its memories, agent, session and user. */
  async searchable(ids: number[], filter: MemorySearchFilter): Promise<Set<number>> {
    const found = new Set<number>();
    if (filter.memoryIds.length === 0) return found;
    for (const batch of chunksOf([...new Set(ids)], IDS_PER_STATEMENT)) {
      const rows = await this.db.selectFrom('memory_messages').select('message_id')
        .where('message_id', 'in', batch)
        .where('memory_id', 'in', filter.memoryIds)
        .$if(filter.agentId !== undefined, (q) => q.where('agent_id', '=', filter.agentId!))
        .$if(filter.sessionId !== undefined, (q) => q.where('session_id', '=', filter.sessionId!))
        .$if(filter.userId !== undefined, (q) => q.where('user_id', '=', filter.userId!))
        .where('status', '=', 1).where('forget_at', 'is', null)
        .$if(filter.currentAt !== undefined, (q) => q.where((eb) => eb.or([eb('invalid_at', 'is', null), eb('invalid_at', '>', whole(filter.currentAt!))])))
        .execute();
      for (const r of rows) found.add(r.message_id);
    }
    return found;
  }

  /** The stored vectors of these messages that have `dim` dimensions, as floats read in place (no copy to number[]). */
  async vectors(ids: number[], dim: number): Promise<Map<number, Float32Array>> {
    const found = new Map<number, Float32Array>();
    for (const batch of chunksOf([...new Set(ids)], IDS_PER_STATEMENT)) {
      const rows = await this.db.selectFrom('memory_messages').select(['message_id', 'vector'])
        .where('message_id', 'in', batch).where('dim', '=', dim).execute();
      for (const r of rows) if (r.vector) found.set(r.message_id, float32sOf(r.vector));
    }
    return found;
  }

  /** The ids of the memory's messages. */
  async messageIdsOf(memoryId: string): Promise<Set<number>> {
    const rows = await this.db.selectFrom('memory_messages').select('message_id').where('memory_id', '=', memoryId).execute();
    return new Set(rows.map((r) => r.message_id));
  }

  // ------------------------------------------------------------------ search copies to write

  /** Sync entries of these memories (at most `limit`). */
  async pending(memoryIds: string[], limit: number): Promise<SyncEntry[]> {
    if (memoryIds.length === 0) return [];
    return this.db.selectFrom('memory_message_sync').select(['memory_id', 'message_id', 'token'])
      .where('memory_id', 'in', [...new Set(memoryIds)]).orderBy('memory_id').orderBy('message_id').limit(limit).execute();
  }

  /** Removes entries whose search copies were written, unless a newer change asked again (another token) since. */
  async settle(entries: SyncEntry[]): Promise<void> {
    const groups = new Map<string, SyncEntry[]>();
    for (const e of entries) {
      const key = `${e.token}\u0000${e.memory_id}`;
      groups.set(key, [...(groups.get(key) ?? []), e]);
    }
    for (const group of groups.values()) {
      const { token, memory_id } = group[0]!;
      for (const batch of chunksOf(group.map((e) => e.message_id), IDS_PER_STATEMENT)) {
        await this.db.deleteFrom('memory_message_sync')
          .where('token', '=', token).where('memory_id', '=', memory_id).where('message_id', 'in', batch).execute();
      }
    }
  }

  /** The messages after `afterId` in id order (at most `limit`): id, memory and content, for re-analysing search copies. */
  async contentsAfter(afterId: number, limit: number): Promise<{ message_id: number; memory_id: string; content: string }[]> {
    const rows = await this.db.selectFrom('memory_messages').select(['message_id', 'memory_id', 'content'])
      .where('message_id', '>', afterId).orderBy('message_id').limit(limit).execute();
    return rows.map((r) => ({ ...r, message_id: Number(r.message_id) }));
  }

  /**
   * Asks for the search copies of these messages to be written again, as a write does (one transaction,
   * a token of its own). No memory lock: an entry that replaces a concurrent writer's token is settled by
   * whichever sync writes the copy from the ledger next.
   */
  async requestCopies(messages: { memory_id: string; message_id: number }[]): Promise<void> {
    const byMemory = new Map<string, number[]>();
    for (const m of messages) {
      const ids = byMemory.get(m.memory_id);
      if (ids) ids.push(m.message_id);
      else byMemory.set(m.memory_id, [m.message_id]);
    }
    const token = newToken();
    await this.db.transaction().execute(async (trx) => {
      for (const [memoryId, ids] of byMemory) await requestSync(trx, memoryId, ids, token);
    });
  }

  async ping(): Promise<void> {
    await this.db.selectFrom('memory_message_sequence').select('last_id').limit(1).execute();
  }
}

/**
 * Takes the memory's write lock (its totals row, created at 0 when missing) and returns its total. The
 * no-op update is what locks: an insert that conflicts with `do nothing` would not on PostgreSQL.
 */
async function lockTotals(trx: Trx, memoryId: string): Promise<MemoryUsage> {
  const row = await trx.insertInto('memory_message_totals').values({ memory_id: memoryId, bytes: 0, messages: 0 })
    .onConflict((oc) => oc.column('memory_id').doUpdateSet({ bytes: (eb) => eb.ref('memory_message_totals.bytes') }))
    .returning(['bytes', 'messages']).executeTakeFirstOrThrow();
  return { bytes: Number(row.bytes), messages: Number(row.messages) };
}

async function addToTotals(trx: Trx, memoryId: string, bytes: number, messages: number): Promise<void> {
  await trx.updateTable('memory_message_totals')
    .set((eb) => ({ bytes: eb('bytes', '+', bytes), messages: eb('messages', '+', messages) }))
    .where('memory_id', '=', memoryId).execute();
}

/** `n` consecutive new ids of the global sequence; the first is returned. */
async function allocateIds(trx: Trx, n: number): Promise<number> {
  const { last_id } = await trx.updateTable('memory_message_sequence').set((eb) => ({ last_id: eb('last_id', '+', n) }))
    .where('id', '=', 1).returning('last_id').executeTakeFirstOrThrow();
  return Number(last_id) - n + 1;
}

async function insertRows(trx: Trx, rows: Row[]): Promise<void> {
  for (const batch of chunksOf(rows, ROWS_PER_INSERT)) await trx.insertInto('memory_messages').values(batch).execute();
}

async function requestSync(trx: Trx, memoryId: string, messageIds: number[], token: string): Promise<void> {
  for (const batch of chunksOf(messageIds, IDS_PER_STATEMENT)) {
    await trx.insertInto('memory_message_sync').values(batch.map((message_id) => ({ memory_id: memoryId, message_id, token })))
      .onConflict((oc) => oc.columns(['memory_id', 'message_id']).doUpdateSet({ token: (eb) => eb.ref('excluded.token') }))
      .execute();
  }
}

/** Deletes the messages of the memory among `ids`, takes their sizes off the total and asks for their search copies to go; returns the ids removed. */
async function removeRows(trx: Trx, memoryId: string, ids: number[], token: string): Promise<number[]> {
  const removed: number[] = [];
  let bytes = 0;
  for (const batch of chunksOf(ids, IDS_PER_STATEMENT)) {
    const rows = await trx.selectFrom('memory_messages').select(['message_id', 'size'])
      .where('memory_id', '=', memoryId).where('message_id', 'in', batch).execute();
    if (rows.length === 0) continue;
    await trx.deleteFrom('memory_messages').where('memory_id', '=', memoryId).where('message_id', 'in', rows.map((r) => r.message_id)).execute();
    for (const r of rows) {
      removed.push(r.message_id);
      bytes += Number(r.size);
    }
  }
  if (removed.length === 0) return removed;
  await addToTotals(trx, memoryId, -bytes, -removed.length);
  await requestSync(trx, memoryId, removed, token);
  return removed;
}

/**
 * The FIFO plan (planEviction) over the memory's messages in FIFO order: forgotten ones by forget_at,
 * then the others by valid_at, ties by id. Reads pages only until they hold the bytes to free.
 */
async function planFifo(trx: Trx, memoryId: string, used: number, incoming: number, limit: number): Promise<number[]> {
  const excess = used + incoming - limit;
  const candidates: FifoCandidate[] = [];
  if (incoming <= limit && excess > 0) {
    let gathered = 0;
    const base = trx.selectFrom('memory_messages').select(['message_id', 'size', 'forget_at', 'valid_at']).where('memory_id', '=', memoryId);
    const phases = [
      base.where('forget_at', 'is not', null).orderBy('forget_at').orderBy('valid_at').orderBy('message_id'),
      base.where('forget_at', 'is', null).orderBy('valid_at').orderBy('message_id'),
    ];
    for (const phase of phases) {
      for (let offset = 0; gathered < excess; offset += FIFO_PAGE) {
        const page = await phase.limit(FIFO_PAGE).offset(offset).execute();
        for (const c of page) {
          candidates.push({ ...c, size: Number(c.size) });
          gathered += Number(c.size);
        }
        if (page.length < FIFO_PAGE) break;
      }
    }
  }
  return planEviction(used, incoming, limit, candidates);
}
