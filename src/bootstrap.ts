import fs from 'node:fs';
import path from 'node:path';
import { randomToken } from './ids.js';
import type { AuthService } from './services/auth.js';
import type { MetaStore } from './store/index.js';

export const ADMIN_EMAIL = 'admin@cairn.local';

/** Files beside the database holding the admin's first credentials (mode 0600). */
export const ADMIN_KEY_FILE = 'admin-api-key';
export const ADMIN_PASSWORD_FILE = 'admin-password';

/** A generated password: long enough to need no rules (16 characters, more if CAIRN_MIN_PASSWORD_LENGTH asks), short enough to type from a printout. */
export function generatedPassword(minLength: number): string {
  return randomToken(Math.ceil((Math.max(16, minLength) * 3) / 4)).slice(0, Math.max(16, minLength));
}

/** Writes a secret for the operator beside the database, readable by its owner only. */
export function writeSecretFile(dataDir: string, name: string, secret: string): string {
  const file = path.join(dataDir, name);
  fs.writeFileSync(file, secret + '\n', { mode: 0o600 });
  fs.chmodSync(file, 0o600); // an existing file keeps its mode on write
  return file;
}

export interface AdminCredentials {
  email: string;
  password: string;
  apiKey: string;
}

/**
 * On first start (no users yet) creates the admin user with a generated password and an API key, written to
 * data/admin-password and data/admin-api-key (mode 0600), so the admin can use the console as well as the API.
 * Returns them when they were created (by this process: of replicas starting together, one).
 */
export async function ensureAdmin(store: MetaStore, auth: AuthService, dataDir: string): Promise<AdminCredentials | undefined> {
  if ((await store.users.count()) > 0) return undefined;
  const password = generatedPassword(auth.minPasswordLength);
  let user;
  try {
    user = await auth.register({ email: ADMIN_EMAIL, nickname: 'admin', password }, true);
  } catch (err) {
    // API replicas that start together on an empty database race to create the admin: the losers keep
    // the winner's (its key is in the winner's data dir) instead of failing their start.
    if (await store.users.byEmail(ADMIN_EMAIL)) return undefined;
    throw err;
  }
  const { token } = await auth.createApiKey(user.id, 'admin');
  writeSecretFile(dataDir, ADMIN_KEY_FILE, token);
  writeSecretFile(dataDir, ADMIN_PASSWORD_FILE, password);
  return { email: ADMIN_EMAIL, password, apiKey: token };
}
