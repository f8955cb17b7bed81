import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/** A secret kept in a 0600 file under the data dir, created on first use. */
export function loadOrCreateSecret(dataDir: string, name: string): Uint8Array {
  const file = path.join(dataDir, name);
  if (fs.existsSync(file)) return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  const secret = randomBytes(32);
  fs.writeFileSync(file, secret.toString('base64') + '\n', { mode: 0o600 });
  return secret;
}
