import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import type { AuthService, Principal } from '../services/auth.js';
import { ApiError, unauthorized } from '../errors.js';
import { ModelError } from '../models/types.js';
import { sendError, sendOk } from './envelope.js';
import { Reply, type RouteSpec } from './routes.js';
import { validateBody, validateQuery } from './validation.js';

export const API_PREFIX = '/api/v1';

/** The Express app: JSON parsing, auth, one handler per RouteSpec, 404/405 and the error envelope. */
export function createHttpApp(routes: RouteSpec[], auth: AuthService, log: Logger, jsonLimit: number): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'extended');
  app.use(requestLog(log));
  app.use(express.json({ limit: jsonLimit, type: ['application/json', 'application/*+json'] }));

  for (const spec of routes) {
    app[spec.method](API_PREFIX + spec.path, ...(spec.middleware ?? []), async (req: Request, res: Response, next: NextFunction) => {
      try {
        const principal = spec.public ? (undefined as unknown as Principal) : await authenticate(auth, req);
        const query = spec.query ? validateQuery(spec.query, req.query as Record<string, unknown>) : req.query;
        const body = spec.body ? validateBody(spec.body, req.body ?? {}, spec.bodyErrorCode) : req.body;
        const result = await spec.handler({ principal, params: req.params as Record<string, string>, query, body, req, res });
        if (spec.raw) return;
        if (result instanceof Reply) sendOk(res, result.data, result.extra);
        else sendOk(res, result ?? null);
      } catch (err) {
        next(err);
      }
    });
  }

  // A known path with another method is 405; anything else below the prefix is 404.
  const allowed = new Map<string, string[]>();
  for (const spec of routes) allowed.set(spec.path, [...(allowed.get(spec.path) ?? []), spec.method.toUpperCase()]);
  for (const [path, methods] of allowed) {
    app.all(API_PREFIX + path, (req, res) => {
      res.setHeader('Allow', methods.join(', '));
      sendError(res, 405, 405, `Method ${req.method} is not allowed on ${req.path}; allowed: ${methods.join(', ')}`);
    });
  }
  app.use((req, res) => sendError(res, 404, 404, `Not Found: ${req.path}`));
  app.use(errorHandler(log));
  return app;
}

async function authenticate(auth: AuthService, req: Request): Promise<Principal> {
  const principal = await auth.resolve(req.headers.authorization);
  if (!principal) throw req.headers.authorization ? unauthorized('Unauthorized: invalid API key or token') : unauthorized('Unauthorized: missing Authorization header (expected "Bearer <API key>")');
  return principal;
}

function errorHandler(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) {
      log.error({ err, path: req.path }, 'error after response started');
      res.end();
      return;
    }
    if (err instanceof ApiError) return sendError(res, err.status, err.code, err.message, err.data);
    if (err instanceof ModelError) return sendError(res, err.status, err.status, err.message);
    const e = err as { type?: string; status?: number; message?: string; limit?: number };
    if (e.type === 'entity.parse.failed') return sendError(res, 400, 400, 'Malformed JSON: the request body is not valid JSON');
    if (e.type === 'entity.too.large') return sendError(res, 413, 413, `Request body too large: the limit is ${e.limit} bytes`);
    if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') return sendError(res, 415, 415, e.message ?? 'Unsupported encoding');
    if (e.status && e.status >= 400 && e.status < 500) return sendError(res, e.status, e.status, e.message ?? 'Bad Request');
    log.error({ err, path: req.path, method: req.method }, 'internal error');
    sendError(res, 500, 500, 'Internal Server Error: the failure was logged');
  };
}

/** One structured log line per request with its timing (and stage timings a handler put in res.locals.timings). */
function requestLog(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      log.info({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10, timings: res.locals.timings }, 'request');
    });
    next();
  };
}
