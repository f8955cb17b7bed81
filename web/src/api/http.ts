/**
 * The console's only way to the server: the public API under /api/v1, authenticated with the JWT
 * from log-in (sent as a Bearer token, like an API key). Every failure becomes an ApiError carrying
 * the server's message, so pages can show it as is.
 */
export const API_PREFIX = '/api/v1';
const TOKEN_KEY = 'cairn.console.token';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** The success envelope: `data` plus any extra keys a route adds (total, errors, ...). */
export interface Envelope<T> {
  code: number;
  data: T;
  message?: unknown;
  [extra: string]: unknown;
}

type Query = Record<string, string | number | boolean | string[] | undefined | null>;

const unauthorizedListeners = new Set<(err: ApiError) => void>();

export const session = {
  token(): string | null {
    return localStorage.getItem(TOKEN_KEY);
  },
  set(token: string) {
    localStorage.setItem(TOKEN_KEY, token);
  },
  clear() {
    localStorage.removeItem(TOKEN_KEY);
  },
  /** Called when a request with a token is answered 401 (expired or revoked). */
  onUnauthorized(fn: (err: ApiError) => void) {
    unauthorizedListeners.add(fn);
    return () => void unauthorizedListeners.delete(fn);
  },
};

export function apiUrl(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null || v === '') continue;
    for (const item of Array.isArray(v) ? v : [v]) params.append(k, String(item));
  }
  const qs = params.toString();
  return API_PREFIX + path + (qs ? `?${qs}` : '');
}

export function authHeaders(): Record<string, string> {
  const token = session.token();
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** Turns a non-envelope or error answer into an ApiError with the most useful message. */
export function errorFrom(status: number, text: string): ApiError {
  try {
    const body = JSON.parse(text);
    const message = typeof body?.message === 'string' && body.message ? body.message : `HTTP ${status}`;
    return new ApiError(status, typeof body?.code === 'number' ? body.code : status, message, body?.data);
  } catch {
    return new ApiError(status, status, text.trim().slice(0, 500) || `HTTP ${status}`);
  }
}

export function reportUnauthorized(err: ApiError) {
  if (err.status === 401 && session.token()) for (const fn of unauthorizedListeners) fn(err);
}

export async function request<T>(method: string, path: string, options: { body?: unknown; query?: Query; signal?: AbortSignal } = {}): Promise<Envelope<T>> {
  const headers: Record<string, string> = authHeaders();
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  let res: Response;
  try {
    res = await fetch(apiUrl(path, options.query), { method, headers, body, signal: options.signal });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 0, `Cannot reach the Cairn server: ${(err as Error).message}`);
  }
  const text = await res.text();
  let parsed: Envelope<T> | undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!res.ok || !parsed || parsed.code !== 0) {
    const err = errorFrom(res.status, text);
    reportUnauthorized(err);
    throw err;
  }
  return parsed;
}

export const api = {
  get: <T>(path: string, query?: Query, signal?: AbortSignal) => request<T>('GET', path, { query, signal }).then((e) => e.data),
  post: <T>(path: string, body?: unknown, query?: Query) => request<T>('POST', path, { body, query }).then((e) => e.data),
  put: <T>(path: string, body?: unknown) => request<T>('PUT', path, { body }).then((e) => e.data),
  patch: <T>(path: string, body?: unknown) => request<T>('PATCH', path, { body }).then((e) => e.data),
  delete: <T>(path: string, body?: unknown) => request<T>('DELETE', path, { body }).then((e) => e.data),
};
