import { bodyMessage, httpError, networkError, timeoutError } from './errors.js';
import { ModelError } from './types.js';

/** Timeouts for one provider call. Connection refused needs none: it fails at once. */
export interface Timeouts {
  /** Until the response headers (and, for non-streaming calls, the whole body) have arrived. */
  requestMs: number;
  /** Longest silence allowed between two chunks of a streamed body. */
  idleMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { requestMs: 120_000, idleMs: 120_000 };

/** An AbortController that aborts when the caller's signal does or when an (re-armable) timer fires. */
export class Deadline {
  readonly controller = new AbortController();
  fired = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly unlink: () => void;

  constructor(private readonly callerSignal?: AbortSignal) {
    const onAbort = () => this.controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) onAbort();
    callerSignal?.addEventListener('abort', onAbort, { once: true });
    this.unlink = () => callerSignal?.removeEventListener('abort', onAbort);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get callerAborted(): boolean {
    return this.callerSignal?.aborted ?? false;
  }

  arm(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.fired = true;
      this.controller.abort(new Error('timeout'));
    }, ms);
  }

  disarm(): void {
    clearTimeout(this.timer);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.unlink();
  }
}

export interface ProviderRequest {
  provider: string;
  /** Model name, for error messages. */
  model: string;
  url: string;
  method?: 'GET' | 'POST';
  body?: unknown;
  apiKey?: string;
  timeouts: Timeouts;
  signal?: AbortSignal;
  /** The fetch to call with (the outbound-address policy's, see services/outbound-urls.ts); default the global one. */
  fetch?: typeof fetch;
}

/** Turns whatever a failed call threw into a ModelError (or the caller's own abort reason). */
function failure(req: ProviderRequest, deadline: Deadline, err: unknown, what: string, ms: number): unknown {
  if (err instanceof ModelError) return err;
  if (deadline.callerAborted) return deadline.signal.reason ?? err;
  if (deadline.fired) return timeoutError(req.provider, req.url, what, ms);
  return networkError(req.provider, req.url, err);
}

async function open(req: ProviderRequest, deadline: Deadline): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json, application/x-ndjson, text/plain' };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  if (req.apiKey) headers.authorization = `Bearer ${req.apiKey}`;
  const response = await (req.fetch ?? fetch)(req.url, {
    method: req.method ?? (req.body === undefined ? 'GET' : 'POST'),
    headers,
    body: req.body === undefined ? undefined : JSON.stringify(req.body),
    signal: deadline.signal,
  });
  if (!response.ok) {
    const text = await response.text().catch(() => '');
    throw httpError(req.provider, response.status, bodyMessage(text), req.model);
  }
  return response;
}

/** A non-streaming call: the whole exchange must finish within `timeouts.requestMs`. */
export async function requestText(req: ProviderRequest): Promise<string> {
  const deadline = new Deadline(req.signal);
  deadline.arm(req.timeouts.requestMs);
  try {
    const response = await open(req, deadline);
    return await response.text();
  } catch (err) {
    throw failure(req, deadline, err, 'request', req.timeouts.requestMs);
  } finally {
    deadline.dispose();
  }
}

export async function requestJson<T>(req: ProviderRequest): Promise<T> {
  const text = await requestText(req);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ModelError(`${req.provider}: invalid JSON from ${req.url}`, req.provider, 500);
  }
}

/**
 * Re-yields `source`, aborting `deadline` when the source is silent for `idleMs`. Only the wait for the
 * provider is timed, not the time the consumer spends between pulls.
 */
export async function* guardIdle<T>(source: AsyncIterable<T>, deadline: Deadline, idleMs: number): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  for (;;) {
    deadline.arm(idleMs);
    const next = await it.next();
    deadline.disarm();
    if (next.done) return;
    yield next.value;
  }
}

/** A streaming call yielding the body line by line (NDJSON / SSE), with an idle timeout between chunks. */
export async function* streamLines(req: ProviderRequest): AsyncGenerator<string> {
  const deadline = new Deadline(req.signal);
  let stage = 'request';
  deadline.arm(req.timeouts.requestMs);
  try {
    const response = await open(req, deadline);
    if (!response.body) return;
    stage = 'stream (no data)';
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of guardIdle(response.body as unknown as AsyncIterable<Uint8Array>, deadline, req.timeouts.idleMs)) {
      pending += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl).replace(/\r$/, '');
        pending = pending.slice(nl + 1);
        if (line.trim()) yield line;
      }
    }
    pending += decoder.decode();
    if (pending.trim()) yield pending;
  } catch (err) {
    throw failure(req, deadline, err, stage, stage === 'request' ? req.timeouts.requestMs : req.timeouts.idleMs);
  } finally {
    deadline.dispose();
    // Releases the connection when the consumer stops early (a no-op once the body is complete).
    deadline.controller.abort();
  }
}

/** Joins a base URL and a path without doubling or dropping slashes. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
