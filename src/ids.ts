import { randomBytes, randomUUID } from 'node:crypto';

/** 32 lowercase hex characters, the id format of every resource. */
export function newId(): string {
  return randomUUID().replaceAll('-', '');
}

export function isId(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{32}$/.test(value);
}

/** URL-safe random token of `bytes` bytes. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
