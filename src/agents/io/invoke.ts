import http, { type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { parse as parseHtml } from 'node-html-parser';
import type { Outputs } from '../dsl.js';
import { checkUrl, pinnedLookup, SsrfError, type ResolvedAddress, type UrlPolicy } from './ssrf.js';

/** RAGFlow's Invoke params (agent/component/invoke.py InvokeParam), references already resolved by the caller. */
export interface InvokeParams {
  url?: string;
  /** get | post | put | delete | patch | head (any case); default get. */
  method?: string;
  /** A JSON object, or its text (RAGFlow stores the text). */
  headers?: string | Record<string, unknown> | null;
  /** `{key, value}` pairs: the query string of a GET / HEAD, else the body. RAGFlow's `ref` is the caller's to resolve into `value`. */
  variables?: { key?: string; value?: unknown; ref?: string }[] | null;
  /** Body encoding: json (default) or formdata (application/x-www-form-urlencoded, as RAGFlow's requests `data=`). */
  datatype?: string;
  /** Seconds; default 60. */
  timeout?: number | string;
  /** Reduce an HTML answer to its text. */
  clean_html?: boolean;
  proxy?: string | null;
}

export interface InvokeOptions extends Omit<UrlPolicy, 'allowPrivate'> {
  /** CAIRN_ALLOW_PRIVATE_URLS (config `allowPrivateUrls`). */
  allowPrivate: boolean;
  /** Largest answer read, in bytes (default 10 MB). */
  maxBytes?: number;
  /** Redirects followed, each checked like the first URL (default 5). */
  maxRedirects?: number;
  /**
   * Sent as the `Idempotency-Key` header (unless the params set one): the same for every attempt of this
   * one request (a worker that died mid-request, a retry), so a service that honours the header acts once.
   */
  idempotencyKey?: string;
}

export class InvokeError extends Error {
  override name = 'InvokeError';
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD']);
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;

/**
 * Runs an Invoke component: one HTTP request (no retries: `max_retries` is the caller's), guarded
 * against requests to non-public addresses (see ssrf.ts), with the answer as output `result` (text;
 * HTML reduced to its text with `clean_html`). Any HTTP status is an answer, as in RAGFlow; a refused
 * URL, a network error or the timeout reject with an InvokeError whose message names the cause.
 */
export async function runInvoke(params: InvokeParams, signal: AbortSignal, options: InvokeOptions): Promise<Outputs> {
  const method = String(params.method || 'get').toUpperCase();
  if (!METHODS.has(method)) throw new InvokeError(`Invoke: unsupported method '${params.method}' (use get, post, put, delete, patch or head)`);
  const datatype = String(params.datatype || 'json').toLowerCase();
  if (datatype !== 'json' && datatype !== 'formdata') throw new InvokeError(`Invoke: unsupported datatype '${params.datatype}' (use json or formdata)`);
  const proxy = String(params.proxy ?? '').trim();
  if (proxy.replace(/https?:?\/?\/?/g, '')) throw new InvokeError('Invoke: the proxy param is not supported by Cairn; remove it to send the request directly');
  const timeoutSec = params.timeout === undefined || params.timeout === null || params.timeout === '' ? 60 : Number(params.timeout);
  if (!Number.isFinite(timeoutSec) || timeoutSec <= 0) throw new InvokeError(`Invoke: timeout must be a number of seconds > 0, not '${params.timeout}'`);

  let url = parseUrl(params.url);
  const headers = headersOf(params.headers);
  const args = argsOf(params.variables, datatype === 'json' && method !== 'GET' && method !== 'HEAD');
  let body: Buffer | undefined;
  if (method === 'GET' || method === 'HEAD') {
    for (const [k, v] of queryPairs(args)) url.searchParams.append(k, v);
  } else if (method !== 'DELETE' || Object.keys(args).length) {
    const json = datatype === 'json';
    body = Buffer.from(json ? JSON.stringify(args) : new URLSearchParams(queryPairs(args)).toString());
    if (!hasHeader(headers, 'content-type')) headers['Content-Type'] = json ? 'application/json' : 'application/x-www-form-urlencoded';
  }
  if (!hasHeader(headers, 'user-agent')) headers['User-Agent'] = 'Cairn-Invoke/1.0';
  if (options.idempotencyKey && !hasHeader(headers, 'idempotency-key')) headers['Idempotency-Key'] = options.idempotencyKey;
  if (!hasHeader(headers, 'accept')) headers['Accept'] = '*/*';

  const timeout = AbortSignal.timeout(timeoutSec * 1000);
  const both = AbortSignal.any([signal, timeout]);
  const policy: UrlPolicy = { allowPrivate: options.allowPrivate, allowList: options.allowList, resolve: options.resolve };
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  let currentMethod = method;
  try {
    for (let hop = 0; ; hop++) {
      const pinned = await abortable(checkUrl(url, policy), both).catch((err: unknown) => {
        throw err instanceof SsrfError ? new InvokeError(err.message) : err;
      });
      both.throwIfAborted();
      const res = await send(url, currentMethod, headers, body, pinned, both, maxBytes);
      const location = res.headers.location;
      if (res.status >= 300 && res.status < 400 && location && res.status !== 304) {
        if (hop >= (options.maxRedirects ?? 5)) throw new InvokeError(`Invoke: too many redirects (more than ${options.maxRedirects ?? 5}) from ${params.url}`);
        const next = new URL(location, url);
        if (next.origin !== url.origin) for (const h of Object.keys(headers)) if (/^(authorization|cookie|proxy-authorization)$/i.test(h)) delete headers[h];
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && currentMethod === 'POST')) {
          if (currentMethod !== 'HEAD') currentMethod = 'GET';
          body = undefined;
          for (const h of Object.keys(headers)) if (/^content-type$/i.test(h)) delete headers[h];
        }
        url = next;
        continue;
      }
      const text = currentMethod === 'HEAD' ? '' : decode(res.body, res.headers, maxBytes, url);
      return { result: params.clean_html ? cleanHtml(text) : text };
    }
  } catch (err) {
    if (signal.aborted) throw signal.reason ?? err;
    if (timeout.aborted) throw new InvokeError(`Invoke: no answer from ${url.origin} within ${timeoutSec} s`);
    if (err instanceof InvokeError) throw err;
    const code = (err as { code?: string }).code;
    throw new InvokeError(`Invoke: request to ${url.origin} failed: ${code ? `${code} ` : ''}${(err as Error).message ?? String(err)}`.trim());
  }
}

