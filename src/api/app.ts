import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import type { AuthService, Principal } from '../services/auth.js';
import { ApiError, ServiceUnavailable, unauthorized } from '../errors.js';
import { ModelError } from '../models/types.js';
import { MAX_ERROR_MESSAGE, safeJson, sendError, sendOk } from './envelope.js';
import { clip } from '../text/summary.js';
import { Reply, servedPath, type RouteSpec } from './routes.js';
import { requestMetrics } from './request-metrics.js';
import { validateBody, validateQuery } from './validation.js';
import { serveConsole } from './console.js';
import { NUL_IN_BODY, refuseNulInJson, refuseNulInUrl } from './nul-guard.js';


/** The Express app: JSON parsing, auth, one handler per RouteSpec, 404/405 and the error envelope. */
/** `consoleDir`: the built web console, served at `/` (see console.ts). */
export function createHttpApp(routes: RouteSpec[], auth: AuthService, log: Logger, jsonLimit: number, consoleDir?: string): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'extended');
  app.use(requestMetrics(routes));
  app.use(requestLog(log));
  const parseJson = express.json({ limit: jsonLimit, type: ['application/json', 'application/*+json'], reviver: refuseNulInJson });

  for (const spec of routes) {
    // Authentication comes first: a stranger's request is refused with 401 before its body is read,
    // so a malformed, oversized or multipart body never turns that into a 400/413.
    const stages = [authenticateFor(spec, auth), refuseNulInUrl, ...(spec.middleware ?? []), parseJson];
    const ownErrors = spec.errors?.render ? [errorHandler(log, spec.errors.render)] : [];
    app[spec.method](servedPath(spec), ...stages, async (req: Request, res: Response, next: NextFunction) => {
      try {
        const principal = res.locals.principal as Principal;
        const query = spec.query ? validateQuery(spec.query, req.query as Record<string, unknown>) : req.query;
        const body = spec.body ? validateBody(spec.body, req.body ?? {}, spec.bodyErrorCode) : req.body;
        const result = await spec.handler({ principal, params: req.params as Record<string, string>, query, body, req, res });
        if (spec.raw) return;
        if (result instanceof Reply) sendOk(res, result.data, result.extra);
        else sendOk(res, result ?? null);
      } catch (err) {
        next(err);
      }
    }, ...ownErrors);
  }

  // A known path with another method is 405; anything else below the prefix is 404.
  const allowed = new Map<string, string[]>();
  for (const spec of routes) allowed.set(servedPath(spec), [...(allowed.get(servedPath(spec)) ?? []), spec.method.toUpperCase()]);
  for (const [path, methods] of allowed) {
    app.all(path, (req, res) => {
      res.setHeader('Allow', methods.join(', '));
      sendError(res, 405, 405, `Method ${req.method} is not allowed on ${req.path}; allowed: ${methods.join(', ')}`);
    });
  }
  if (consoleDir) serveConsole(app, consoleDir);
  // RAGFlow's unknown-route body: its clients read `error` beside the envelope's code and message.
  app.use((req, res) => void res.status(404).type('application/json').send(safeJson({ code: 404, message: `Not Found: ${clip(req.path, MAX_ERROR_MESSAGE)}`, data: null, error: 'Not Found' })));
  app.use(errorHandler(log));
  return app;
}

/** Puts the caller's principal in res.locals.principal, or fails with 401; public routes pass through. */
function authenticateFor(spec: RouteSpec, auth: AuthService) {
  return async (req: Request, res: Response, next: NextFunction) => {
    if (spec.public) return next();
    try {
      const principal = (await auth.resolve(req.headers.authorization)) ?? (spec.beta ? await auth.resolveBeta(req.headers.authorization) : undefined);
      if (!principal) throw req.headers.authorization ? unauthorized('Unauthorized: invalid API key or token') : unauthorized('Unauthorized: missing Authorization header (expected "Bearer <API key>")');
      res.locals.principal = principal;
      next();
    } catch (err) {
      next(err);
    }
  };
}

interface Failure {
  status: number;
  code: number;
  message: string;
  data?: unknown;
}

/** What the caller is told about an error it can act on; undefined for a failure of ours (a 500). */
function failureOf(err: unknown): Failure | undefined {
  if (err instanceof ApiError) return { status: err.status, code: err.code, message: err.message, data: err.data };
  if (err instanceof ModelError) return { status: err.status, code: err.status, message: err.message };
  const e = err as { type?: string; status?: number; message?: string; limit?: number };
  if (e.type === 'entity.parse.failed') return { status: 400, code: 400, message: e.message === NUL_IN_BODY ? NUL_IN_BODY : 'Malformed JSON: the request body is not valid JSON' };
  if (e.type === 'entity.too.large') return { status: 413, code: 413, message: `Request body too large: the limit is ${e.limit} bytes` };
  if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') return { status: 415, code: 415, message: e.message ?? 'Unsupported encoding' };
  if (e.status && e.status >= 400 && e.status < 500) return { status: e.status, code: e.status, message: e.message ?? 'Bad Request' };
  return undefined;
}

/** Errors as the envelope, or in the route's own shape when `render` is given (OpenAI-compatible routes). */
function errorHandler(log: Logger, render?: (status: number, message: string) => unknown) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) {
      log.error({ err, path: req.path }, 'error after response started');
      res.end();
      return;
    }
    let failure = failureOf(err);
    if (!failure) {
      log.error({ err, path: req.path, method: req.method }, 'internal error');
      failure = { status: 500, code: 500, message: 'Internal Server Error: the failure was logged' };
    }
    if (err instanceof ServiceUnavailable) res.setHeader('Retry-After', String(err.retryAfterSeconds));
    if (!render) return sendError(res, failure.status, failure.code, failure.message, failure.data);
    res.status(failure.status).type('application/json').send(safeJson(render(failure.status, clip(failure.message, MAX_ERROR_MESSAGE))));
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
