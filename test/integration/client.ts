import { harness } from './harness.js';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A tiny HTTP client for tests: JSON in, JSON (or text) out, never throws on 4xx/5xx. */
export class Api {
  constructor(
    readonly url: string,
    readonly key?: string,
  ) {}

  async request<T = any>(method: string, path: string, options: { body?: unknown; query?: Record<string, unknown>; raw?: BodyInit; headers?: Record<string, string> } = {}): Promise<ApiResponse<T>> {
    const u = new URL('/api/v1' + path, this.url);
    for (const [k, v] of Object.entries(options.query ?? {})) {
      if (v === undefined) continue;
      for (const item of Array.isArray(v) ? v : [v]) u.searchParams.append(k, String(item));
    }
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (this.key) headers.Authorization = `Bearer ${this.key}`;
    let body: BodyInit | undefined = options.raw;
    if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const res = await fetch(u, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  get<T = any>(path: string, query?: Record<string, unknown>) {
    return this.request<T>('GET', path, { query });
  }
  post<T = any>(path: string, body?: unknown) {
    return this.request<T>('POST', path, { body });
  }
  put<T = any>(path: string, body?: unknown) {
    return this.request<T>('PUT', path, { body });
  }
  patch<T = any>(path: string, body?: unknown) {
    return this.request<T>('PATCH', path, { body });
  }
  delete<T = any>(path: string, body?: unknown) {
    return this.request<T>('DELETE', path, { body });
  }
}

let userSeq = 0;

/** Registers a fresh user with an API key: an isolated tenant for one test. */
export async function newUser(name = 'user'): Promise<{ api: Api; userId: string; email: string }> {
  const h = await harness();
  const email = `${name}-${process.pid}-${++userSeq}-${Date.now()}@example.com`;
  const anon = new Api(h.url);
  const reg = await anon.post('/users', { email, nickname: name, password: 'secret-pass' });
  if (reg.status !== 200) throw new Error(`register failed: ${JSON.stringify(reg.body)}`);
  const token = reg.headers.get('authorization')!;
  const key = await new Api(h.url, token).post('/system/tokens');
  return { api: new Api(h.url, key.body.data.token), userId: reg.body.data.id, email };
}

/** Polls `fn` until it returns a truthy value or the time runs out. */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 30_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
