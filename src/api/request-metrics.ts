import type { NextFunction, Request, Response } from 'express';
import { CLIENT_CLOSED, UNMATCHED_ROUTE, recordRequest } from '../observability/http-metrics.js';
import { servedPath, type RouteSpec } from './routes.js';

/**
 * Counts and times every answer by the route pattern it belongs to: answers of the route's handler,
 * 401/404/405, and answers given before routing (malformed JSON, admission control) alike. Register it
 * first, so its clock starts before anything else runs.
 */
export function requestMetrics(routes: RouteSpec[]) {
  const routeOf = routeLabeller(routes);
  return (req: Request, res: Response, next: NextFunction) => {
    const start = process.hrtime.bigint();
    let recorded = false;
    const record = (status: number) => {
      if (recorded) return;
      recorded = true;
      recordRequest({ route: routeOf(req), method: req.method, status, seconds: Number(process.hrtime.bigint() - start) / 1e9 });
    };
    res.once('finish', () => record(res.statusCode));
    // 'close' without 'finish': the client left before the answer was complete.
    res.once('close', () => record(CLIENT_CLOSED));
    next();
  };
}

/**
 * The route pattern of a request: the one Express dispatched it to, else (answered before routing)
 * the first pattern its path matches as Express would (case-insensitive, optional trailing slash),
 * else UNMATCHED_ROUTE.
 */
export function routeLabeller(routes: RouteSpec[]): (req: Request) => string {
  const patterns = [...new Set(routes.map(servedPath))].map((path) => ({ path, regex: patternRegex(path) }));
  return (req) => {
    const dispatched: unknown = req.route?.path;
    if (typeof dispatched === 'string') return dispatched;
    const path = req.originalUrl.split('?', 1)[0]!;
    return patterns.find((p) => p.regex.test(path))?.path ?? UNMATCHED_ROUTE;
  };
}

function patternRegex(path: string): RegExp {
  const segments = path.split('/').map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${segments.join('/')}/?$`, 'i');
}
