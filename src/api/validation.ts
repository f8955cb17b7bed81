import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ApiError, badRequest } from '../errors.js';
import { summarize } from '../text/summary.js';
import { PAGE_SIZE_CAP } from './schemas.js';

export type JsonSchema = Record<string, unknown>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Bodies are validated strictly (no type coercion); query strings are coerced from text. Every error
 * is collected (allErrors) so a message can name the first few fields at fault and count the rest;
 * `verbose` gives each error its schema, for "must be an integer between A and B".
 */
const options = { allErrors: true, verbose: true, strict: false, useDefaults: true } as const;
const bodyAjv = addFormats(new Ajv(options));
const queryAjv = addFormats(new Ajv({ ...options, coerceTypes: 'array' }));

/** How many fields at fault a message names before it only counts the rest. */
const NAMED_ERRORS = 3;

const compiled = new WeakMap<JsonSchema, ValidateFunction>();

function compile(ajv: Ajv, schema: JsonSchema): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    compiled.set(schema, fn);
  }
  return fn;
}

/** Validates (and fills defaults into) a JSON body; throws a 400 naming the offending fields. */
export function validateBody<T>(schema: JsonSchema, body: unknown, code = 400): T {
  const fn = compile(bodyAjv, schema);
  if (!fn(body)) throw new ApiError(400, describe(fn.errors ?? [], 'body'), code);
  return body as T;
}

const BOOLEAN_WORDS: Record<string, string> = { true: 'true', false: 'false', '1': 'true', '0': 'false', yes: 'true', no: 'false' };

/**
 * Validates a query-string object, leniently as RAGFlow reads query strings: booleans as
 * true/false/1/0/yes/no (any case), integers as numeric strings, `page`/`page_size` 0 meaning the
 * default and a page_size above its cap (the schema's PAGE_SIZE_CAP) read as the cap, and an empty
 * value of a non-string field (e.g. `id=`) meaning the filter is not given. Values outside a field's
 * range (page=1e30, a negative page) are refused: the range is what keeps row offsets safe.
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
      if (n === 0) continue;
      const cap = prop[PAGE_SIZE_CAP];
      if (Number.isInteger(n) && typeof cap === 'number' && n > cap && n <= ((prop.maximum as number | undefined) ?? Infinity)) value = cap;
    }
    copy[key] = value;
  }
  const fn = compile(queryAjv, schema);
  if (!fn(copy)) throw badRequest(describe(fn.errors ?? [], 'query'));
  return copy as T;
}

/**
 * One readable sentence per field at fault ("`name` must NOT have more than 128 characters"), the
 * first NAMED_ERRORS of them, then how many more: an answer stays short whatever the request held.
 */
function describe(errors: ErrorObject[], where: string): string {
  const byField = new Map<string, string>();
  for (const e of errors.filter(isFirstAlternative)) {
    const field = fieldOf(e);
    if (!byField.has(field)) byField.set(field, sentence(e, where));
  }
  return byField.size ? summarize([...byField.values()], '; ', NAMED_ERRORS) : `invalid ${where}`;
}

/**
 * A value that matches no alternative of an anyOf/oneOf fails every branch: its errors are told as the
 * first branch tells them (as a single-error validation would), not once per branch.
 */
function isFirstAlternative(e: ErrorObject): boolean {
  return e.keyword !== 'anyOf' && e.keyword !== 'oneOf' && !/\/(anyOf|oneOf)\/[1-9]\d*\//.test(e.schemaPath);
}

/** The field an error is about: its path, or the missing/unknown property it names. */
function fieldOf(e: ErrorObject): string {
  const base = pathOf(e);
  if (e.keyword === 'required') return join(base, e.params.missingProperty);
  if (e.keyword === 'additionalProperties') return join(base, e.params.additionalProperty);
  return base;
}

function pathOf(e: ErrorObject): string {
  return e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : '';
}

function sentence(e: ErrorObject, where: string): string {
  const base = pathOf(e);
  switch (e.keyword) {
    case 'required':
      return `\`${join(base, e.params.missingProperty)}\` is required`;
    case 'additionalProperties':
      return `\`${join(base, e.params.additionalProperty)}\` is not an accepted field`;
    case 'enum':
      return `\`${base}\` must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'false schema':
      return `\`${base}\` cannot be changed`;
  }
  const range = integerRange(e);
  if (range && base) return `\`${base}\` must be ${range}`;
  if (e.keyword === 'type') return base ? `\`${base}\` must be ${article(e.params.type)}` : `${where} must be ${article(e.params.type)}`;
  return base ? `\`${base}\` ${e.message}` : `${where} ${e.message}`;
}

/** "an integer between 1 and 100000" for a type or range error of an integer field with both bounds. */
function integerRange(e: ErrorObject): string | undefined {
  if (!['type', 'minimum', 'maximum'].includes(e.keyword)) return undefined;
  const schema = e.parentSchema as { type?: unknown; minimum?: unknown; maximum?: unknown } | undefined;
  const types = Array.isArray(schema?.type) ? schema.type : [schema?.type];
  if (!types.includes('integer') || typeof schema?.minimum !== 'number' || typeof schema.maximum !== 'number') return undefined;
  return `an integer between ${schema.minimum} and ${schema.maximum}`;
}

function join(base: string, key: string): string {
  return base ? `${base}.${key}` : key;
}

function article(type: string | string[]): string {
  const t = Array.isArray(type) ? type.join(' or ') : type;
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}
