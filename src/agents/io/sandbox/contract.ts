/**
 * RAGFlow's CodeExec output contract (agent/tools/code_exec.py): the value `main` returned becomes the
 * one business output (default `result`), checked against its declared type; `content` is its text,
 * `raw_result` the value itself, `actual_type` its inferred type.
 */

/** Output names that are not the script's result (RAGFlow's SYSTEM_OUTPUT_KEYS, plus Cairn's `stdout`). */
export const SYSTEM_OUTPUT_KEYS = new Set([
  'content',
  'actual_type',
  'attachments',
  '_ERROR',
  '_ARTIFACTS',
  '_ATTACHMENT_CONTENT',
  'raw_result',
  '_created_time',
  '_elapsed_time',
  'stdout',
]);

export class ContractError extends Error {
  override name = 'ContractError';
}

/** `Null`, `Boolean`, `Number`, `String`, `Object`, `Array<T>` (`Array<Any>` when empty or mixed). */
export function inferActualType(value: unknown): string {
  if (value === null || value === undefined) return 'Null';
  if (typeof value === 'boolean') return 'Boolean';
  if (typeof value === 'number') return 'Number';
  if (typeof value === 'string') return 'String';
  if (Array.isArray(value)) {
    if (!value.length) return 'Array<Any>';
    const kinds = new Set(value.map(inferActualType));
    return kinds.size === 1 ? `Array<${[...kinds][0]}>` : 'Array<Any>';
  }
  if (typeof value === 'object') return 'Object';
  return 'Any';
}

/**
 * The text of a result as RAGFlow renders it: strings as they are, null as "", objects and lists as JSON
 * with sorted keys and a 2-space indent, booleans as Python prints them (`True` / `False`).
 */
export function renderContent(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'object') return JSON.stringify(sortKeys(value), null, 2);
  return String(value);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}

/** The declared output that receives the value: the only non-system one; `result` when none is declared. */
export function businessOutput(outputs: Record<string, unknown> | undefined): { name: string; type: string } {
  const business = Object.entries(outputs ?? {}).filter(([n]) => !SYSTEM_OUTPUT_KEYS.has(n));
  if (!business.length) return { name: 'result', type: '' };
  if (business.length !== 1) throw new ContractError(`CodeExec: the outputs must declare exactly one result output, found ${business.length} (${business.map(([n]) => n).join(', ')})`);
  const [name, meta] = business[0]!;
  if (!name.trim()) throw new ContractError('CodeExec: the result output name must not be empty');
  if (name.includes('.')) throw new ContractError(`CodeExec: the result output name must not contain '.': ${name}`);
  const type = meta && typeof meta === 'object' && typeof (meta as { type?: unknown }).type === 'string' ? (meta as { type: string }).type : '';
  return { name, type };
}

function normalizeType(expected: string): string {
  const t = expected.trim();
  const simple: Record<string, string> = { string: 'String', number: 'Number', boolean: 'Boolean', object: 'Object', null: 'Null', any: 'Any' };
  const s = simple[t.toLowerCase()];
  if (s) return s;
  if (/^array<.*>$/i.test(t)) {
    const inner = t.slice(t.indexOf('<') + 1, -1).trim();
    if (!inner) throw new ContractError(`CodeExec: unsupported output type ${expected}`);
    return `Array<${normalizeType(inner)}>`;
  }
  return t;
}

/** Throws ContractError when `value` does not have the declared type (RAGFlow's rules; "" and Any accept anything). */
export function checkType(expected: string, value: unknown, path = 'value'): void {
  const type = expected ? normalizeType(expected) : '';
  if (!type || type === 'Any') return;
  if (type.startsWith('Array<') && type.endsWith('>')) {
    if (!Array.isArray(value)) throw new ContractError(`CodeExec: the result does not match its declared type at ${path}: expected ${type}, got ${inferActualType(value)}`);
    value.forEach((item, i) => checkType(type.slice(6, -1), item, path === 'value' ? `[${i}]` : `${path}[${i}]`));
    return;
  }
  const ok =
    type === 'String'
      ? typeof value === 'string'
      : type === 'Number'
        ? typeof value === 'number'
        : type === 'Boolean'
          ? typeof value === 'boolean'
          : type === 'Object'
            ? !!value && typeof value === 'object' && !Array.isArray(value)
            : type === 'Null'
              ? value === null
              : undefined;
  if (ok === undefined) throw new ContractError(`CodeExec: unsupported output type ${expected}`);
  if (!ok) throw new ContractError(`CodeExec: the result does not match its declared type at ${path}: expected ${type}, got ${inferActualType(value)}`);
}