/** Name resolution cannot be cancelled: stop waiting for it when the call is aborted. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      (e) => (signal.removeEventListener('abort', onAbort), reject(e)),
    );
  });
}

function parseUrl(raw: unknown): URL {
  let text = String(raw ?? '').trim();
  if (!text) throw new InvokeError('Invoke: the url param is empty');
  if (!/^https?:\/\//i.test(text)) {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) throw new InvokeError(`Invoke: only http and https URLs are allowed: ${text}`);
    text = `http://${text}`;
  }
  try {
    return new URL(text);
  } catch {
    throw new InvokeError(`Invoke: not a valid URL: ${text}`);
  }
}

function headersOf(raw: InvokeParams['headers']): Record<string, string> {
  let value: unknown = raw ?? {};
  if (typeof value === 'string') {
    if (!value.trim()) return {};
    try {
      value = JSON.parse(value);
    } catch {
      throw new InvokeError('Invoke: headers must be a JSON object (e.g. {"Authorization": "Bearer ..."})');
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new InvokeError('Invoke: headers must be a JSON object (e.g. {"Authorization": "Bearer ..."})');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null || v === undefined) continue;
    const text = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
    try {
      http.validateHeaderName(k);
      http.validateHeaderValue(k, text);
    } catch {
      throw new InvokeError(`Invoke: invalid header '${k}'`);
    }
    out[k] = text;
  }
  return out;
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((k) => k.toLowerCase() === name);
}

/**
 * The request's arguments. For a JSON body a string that is valid JSON is sent as that JSON value
 * (RAGFlow's `_coerce_json_arg_if_possible`), so `{"ids": "[1, 2]"}` sends a list.
 */
function argsOf(variables: InvokeParams['variables'], coerceJson: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const v of variables ?? []) {
    if (!v || typeof v !== 'object' || typeof v.key !== 'string' || !v.key) continue;
    let value = v.value ?? '';
    if (coerceJson && typeof value === 'string') {
      try {
        value = JSON.parse(value);
      } catch {
        /* not JSON: sent as the string */
      }
    }
    out[v.key] = value;
  }
  return out;
}

/** Query / form pairs: a list repeats its key, null is left out, an object is sent as JSON text. */
function queryPairs(args: Record<string, unknown>): [string, string][] {
  const pairs: [string, string][] = [];
  const text = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v));
  for (const [k, v] of Object.entries(args)) {
    if (v === null || v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) item !== null && item !== undefined && pairs.push([k, text(item)]);
    else pairs.push([k, text(v)]);
  }
  return pairs;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function send(url: URL, method: string, headers: Record<string, string>, body: Buffer | undefined, pinned: ResolvedAddress, signal: AbortSignal, maxBytes: number): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const outgoing: OutgoingHttpHeaders = { ...headers };
    if (body) outgoing['Content-Length'] = body.length;
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method,
      headers: outgoing,
      // Connect to the address that was checked, never to a new answer of the resolver.
      lookup: pinnedLookup(pinned),
      agent: false,
      signal,
    });
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          res.destroy();
          request.destroy();
          reject(new InvokeError(`Invoke: the answer from ${url.origin} is larger than ${Math.round(maxBytes / 1048576)} MB`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

function decode(body: Buffer, headers: IncomingHttpHeaders, maxBytes: number, url: URL): string {
  const encoding = String(headers['content-encoding'] ?? '').trim().toLowerCase();
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') body = gunzipSync(body, { maxOutputLength: maxBytes });
    else if (encoding === 'deflate') body = inflateSync(body, { maxOutputLength: maxBytes });
    else if (encoding === 'br') body = brotliDecompressSync(body, { maxOutputLength: maxBytes });
  } catch (err) {
    throw new InvokeError(`Invoke: cannot decode the answer from ${url.origin} (${encoding}): ${(err as Error).message}`);
  }
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(String(headers['content-type'] ?? ''))?.[1];
  try {
    return new TextDecoder(charset || 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/** The text of an HTML page: scripts, styles and markup removed, one line per block. */
export function cleanHtml(html: string): string {
  const root = parseHtml(html, { comment: false });
  for (const node of root.querySelectorAll('script, style, noscript, template, svg')) node.remove();
  return root.structuredText
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
}
