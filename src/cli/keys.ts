import type { Config } from '../config.js';
import { openDatabase } from '../store/db.js';
import { MetaStore } from '../store/index.js';
import { AuthService } from '../services/auth.js';
import { resolveJwtSecret } from '../secrets.js';
import { randomToken } from '../ids.js';

/** Creates an API key for the user with this email, creating the user when there is none. */
export async function createKey(config: Config, email: string): Promise<string> {
  const db = await openDatabase(config.databaseUrl);
  try {
    const store = new MetaStore(db);
    const auth = new AuthService(store, await resolveJwtSecret(config, store), { minPasswordLength: config.minPasswordLength });
    const user = (await store.users.byEmail(email)) ?? (await auth.register({ email, nickname: email.split('@')[0].replace(/[^\w .'-]/g, '_'), password: randomToken(Math.max(24, config.minPasswordLength)) }));
    return (await auth.createApiKey(user.id, 'cli')).token;
  } finally {
    await db.close();
  }
}
