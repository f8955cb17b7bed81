/**
 * A webhook call's request as the agent sees it (RAGFlow's webhook): the body parsed by its content type,
 * then query, headers and body each reduced to the fields the Begin's schema declares, cast to their
 * types. Begin outputs the three as `query`, `headers` and `body`.
 */
import { badRequest, ApiError } from '../errors.js';
import type { SectionSchema, WebhookConfig } from './webhook-config.js';

export interface RawWebhookRequest {
  method: string;
  /** The media type without parameters, lower-case; '' when none was sent. */
  contentType: string;
  query: Record<string, unknown>;
  /** Node's lower-cased header names. */
  headers: Record<string, string | string[] | undefined>;
  /** The body as read: bytes, or the fields of a multipart form. */
  body: Buffer | Record<string, unknown> | undefined;
}

export interface WebhookPayload {
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: Record<string, unknown>;
}

type Section = 'query' | 'headers' | 'body';

/** The body as an object, by content type; a configured content type must match (415). */
export function parseWebhookBody(req: RawWebhookRequest, config: WebhookConfig): Record<string, unknown> {
  if (config.contentType && req.contentType && req.contentType !== config.contentType) {
    throw new ApiError(415, `Invalid Content-Type: this webhook expects '${config.contentType}', got '${req.contentType}'`);
  }
  const body = req.body;
  if (body !== undefined && !Buffer.isBuffer(body)) return body; // multipart fields
  const text = body?.toString('utf8') ?? '';
  if (req.contentType === 'application/json') {
    if (!text.trim()) return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw badRequest('Malformed JSON: the request body is not valid JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw badRequest('The JSON body must be an object');
    return parsed as Record<string, unknown>;
  }
  if (req.contentType === 'application/x-www-form-urlencoded') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of new URLSearchParams(text)) if (!(k in out)) out[k] = v;
    return out;
  }
  // text/plain, octet-stream, none or another type: JSON when it reads as an object, else nothing (as RAGFlow).
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Query, headers and body reduced to the schema's fields; a missing required field or a wrong type is a 400 naming it. */
export function webhookPayload(req: RawWebhookRequest, config: WebhookConfig): WebhookPayload {
  const body = parseWebhookBody(req, config);
  const query = Object.fromEntries(Object.entries(req.query).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  const headers: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  return {
    query: extract(query, config.schema.query, 'query'),
    // Header names are case-insensitive: a schema's `X-Event` finds Node's `x-event`.
    headers: extract(headers, config.schema.headers, 'headers', true),
    body: extract(body, config.schema.body, 'body'),
  };
}

function extract(data: Record<string, unknown>, schema: SectionSchema, section: Section, caseless = false): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, { type }] of Object.entries(schema.properties)) {
    const key = caseless ? field.toLowerCase() : field;
    if (!(key in data)) {
      if (schema.required.includes(field)) throw badRequest(`${section} is missing the required field '${field}'`);
      out[field] = defaultFor(type);
      continue;
    }
    const value = cast(data[key], type, `${section}.${field}`);
    if (!hasType(value, type)) throw badRequest(`${section}.${field} must be ${type}, got ${describe(value)}`);
    out[field] = value;
  }
  return out;
}

/** RAGFlow's defaults for an optional field that was not sent. */
function defaultFor(type: string): unknown {
  if (type === 'file' || type.startsWith('array')) return [];
  if (type === 'object') return {};
  if (type === 'boolean') return false;
  if (type === 'number') return 0;
  if (type === 'string') return '';
  return null;
}

/** Text (a query parameter, a header, a form field) converted to the field's type, as RAGFlow does. */
function cast(value: unknown, type: string, name: string): unknown {
  if (typeof value !== 'string') return value;
  const v = value.trim();
  const refuse = (): never => {
    throw badRequest(`${name} must be ${type}: cannot read ${JSON.stringify(value)} as one`);
  };
  if (type === 'boolean') {
    if (['true', '1'].includes(v.toLowerCase())) return true;
    if (['false', '0'].includes(v.toLowerCase())) return false;
    return refuse();
  }
  if (type === 'number') {
    const n = Number(v);
    return v !== '' && Number.isFinite(n) ? n : refuse();
  }
  if (type === 'object' || type.startsWith('array')) {
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return refuse();
    }
  }
  return value;
}

function hasType(value: unknown, type: string): boolean {
  if (type === 'file') return Array.isArray(value);
  if (type === 'string') return typeof value === 'string';
  if (type === 'number') return typeof value === 'number' && Number.isFinite(value);
  if (type === 'boolean') return typeof value === 'boolean';
  if (type === 'object') return typeof value === 'object' && value !== null && !Array.isArray(value);
  if (type === 'null') return value === null;
  if (type.startsWith('array')) {
    if (!Array.isArray(value)) return false;
    const inner = /^array<(\w+)>$/.exec(type)?.[1];
    return !inner || value.every((item) => hasType(item, inner));
  }
  return true;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}
