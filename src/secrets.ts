import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { MetaStore } from './store/index.js';

/** A secret kept in a 0600 file under the data dir, created on first use. */
export function loadOrCreateSecret(dataDir: string, name: string): Uint8Array {
  const file = path.join(dataDir, name);
  if (fs.existsSync(file)) return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  const secret = randomBytes(32);
  fs.writeFileSync(file, secret.toString('base64') + '\n', { mode: 0o600 });
  return secret;
}

/** Shortest CAIRN_JWT_SECRET accepted: HS256 keys should carry at least 256 bits. */
export const MIN_JWT_SECRET_LENGTH = 32;

/**
 * The key that signs login tokens; every process that serves the API must hold the same one.
 * CAIRN_JWT_SECRET when set; else, on PostgreSQL, a row of the shared `settings` table created once
 * by whichever replica starts first; else (embedded SQLite) the data dir's jwt-secret file, as always.
 */
export async function resolveJwtSecret(config: { jwtSecret?: string; dataDir: string }, store: MetaStore): Promise<Uint8Array> {
  if (config.jwtSecret !== undefined) {
    if (Buffer.byteLength(config.jwtSecret) < MIN_JWT_SECRET_LENGTH) {
      throw new Error(`CAIRN_JWT_SECRET must be at least ${MIN_JWT_SECRET_LENGTH} bytes long (e.g. \`openssl rand -base64 32\`)`);
    }
    return Buffer.from(config.jwtSecret, 'utf8');
  }
  if (store.db.dialect === 'postgres') {
    const value = await store.settings.getOrCreate('jwt-secret', () => randomBytes(32).toString('base64'));
    return Buffer.from(value, 'base64');
  }
  return loadOrCreateSecret(config.dataDir, 'jwt-secret');
}
