import { refusalOf } from '../agents/io/ssrf.js';
import { ModelError } from './types.js';

/*
 * ModelError.status is the HTTP status the Cairn API should answer with: a problem with the model
 * configuration (wrong key, unknown or unpulled model, bad request) is the caller's to fix -> 400;
 * an unreachable or failing provider is a server-side failure -> 500.
 */

const NETWORK_CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the server',
};

/** Finds a Node/undici error code anywhere in an error's `cause` chain (fetch wraps it in "fetch failed"). */
function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const rec = e as { code?: unknown; errors?: unknown[]; cause?: unknown };
    if (typeof rec.code === 'string' && rec.code in NETWORK_CAUSES) return rec.code;
    // AggregateError from happy-eyeballs connects (IPv4 + IPv6 both refused).
    if (Array.isArray(rec.errors)) {
      const inner = rec.errors.map(errorCode).find(Boolean);
      if (inner) return inner;
    }
    e = rec.cause;
  }
  return undefined;
}

/** Converts a failure to reach a provider into a ModelError naming the provider, the URL and the cause. */
export function networkError(provider: string, url: string, err: unknown): ModelError {
  if (err instanceof ModelError) return err;
  // The outbound-address policy refused the address the name resolved to when connecting: the caller's to fix.
  const refusal = refusalOf(err);
  if (refusal) return new ModelError(refusal.message, provider, 400);
  const code = errorCode(err);
  const cause = code ? NETWORK_CAUSES[code]! : ((err as Error)?.message ?? String(err));
  return new ModelError(`${provider}: ${cause} at ${url}`, provider, 500);
}

export function timeoutError(provider: string, url: string, what: string, ms: number): ModelError {
  return new ModelError(`${provider}: ${what} timed out after ${ms} ms at ${url}`, provider, 500);
}

/** Pulls a human-readable message out of the usual error bodies (OpenAI, Ollama, FastAPI/Xinference). */
export function bodyMessage(body: unknown): string | undefined {
  if (typeof body === 'string') {
    const text = body.trim();
    if (!text) return undefined;
    try {
      return bodyMessage(JSON.parse(text)) ?? text.slice(0, 300);
    } catch {
      return text.slice(0, 300);
    }
  }
  if (!body || typeof body !== 'object') return undefined;
  const rec = body as Record<string, unknown>;
  for (const key of ['error', 'detail', 'message']) {
    const v = rec[key];
    if (typeof v === 'string' && v) return v;
    if (v && typeof v === 'object') {
      const inner = bodyMessage(v);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** A ModelError caused by an HTTP error status from the provider. */
export class ProviderHttpError extends ModelError {
  constructor(message: string, provider: string, status: number, readonly upstreamStatus: number) {
    super(message, provider, status);
  }
}

/** Maps a provider's HTTP error status to a ModelError with a message a user can act on. */
export function httpError(provider: string, upstreamStatus: number, detail: string | undefined, model: string): ModelError {
  const [message, status] = describeHttpError(provider, upstreamStatus, detail, model);
  return new ProviderHttpError(message, provider, status, upstreamStatus);
}

/** [message, status for the Cairn API]. */
function describeHttpError(provider: string, status: number, detail: string | undefined, model: string): [string, number] {
  const suffix = detail ? `: ${detail}` : '';
  const what = model ? `model '${model}' or its endpoint was` : 'endpoint';
  switch (status) {
    case 401:
      return [`${provider}: authentication failed (HTTP 401), check the API key${suffix}`, 400];
    case 403:
      return [`${provider}: access denied (HTTP 403)${suffix}`, 400];
    case 404:
      return [`${provider}: ${what} not found (HTTP 404)${suffix}`, 400];
    case 429:
      return [`${provider}: rate limited (HTTP 429)${suffix}`, 500];
    default:
      return status >= 500
        ? [`${provider}: server error (HTTP ${status})${suffix}`, 500]
        : [`${provider}: request rejected (HTTP ${status})${suffix}`, 400];
  }
}
