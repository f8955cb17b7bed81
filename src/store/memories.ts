import { sql, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { Database, MemoriesTable, MemoryTasksTable } from './schema.js';
import { nameKeyTaken, nameKeysLike } from './name-keys.js';
import { containsText, countAndPage, visibleTo, type PageQuery, type Visibility } from './paging.js';

export type MemoryRow = Selectable<MemoriesTable>;
export type MemoryPatch = Updateable<MemoriesTable>;
export type MemoryTaskRow = Selectable<MemoryTasksTable>;

export interface MemoryQuery extends PageQuery<'create_time' | 'update_time'> {
  /** Tenants whose memories the caller may see: its own always, team tenants' only when `team`. */
  visibleTo: Visibility;
  /** Only memories owned by these tenants. */
  ownerIds?: string[];
  ids?: string[];
  /** Memories whose type mask shares a bit with this mask. */
  typeMask?: number;
  storageType?: string;
  keywords?: string;
}

/** Memories and the extraction tasks of their raw messages. */
export class MemoryRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: MemoryRow): Promise<void> {
    await this.db.insertInto('memories').values(row).execute();
  }

  byId(id: string): Promise<MemoryRow | undefined> {
    return this.db.selectFrom('memories').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Name keys of a tenant's memories starting with `nameKey`, for `name(1)` de-duplication. */
  namesLike(tenantId: string, nameKey: string): Promise<string[]> {
    return nameKeysLike(this.db, 'memories', tenantId, nameKey);
  }

  nameTaken(tenantId: string, nameKey: string, exceptId: string): Promise<boolean> {
    return nameKeyTaken(this.db, 'memories', tenantId, nameKey, exceptId);
  }

  async list(query: MemoryQuery): Promise<{ total: number; rows: MemoryRow[] }> {
    let q = this.db.selectFrom('memories').where(visibleTo(query.visibleTo));
    if (query.ownerIds?.length) q = q.where('tenant_id', 'in', query.ownerIds);
    if (query.ids?.length) q = q.where('id', 'in', query.ids);
    if (query.typeMask) q = q.where(sql<boolean>`(memory_type & ${query.typeMask}) != 0`);
    if (query.storageType) q = q.where('storage_type', '=', query.storageType);
    if (query.keywords) q = q.where(containsText('name_key', query.keywords));
    return countAndPage(q, query);
  }

  async update(id: string, patch: MemoryPatch): Promise<void> {
    await this.db.updateTable('memories').set(patch).where('id', '=', id).execute();
  }

  /** Removes the memory and (by cascade) its tasks. */
  async remove(id: string): Promise<void> {
    await this.db.deleteFrom('memory_tasks').where('memory_id', '=', id).execute();
    await this.db.deleteFrom('memories').where('id', '=', id).execute();
  }

  async ownerNames(tenantIds: string[]): Promise<Map<string, string>> {
    if (tenantIds.length === 0) return new Map();
    const rows = await this.db.selectFrom('users').select(['id', 'nickname']).where('id', 'in', [...new Set(tenantIds)]).execute();
    return new Map(rows.map((r) => [r.id, r.nickname]));
  }

  /** Agent titles by id, for `agent_name` in message listings (unknown ids are absent). */
  async agentTitles(agentIds: string[]): Promise<Map<string, string>> {
    const ids = [...new Set(agentIds.filter(Boolean))];
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('agents').select(['id', 'title']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, r.title]));
  }

  async createTask(memoryId: string, messageId: number, progressMsg: string, now: number): Promise<void> {
    await this.db
      .insertInto('memory_tasks')
      .values({ memory_id: memoryId, message_id: messageId, progress: 0, progress_msg: progressMsg, create_time: now, update_time: now })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /** Records progress unless the task already ended (progress 1 or -1): a late or repeated step never reopens it. */
  async updateTask(memoryId: string, messageId: number, progress: number, progressMsg: string, now: number): Promise<boolean> {
    const res = await this.db
      .updateTable('memory_tasks')
      .set({ progress, progress_msg: progressMsg, update_time: now })
      .where('memory_id', '=', memoryId)
      .where('message_id', '=', messageId)
      .where('progress', '>=', 0)
      .where('progress', '<', 1)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /**
   * Extraction tasks by state, over every memory: Running (queued or under way), Completed (progress 1) and
   * Failed (progress -1), one per raw message added to a memory (its task row).
   */
  async countTasksByState(): Promise<Map<string, number>> {
    const row = await this.db
      .selectFrom('memory_tasks')
      .select([
        sql<number>`coalesce(sum(case when progress >= 1 then 1 else 0 end), 0)`.as('completed'),
        sql<number>`coalesce(sum(case when progress < 0 then 1 else 0 end), 0)`.as('failed'),
        (eb) => eb.fn.countAll<number>().as('total'),
      ])
      .executeTakeFirstOrThrow();
    const completed = Number(row.completed);
    const failed = Number(row.failed);
    return new Map([['Running', Number(row.total) - completed - failed], ['Completed', completed], ['Failed', failed]]);
  }

  async task(memoryId: string, messageId: number): Promise<MemoryTaskRow | undefined> {
    return this.db.selectFrom('memory_tasks').selectAll().where('memory_id', '=', memoryId).where('message_id', '=', messageId).executeTakeFirst();
  }

  async tasks(memoryId: string, messageIds: number[]): Promise<Map<number, MemoryTaskRow>> {
    if (messageIds.length === 0) return new Map();
    const rows = await this.db.selectFrom('memory_tasks').selectAll().where('memory_id', '=', memoryId).where('message_id', 'in', messageIds).execute();
    return new Map(rows.map((r) => [Number(r.message_id), r]));
  }
}
