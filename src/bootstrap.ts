import fs from 'node:fs';
import path from 'node:path';
import { randomToken } from './ids.js';
import type { AuthService } from './services/auth.js';
import type { MetaStore } from './store/index.js';

export const ADMIN_EMAIL = 'admin@cairn.local';

/**
 * On first start (no users yet) creates the admin user and an API key, written to data/admin-api-key
 * (mode 0600). Returns the key when one was created (by this process: of replicas starting together, one).
 */
export async function ensureAdmin(store: MetaStore, auth: AuthService, dataDir: string): Promise<string | undefined> {
  if ((await store.users.count()) > 0) return undefined;
  let user;
  try {
    user = await auth.register({ email: ADMIN_EMAIL, nickname: 'admin', password: randomToken(24) }, true);
  } catch (err) {
    // API replicas that start together on an empty database race to create the admin: the losers keep
    // the winner's (its key is in the winner's data dir) instead of failing their start.
    if (await store.users.byEmail(ADMIN_EMAIL)) return undefined;
    throw err;
  }
  const { token } = await auth.createApiKey(user.id, 'admin');
  fs.writeFileSync(path.join(dataDir, 'admin-api-key'), token + '\n', { mode: 0o600 });
  return token;
}
