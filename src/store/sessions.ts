import type { Kysely, Selectable } from 'kysely';
import type { ChatSessionsTable, Database } from './schema.js';
import { onPostgres } from './dialect.js';
import { pageRows, type PageQuery } from './paging.js';

export type SessionRow = Selectable<ChatSessionsTable>;

/** One message of a session, as stored in its `messages` JSON column. */
export interface StoredMessage {
  /** A question and its answer share the id of their turn. */
  id: string;
  role: 'user' | 'assistant';
  content: string;
  /** Unix seconds (fractional). */
  created_at: number;
  /** The model's reasoning ("thinking") text, kept apart from the answer. */
  reasoning?: string;
  /** The answer's references: {chunks, doc_aggs, total}. */
  reference?: Record<string, unknown>;
}

export interface SessionQuery extends PageQuery<'create_time' | 'update_time' | 'name'> {
  chatId: string;
  id?: string;
  name?: string;
  userId?: string;
}

export class SessionRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: SessionRow): Promise<void> {
    await this.db.insertInto('chat_sessions').values(row).execute();
  }

  byId(id: string): Promise<SessionRow | undefined> {
    return this.db.selectFrom('chat_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(query: SessionQuery): Promise<SessionRow[]> {
    let q = this.db.selectFrom('chat_sessions').where('chat_id', '=', query.chatId);
    if (query.id) q = q.where('id', '=', query.id);
    if (query.name) q = q.where('name', '=', query.name);
    if (query.userId) q = q.where('user_id', '=', query.userId);
    return pageRows(q, query);
  }

  async idsOfChat(chatId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('chat_sessions').select('id').where('chat_id', '=', chatId).execute();
    return rows.map((r) => r.id);
  }

  async rename(id: string, name: string, now: number): Promise<void> {
    await this.db.updateTable('chat_sessions').set({ name, update_time: now }).where('id', '=', id).execute();
  }

  /** Appends messages atomically, so concurrent turns on one session never drop each other's messages. */
  async appendMessages(id: string, messages: StoredMessage[], now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      let read = trx.selectFrom('chat_sessions').select('messages').where('id', '=', id);
      // SQLite runs one transaction at a time; on PostgreSQL the row lock makes a concurrent append wait.
      if (onPostgres(trx)) read = read.forUpdate();
      const row = await read.executeTakeFirst();
      if (!row) return; // deleted meanwhile: nothing to keep
      const stored = JSON.parse(row.messages) as StoredMessage[];
      await trx
        .updateTable('chat_sessions')
        .set({ messages: JSON.stringify([...stored, ...messages]), update_time: now })
        .where('id', '=', id)
        .execute();
    });
  }

  async delete(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.deleteFrom('chat_sessions').where('id', 'in', ids).execute();
  }
}
