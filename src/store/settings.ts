import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Installation-wide values: created once by whichever process comes first, then read by all. */
export class SettingsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The value of `key`, storing `make()` first when there is none. Race-safe: of processes that start
   * together, the first insert wins and everyone reads the winner's value.
   */
  async getOrCreate(key: string, make: () => string): Promise<string> {
    await this.db
      .insertInto('settings')
      .values({ key, value: make(), create_time: Date.now() })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const row = await this.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
    return row.value;
  }
}
