import type { NextFunction, Request, Response } from 'express';
import { badRequest } from '../errors.js';

/**
 * U+0000 is refused in every request, on every profile: PostgreSQL cannot store it in text, so on the
 * scale-out profile it would be a 500 where SQLite accepted it. The same 400 everywhere instead.
 */
export const NUL_IN_BODY = 'The request body contains a NUL character (\\u0000), which is not allowed in any field';
export const NUL_IN_URL = 'The request URL contains a NUL character (%00), which is not allowed in a path or query';

/** JSON.parse reviver for express.json: a key or string with U+0000 fails the parse with NUL_IN_BODY. */
export function refuseNulInJson(key: string, value: unknown): unknown {
  if (key.includes('\0') || (typeof value === 'string' && value.includes('\0'))) throw new Error(NUL_IN_BODY);
  return value;
}

/** Middleware: a URL with %00 anywhere (path or query) is a 400. */
export function refuseNulInUrl(req: Request, _res: Response, next: NextFunction): void {
  next(/%00/i.test(req.originalUrl) ? badRequest(NUL_IN_URL) : undefined);
}
