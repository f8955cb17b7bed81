import { sql, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { ChatsTable, Database } from './schema.js';
import { containsText, countAndPage, type PageQuery } from './paging.js';

export type ChatRow = Selectable<ChatsTable>;
export type ChatPatch = Updateable<ChatsTable>;

export interface ChatQuery extends PageQuery<'create_time' | 'update_time' | 'name'> {
  tenantId: string;
  id?: string;
  name?: string;
  /** Case-insensitive substring of the name. */
  keywords?: string;
  /** Only chats whose tenant is one of these. */
  ownerIds?: string[];
  /** Only chats with an attached dataset of this chunk method. */
  chunkMethod?: string;
}

/** An attached dataset that still exists (deleted datasets drop out of a chat's view). */
export interface ChatDatasetRef {
  chat_id: string;
  dataset_id: string;
  name: string;
  embedding_model: string;
}

export class ChatRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: ChatRow, datasetIds: string[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('chats').values(row).execute();
      await setDatasets(trx, row.id, datasetIds);
    });
  }

  byId(id: string): Promise<ChatRow | undefined> {
    return this.db.selectFrom('chats').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async nameTaken(tenantId: string, name: string, exceptId?: string): Promise<boolean> {
    // Case-insensitive, as RAGFlow compares chat names.
    let q = this.db.selectFrom('chats').select('id').where('tenant_id', '=', tenantId).where(sql<boolean>`lower(name) = ${name.toLowerCase()}`);
    if (exceptId) q = q.where('id', '!=', exceptId);
    return (await q.executeTakeFirst()) !== undefined;
  }

  async list(query: ChatQuery): Promise<{ total: number; rows: ChatRow[] }> {
    let q = this.db.selectFrom('chats').where('tenant_id', '=', query.tenantId);
    if (query.id) q = q.where('id', '=', query.id);
    if (query.name) q = q.where('name', '=', query.name);
    if (query.keywords) q = q.where(containsText('name', query.keywords));
    if (query.ownerIds) q = q.where('tenant_id', 'in', query.ownerIds.length ? query.ownerIds : ['']);
    if (query.chunkMethod) {
      const method = query.chunkMethod;
      q = q.where((eb) =>
        eb.exists(
          eb
            .selectFrom('chat_datasets')
            .innerJoin('datasets', 'datasets.id', 'chat_datasets.dataset_id')
            .select('chat_datasets.dataset_id')
            .whereRef('chat_datasets.chat_id', '=', 'chats.id')
            .where('datasets.status', '=', 'active')
            .where('datasets.chunk_method', '=', method),
        ),
      );
    }
    return countAndPage(q, query);
  }

  /** Every chat id of a tenant (for delete_all). */
  async idsOfTenant(tenantId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('chats').select('id').where('tenant_id', '=', tenantId).execute();
    return rows.map((r) => r.id);
  }

  /** Attached datasets that are still active, per chat, in attachment order. */
  async datasets(chatIds: string[]): Promise<Map<string, ChatDatasetRef[]>> {
    const out = new Map<string, ChatDatasetRef[]>(chatIds.map((id) => [id, []]));
    if (chatIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('chat_datasets')
      .innerJoin('datasets', 'datasets.id', 'chat_datasets.dataset_id')
      .select(['chat_datasets.chat_id', 'chat_datasets.dataset_id', 'datasets.name', 'datasets.embedding_model'])
      .where('chat_datasets.chat_id', 'in', chatIds)
      .where('datasets.status', '=', 'active')
      .orderBy('chat_datasets.position')
      .execute();
    for (const r of rows) out.get(r.chat_id)!.push(r);
    return out;
  }

  async update(id: string, patch: ChatPatch, datasetIds?: string[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('chats').set(patch).where('id', '=', id).execute();
      if (datasetIds) await setDatasets(trx, id, datasetIds);
    });
  }

  /** Removes chats with their dataset links and sessions (cascade). */
  async delete(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.deleteFrom('chats').where('id', 'in', ids).execute();
  }
}

async function setDatasets(trx: Kysely<Database>, chatId: string, datasetIds: string[]): Promise<void> {
  await trx.deleteFrom('chat_datasets').where('chat_id', '=', chatId).execute();
  if (datasetIds.length === 0) return;
  await trx
    .insertInto('chat_datasets')
    .values(datasetIds.map((dataset_id, position) => ({ chat_id: chatId, dataset_id, position })))
    .execute();
}
