import type { Config } from '../config.js';
import { openDatabase } from '../store/db.js';
import { MetaStore } from '../store/index.js';
import { AuthService } from '../services/auth.js';
import { resolveJwtSecret } from '../secrets.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD_FILE, generatedPassword, writeSecretFile } from '../bootstrap.js';
import { UsageError } from './options.js';

export const SET_PASSWORD_USAGE = 'cairn users set-password EMAIL | --reset-admin';

export interface SetPasswordRequest {
  email: string;
  /** The new password; undefined: generate one (and print it). */
  password?: string;
  /** The admin's reset: the generated password is also written to data/admin-password. */
  resetAdmin: boolean;
}

/** `users set-password EMAIL` or `users set-password --reset-admin`, with the password read from a pipe if any. */
export function parseSetPasswordArgs(args: string[], piped: string | undefined): SetPasswordRequest {
  const [sub, target, ...extra] = args;
  if (sub !== 'set-password' || !target || extra.length) throw new UsageError(`usage: ${SET_PASSWORD_USAGE}`);
  const password = piped?.replace(/\r?\n$/, '');
  if (piped !== undefined && !password) throw new UsageError('cairn users set-password: the password read from standard input is empty');
  if (target === '--reset-admin') return { email: ADMIN_EMAIL, password, resetAdmin: true };
  if (target.startsWith('-')) throw new UsageError(`cairn users set-password: unknown option ${target}\nusage: ${SET_PASSWORD_USAGE}`);
  return { email: target, password, resetAdmin: false };
}

/** Sets the password; returns what to print. A user that does not exist is an error naming the e-mail. */
export async function setPassword(config: Config, request: SetPasswordRequest): Promise<string> {
  const db = await openDatabase(config.databaseUrl);
  try {
    const store = new MetaStore(db);
    const auth = new AuthService(store, await resolveJwtSecret(config, store), { minPasswordLength: config.minPasswordLength });
    const password = request.password ?? generatedPassword(auth.minPasswordLength);
    const user = await auth.setPassword(request.email, password);
    const lines = [`Password set for ${user.email}.`];
    if (request.resetAdmin) lines.push(`Written to ${writeSecretFile(config.dataDir, ADMIN_PASSWORD_FILE, password)} (mode 0600).`);
    if (!request.password) lines.push(`Log in to the console as ${user.email} with:\n  ${password}`);
    return lines.join('\n');
  } finally {
    await db.close();
  }
}

/** Standard input when it is a pipe or a file (a terminal gives none: the password is then generated). */
export async function readPiped(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return chunks.length ? Buffer.concat(chunks).toString('utf8') : undefined;
}
