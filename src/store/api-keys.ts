import type { Kysely, Selectable } from 'kysely';
import type { ApiKeysTable, Database } from './schema.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

export class ApiKeyRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async create(row: ApiKeyRow): Promise<void> {
    await this.db.insertInto('api_keys').values(row).execute();
  }

  byHash(tokenHash: string): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  }

  byBeta(beta: string): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('beta', '=', beta).executeTakeFirst();
  }

  async setBeta(id: string, beta: string): Promise<void> {
    await this.db.updateTable('api_keys').set({ beta }).where('id', '=', id).execute();
  }

  listForUser(userId: string): Promise<ApiKeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().where('user_id', '=', userId).orderBy('create_time').execute();
  }

  /** Deletes one of the user's keys, named by its id or its hash. */
  async delete(userId: string, idOrHash: string): Promise<number> {
    const res = await this.db
      .deleteFrom('api_keys')
      .where('user_id', '=', userId)
      .where((eb) => eb.or([eb('id', '=', idOrHash), eb('token_hash', '=', idOrHash)]))
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  async touch(id: string, now: number): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', id).execute();
  }
}
