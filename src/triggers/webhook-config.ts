/**
 * The webhook settings of an agent's Begin component in `mode: "Webhook"` (RAGFlow's Begin webhook form, as
 * its editor writes it into the DSL), read into one checked shape. Anything that cannot be enforced as
 * written is refused here with a message naming the setting, never ignored.
 */
import { isIP } from 'node:net';
import { badRequest } from '../errors.js';

export const WEBHOOK_METHODS = ['POST', 'GET', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;
export const WEBHOOK_CONTENT_TYPES = ['application/json', 'multipart/form-data', 'application/x-www-form-urlencoded', 'text/plain', 'application/octet-stream'] as const;
export const WEBHOOK_AUTH_TYPES = ['none', 'token', 'basic', 'jwt'] as const;
export const JWT_ALGORITHMS = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'] as const;
const RATE_WINDOWS = { second: 1, minute: 60, hour: 3600, day: 86400 } as const;
/** RAGFlow's ceiling for `max_body_size`, and its default. */
export const MAX_WEBHOOK_BODY = 10 * 1024 * 1024;

/** One section (query, headers, body) of the request schema: the fields Begin outputs, by type. */
export interface SectionSchema {
  properties: Record<string, { type: string }>;
  required: string[];
}

export interface WebhookSecurity {
  authType: (typeof WEBHOOK_AUTH_TYPES)[number];
  allowAnonymous: boolean;
  token?: { header: string; value: string };
  basic?: { username: string; password: string };
  jwt?: { secret: string; algorithm: (typeof JWT_ALGORITHMS)[number]; audience?: string; issuer?: string; requiredClaims: string[] };
  ipWhitelist: string[];
  rateLimit: { limit: number; windowSeconds: number };
  maxBodyBytes: number;
}

export interface WebhookConfig {
  /** Upper-case; empty: every method. */
  methods: string[];
  /** The one content type accepted; undefined: any of WEBHOOK_CONTENT_TYPES (or none). */
  contentType?: string;
  security: WebhookSecurity;
  schema: { query: SectionSchema; headers: SectionSchema; body: SectionSchema };
  /** 'Immediately': answer at once with `response`; 'Streaming' (RAGFlow's name): answer with the run's result. */
  executionMode: 'Immediately' | 'Streaming';
  response: { status: number; bodyTemplate: string };
}

type Params = Record<string, unknown>;
const isRecord = (v: unknown): v is Params => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(setting: string, why: string): never {
  throw badRequest(`Webhook setting '${setting}' of the Begin component ${why}`);
}

/** The Begin params of a canvas when Begin is in webhook mode; undefined otherwise. */
export function webhookBegin(dsl: { components?: Record<string, { obj?: { component_name?: string; params?: unknown } }> }): Params | undefined {
  for (const cpn of Object.values(dsl.components ?? {})) {
    const obj = cpn?.obj;
    if (obj?.component_name?.toLowerCase() === 'begin' && isRecord(obj.params) && obj.params.mode === 'Webhook') return obj.params;
  }
  return undefined;
}

/** `"10MB"`, `"512KB"` → bytes (RAGFlow's format: an integer and KB or MB, at most 10 MB). */
export function parseBodySize(value: unknown): number {
  if (value === undefined || value === null || value === '') return MAX_WEBHOOK_BODY;
  const m = typeof value === 'string' ? /^\s*(\d+)\s*(kb|mb)\s*$/i.exec(value) : null;
  if (!m) fail('security.max_body_size', `must be a size such as "1MB" or "512KB", not ${JSON.stringify(value)}`);
  const bytes = Number(m[1]) * (m[2]!.toLowerCase() === 'kb' ? 1024 : 1024 * 1024);
  if (bytes > MAX_WEBHOOK_BODY) fail('security.max_body_size', `may be at most 10MB, not ${value}`);
  return bytes;
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function stringList(v: unknown, setting: string): string[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return v.trim() ? [v.trim()] : [];
  if (!Array.isArray(v)) fail(setting, 'must be a list');
  // The editor's own form rows are {value}; its DSL has the strings.
  return v.map((x) => (isRecord(x) ? text(x.value) : text(x)).trim()).filter(Boolean);
}

function section(v: unknown, name: string): SectionSchema {
  if (v === undefined || v === null) return { properties: {}, required: [] };
  if (!isRecord(v)) fail(`schema.${name}`, 'must be an object {properties, required}');
  const properties: SectionSchema['properties'] = {};
  const props = v.properties ?? {};
  if (!isRecord(props)) fail(`schema.${name}.properties`, 'must be an object');
  for (const [field, def] of Object.entries(props)) {
    const type = isRecord(def) ? def.type : undefined;
    if (type === 'file') fail(`schema.${name}.properties.${field}.type`, 'is file: Cairn\'s webhook takes no file uploads (send the content in a JSON or form field)');
    if (typeof type !== 'string' || !isFieldType(type)) fail(`schema.${name}.properties.${field}.type`, `must be string, number, boolean, object or array<…>, not ${JSON.stringify(type)}`);
    properties[field] = { type };
  }
  const required = stringList(v.required, `schema.${name}.required`);
  for (const r of required) if (!(r in properties)) fail(`schema.${name}.required`, `names '${r}', which is not among its properties`);
  return { properties, required };
}

const SCALARS = ['string', 'number', 'boolean', 'object', 'null'];
function isFieldType(t: string): boolean {
  if (SCALARS.includes(t) || t === 'array') return true;
  const m = /^array<(\w+)>$/.exec(t);
  return m !== null && ['string', 'number', 'boolean', 'object'].includes(m[1]!);
}

function security(v: unknown): WebhookSecurity {
  const s = isRecord(v) ? v : {};
  const authType = (s.auth_type ?? 'none') as WebhookSecurity['authType'];
  if (!(WEBHOOK_AUTH_TYPES as readonly string[]).includes(authType)) fail('security.auth_type', `must be one of ${WEBHOOK_AUTH_TYPES.join(', ')}, not ${JSON.stringify(s.auth_type)}`);
  const out: WebhookSecurity = {
    authType,
    allowAnonymous: s.allow_anonymous === true || s.allow_anonymous === 'true',
    ipWhitelist: ipRules(s.ip_whitelist),
    rateLimit: rateLimit(s.rate_limit),
    maxBodyBytes: parseBodySize(s.max_body_size),
  };
  if (authType === 'token') {
    const t = isRecord(s.token) ? s.token : {};
    if (!text(t.token_header) || !text(t.token_value)) fail('security.token', 'needs token_header and token_value');
    out.token = { header: text(t.token_header), value: text(t.token_value) };
  } else if (authType === 'basic') {
    const b = isRecord(s.basic_auth) ? s.basic_auth : {};
    if (!text(b.username) || !text(b.password)) fail('security.basic_auth', 'needs username and password');
    out.basic = { username: text(b.username), password: text(b.password) };
  } else if (authType === 'jwt') {
    const j = isRecord(s.jwt) ? s.jwt : {};
    if (!text(j.secret)) fail('security.jwt.secret', 'is required (the HMAC secret, or the PEM public key for RS/ES/PS algorithms)');
    const algorithm = (text(j.algorithm) || 'HS256').toUpperCase() as (typeof JWT_ALGORITHMS)[number];
    if (!(JWT_ALGORITHMS as readonly string[]).includes(algorithm)) fail('security.jwt.algorithm', `must be one of ${JWT_ALGORITHMS.join(', ')}, not ${JSON.stringify(j.algorithm)}`);
    const requiredClaims = stringList(j.required_claims, 'security.jwt.required_claims');
    const reserved = requiredClaims.filter((c) => ['exp', 'sub', 'aud', 'iss', 'nbf', 'iat'].includes(c));
    if (reserved.length) fail('security.jwt.required_claims', `may not name the reserved claim(s) ${reserved.join(', ')}`);
    out.jwt = { secret: text(j.secret), algorithm, audience: text(j.audience) || undefined, issuer: text(j.issuer) || undefined, requiredClaims };
  }
  return out;
}

/** IPs and CIDR ranges (`10.0.0.0/8`, `::1`). */
function ipRules(v: unknown): string[] {
  const rules = stringList(v, 'security.ip_whitelist');
  for (const rule of rules) {
    const [addr, bits, extra] = rule.split('/');
    const family = isIP(addr ?? '');
    const maxBits = family === 6 ? 128 : 32;
    const okBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits);
    if (!family || !okBits || extra !== undefined) fail('security.ip_whitelist', `has an entry that is no IP address or CIDR range: ${JSON.stringify(rule)}`);
  }
  return rules;
}

function rateLimit(v: unknown): WebhookSecurity['rateLimit'] {
  // RAGFlow's default when none is set: 60 calls a minute.
  if (v === undefined || v === null) return { limit: 60, windowSeconds: 60 };
  const r = isRecord(v) ? v : fail('security.rate_limit', 'must be an object {limit, per}');
  const limit = Number(r.limit ?? 60);
  if (!Number.isInteger(limit) || limit <= 0) fail('security.rate_limit.limit', `must be a whole number above 0, not ${JSON.stringify(r.limit)}`);
  const per = text(r.per) || 'minute';
  const windowSeconds = RATE_WINDOWS[per as keyof typeof RATE_WINDOWS];
  if (!windowSeconds) fail('security.rate_limit.per', `must be one of ${Object.keys(RATE_WINDOWS).join(', ')}, not ${JSON.stringify(r.per)}`);
  return { limit, windowSeconds };
}

/** Reads and checks the webhook settings of a Begin in webhook mode. */
export function webhookConfig(params: Params): WebhookConfig {
  const methods = stringList(params.methods, 'methods').map((m) => m.toUpperCase());
  const unknownMethod = methods.find((m) => !(WEBHOOK_METHODS as readonly string[]).includes(m));
  if (unknownMethod) fail('methods', `names '${unknownMethod}'; allowed: ${WEBHOOK_METHODS.join(', ')}`);
  const contentType = text(params.content_types).trim() || undefined;
  if (contentType && !(WEBHOOK_CONTENT_TYPES as readonly string[]).includes(contentType)) fail('content_types', `must be one of ${WEBHOOK_CONTENT_TYPES.join(', ')}, not ${JSON.stringify(params.content_types)}`);
  const schema = isRecord(params.schema) ? params.schema : {};
  const executionMode = (text(params.execution_mode) || 'Immediately') as WebhookConfig['executionMode'];
  if (executionMode !== 'Immediately' && executionMode !== 'Streaming') fail('execution_mode', `must be Immediately or Streaming (answer with the run's result), not ${JSON.stringify(params.execution_mode)}`);
  const response = isRecord(params.response) ? params.response : {};
  const status = Number(response.status ?? 200);
  if (!Number.isInteger(status) || status < 200 || status > 399) fail('response.status', `must be an HTTP status from 200 to 399, not ${JSON.stringify(response.status)}`);
  return {
    methods,
    contentType,
    security: security(params.security),
    schema: { query: section(schema.query, 'query'), headers: section(schema.headers, 'headers'), body: section(schema.body, 'body') },
    executionMode,
    response: { status, bodyTemplate: text(response.body_template) },
  };
}
