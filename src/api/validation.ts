import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ApiError, badRequest } from '../errors.js';

export type JsonSchema = Record<string, unknown>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Bodies are validated strictly (no type coercion); query strings are coerced from text. */
const bodyAjv = addFormats(new Ajv({ allErrors: false, strict: false, useDefaults: true }));
const queryAjv = addFormats(new Ajv({ allErrors: false, strict: false, useDefaults: true, coerceTypes: 'array' }));

const compiled = new WeakMap<JsonSchema, ValidateFunction>();

function compile(ajv: Ajv, schema: JsonSchema): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    compiled.set(schema, fn);
  }
  return fn;
}

/** Validates (and fills defaults into) a JSON body; throws a 400 naming the offending field. */
export function validateBody<T>(schema: JsonSchema, body: unknown, code = 400): T {
  const fn = compile(bodyAjv, schema);
  if (!fn(body)) throw new ApiError(400, describe(fn.errors ?? [], 'body'), code);
  return body as T;
}

const BOOLEAN_WORDS: Record<string, string> = { true: 'true', false: 'false', '1': 'true', '0': 'false', yes: 'true', no: 'false' };

/**
 * Validates a query-string object, leniently as RAGFlow reads query strings: booleans as
 * true/false/1/0/yes/no (any case), integers as numeric strings, `page`/`page_size` below 1 meaning
 * the default and above the cap clamped to it, and an empty value of a non-string field (e.g. `id=`)
 * meaning the filter is not given.
 */
export function validateQuery<T>(schema: JsonSchema, query: Record<string, unknown>): T {
  const copy: Record<string, unknown> = {};
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  for (const [key, raw] of Object.entries(query)) {
    const prop = props[key];
    let value = typeof raw === 'string' && prop && prop.type !== 'string' ? raw.trim() : raw;
    if (value === '' && prop && (key === 'id' || prop.type !== 'string')) continue;
    if (prop?.type === 'boolean' && typeof value === 'string') value = BOOLEAN_WORDS[value.toLowerCase()] ?? value;
    if (prop?.type === 'integer' && (key === 'page' || key === 'page_size') && (typeof value === 'string' || typeof value === 'number')) {
      const n = Number(value);
      if (Number.isInteger(n) && n < 1) continue;
      if (Number.isInteger(n) && typeof prop.maximum === 'number' && n > prop.maximum) value = prop.maximum;
    }
    copy[key] = value;
  }
  const fn = compile(queryAjv, schema);
  if (!fn(copy)) throw badRequest(describe(fn.errors ?? [], 'query'));
  return copy as T;
}

/** One readable sentence per error: "`name` must NOT have more than 128 characters". */
function describe(errors: ErrorObject[], where: string): string {
  const e = errors[0];
  if (!e) return `invalid ${where}`;
  const base = e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : '';
  switch (e.keyword) {
    case 'required':
      return `\`${join(base, e.params.missingProperty)}\` is required`;
    case 'additionalProperties':
      return `\`${join(base, e.params.additionalProperty)}\` is not an accepted field`;
    case 'enum':
      return `\`${base}\` must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'false schema':
      return `\`${base}\` cannot be changed`;
    case 'type':
      return base ? `\`${base}\` must be ${article(e.params.type)}` : `${where} must be ${article(e.params.type)}`;
    default:
      return base ? `\`${base}\` ${e.message}` : `${where} ${e.message}`;
  }
}

function join(base: string, key: string): string {
  return base ? `${base}.${key}` : key;
}

function article(type: string | string[]): string {
  const t = Array.isArray(type) ? type.join(' or ') : type;
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}
