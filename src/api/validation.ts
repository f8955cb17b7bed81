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

/** Validates a query-string object, coercing "1"/"true"/"True" into numbers and booleans. */
export function validateQuery<T>(schema: JsonSchema, query: Record<string, unknown>): T {
  const copy: Record<string, unknown> = {};
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  for (const [key, value] of Object.entries(query)) {
    const type = props[key]?.type;
    copy[key] = type === 'boolean' && typeof value === 'string' ? value.toLowerCase() : value;
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
