/**
 * The data-shaping components that run inside workflow code: VariableAssigner, StringTransform,
 * DataOperations and ListOperations, with RAGFlow's params and outputs (RAGFlow
 * `agent/component/variable_assigner.py`, `string_transform.py`, `data_operations.py`,
 * `list_operations.py`; reference §2.1).
 *
 * PURE: no Node APIs, no I/O, deterministic. Imports only pure modules and types. A component error is
 * a thrown `Error` whose message is what RAGFlow would put in `_ERROR` (the interpreter records it).
 *
 * Where Cairn differs from RAGFlow, on purpose (each is also stated at its function):
 * - Values are never shared: every assigned value is a fresh copy (RAGFlow's `append` mutates the list
 *   in place, so two variables overwritten from one list change together).
 * - VariableAssigner applies all of its rows or none: a row that fails (unknown variable, incomplete
 *   row) fails the component before anything is written (RAGFlow keeps the rows before it).
 * - VariableAssigner `set` converts the editor's text to the variable's type (`"yes"`/`"no"` for a
 *   boolean, numeric text for a number, JSON text for an object or a list); RAGFlow stores the text.
 * - The arithmetic operators also take numeric text and a reference to a number (RAGFlow: a number).
 * - StringTransform `merge` substitutes references only; Jinja (`{% %}`, `{{ name }}` that is not a
 *   reference) fails with a clear message instead of being rendered.
 * - DataOperations `literal_eval` also parses JSON (`true`, `null`) when the text is not a Python literal.
 * - Templates in DataOperations `updates` / `filter_values` values and ListOperations `filter.value`
 *   (RAGFlow resolves none in the latter) render to their text even when that is empty (RAGFlow then
 *   falls back to the unrendered template); an empty filter operator means `=` (RAGFlow: never matches).
 * - ListOperations `sort` orders values of different types (null < booleans and numbers < text < lists
 *   < objects) instead of failing on Python's `TypeError`.
 */
import type { Outputs } from '../dsl.js';
import { isWholeRef, renderTemplate, resolveRef, splitTemplate, stringifyValue, stripRef, type Scope } from '../refs.js';
import { truthy } from './pure.js';
import { isRecord } from '../../records.js';

type Params = Record<string, unknown>;


function hasOwn(obj: Record<string, unknown>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/** `obj[key] = value` as an own property whatever the key (`__proto__` included). */
function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A deep copy of a JSON-like value (arrays and plain objects copied, everything else as is). */
export function cloneValue<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => cloneValue(v)) as T;
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) setKey(out, k, cloneValue(v));
    return out as T;
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------
// Python's view of values

/** Python's type name of a JSON value (numbers: `int` when integral, else `float`). */
export function pyTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'string') return 'str';
  if (Array.isArray(v)) return 'list';
  if (isRecord(v)) return 'dict';
  return typeof v;
}

/** The type kind used by `isinstance` checks: int and float are one kind (JSON cannot tell them apart). */
function kindOf(v: unknown): string {
  const t = pyTypeName(v);
  return t === 'int' || t === 'float' ? 'number' : t;
}

function pyNumber(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  return String(n);
}

function pyStringRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

/** Python's `repr()` of a JSON value: `{'a': [1, True, None]}`. */
export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return pyNumber(v);
  if (typeof v === 'string') return pyStringRepr(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (isRecord(v)) return `{${Object.entries(v).map(([k, x]) => `${pyStringRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
  return String(v);
}

/** Python's `str()`: text as is, everything else as `repr()` (`True`, `None`, `{'a': 1}`). */
export function pyStr(v: unknown): string {
  return typeof v === 'string' ? v : pyRepr(v);
}

/** RAGFlow's `norm` of DataOperations / ListOperations filters: None -> "", else `str(v)`. */
function normText(v: unknown): string {
  return v === null || v === undefined ? '' : pyStr(v);
}

/** Code-point order, as Python compares `str`. */
function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const ai = a[Symbol.iterator]();
  const bi = b[Symbol.iterator]();
  for (;;) {
    const x = ai.next();
    const y = bi.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const d = x.value.codePointAt(0)! - y.value.codePointAt(0)!;
    if (d !== 0) return d < 0 ? -1 : 1;
  }
}

function sortRank(v: unknown): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'boolean' || typeof v === 'number') return 1;
  if (typeof v === 'string') return 2;
  if (Array.isArray(v)) return 3;
  return 4;
}

/**
 * A total order on JSON values: Python's where Python can compare (numbers and booleans numerically,
 * text by code point, lists element by element, shorter first), and null < numbers < text < lists <
 * objects where Python would raise `TypeError`. Objects compare as their sorted `[key, value]` pairs.
 */
export function pyCompare(a: unknown, b: unknown): number {
  const ra = sortRank(a);
  const rb = sortRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return 0;
    case 1: {
      const x = Number(a);
      const y = Number(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 2:
      return compareText(a as string, b as string);
    case 3: {
      const x = a as unknown[];
      const y = b as unknown[];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = pyCompare(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
    }
    default:
      return pyCompare(hashable(a), hashable(b));
  }
}

/** RAGFlow's `_hashable`: an object becomes its `[key, value]` pairs sorted by key, recursively. */
function hashable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(hashable);
  if (isRecord(v)) {
    return Object.keys(v)
      .sort(compareText)
      .map((k) => [k, hashable(v[k])]);
  }
  return v;
}

/** A canonical text key for equality (drop_duplicates): objects equal whatever their key order. */
function identityKey(v: unknown): string {
  const walk = (x: unknown): unknown => {
    if (Array.isArray(x)) return { l: x.map(walk) };
    if (isRecord(x)) return { d: hashable(x) };
    return x === undefined ? null : x;
  };
  return JSON.stringify(walk(v)) ?? 'null';
}

// ---------------------------------------------------------------------------------------------------
// VariableAssigner

/** The operators of RAGFlow's VariableAssigner. */
export const VARIABLE_ASSIGNER_OPERATORS = ['overwrite', 'clear', 'set', 'append', 'extend', 'remove_first', 'remove_last', '+=', '-=', '*=', '/='] as const;
const NO_PARAMETER_OPERATORS = new Set(['clear', 'remove_first', 'remove_last']);

export const ERR_VARIABLE_NOT_LIST = 'ERROR:VARIABLE_NOT_LIST';
export const ERR_PARAMETER_NOT_LIST = 'ERROR:PARAMETER_NOT_LIST';
export const ERR_PARAMETER_NOT_LIST_ELEMENT_TYPE = 'ERROR:PARAMETER_NOT_LIST_ELEMENT_TYPE';
export const ERR_NOT_NUMBER = 'ERROR:VARIABLE_NOT_NUMBER or PARAMETER_NOT_NUMBER';
export const ERR_DIVIDE_BY_ZERO = 'ERROR:DIVIDE_BY_ZERO';

/** One write a VariableAssigner makes: `target` is a reference without braces (`env.x`, `cpn@out.a.b`). */
export interface Assignment {
  target: string;
  value: unknown;
}

/** `{ENV.x}` -> `env.x`; `{cpn@out.a}` -> `cpn@out.a`. */
export function normalizeTarget(ref: string): string {
  const exp = stripRef(ref);
  const m = /^(sys|env)\./i.exec(exp);
  return m ? `${m[1]!.toLowerCase()}.${exp.slice(m[0].length)}` : exp;
}

/**
 * The writes of a VariableAssigner (RAGFlow `VariableAssigner._invoke`), in order; the caller applies
 * each with `applyAssignment`. Rows run one after the other: a row reads the variable as the rows
 * before it left it. Each row is `{variable, operator, parameter}`:
 *
 * - `overwrite`: the value of the reference `parameter` (a non-text parameter is taken as it is).
 * - `clear`: the empty value of the variable's type ([] "" {} false 0; null otherwise).
 * - `set`: on a null or text variable, `parameter` as a template (references substituted, giving text);
 *   on other types the parameter as it is, converted to the variable's type when it is the editor's
 *   text for it ("yes"/"no"/"true"/"false" for a boolean, numeric text for a number, JSON for an
 *   object or a list).
 * - `append` / `extend`: the value of the reference `parameter` added to the list / the list it names
 *   appended (a null variable counts as []); the first element's type must match.
 * - `remove_first` / `remove_last`: the list without its first / last element ([] stays []).
 * - `+=` `-=` `*=` `/=`: number arithmetic; `parameter` is a number, numeric text or a reference to one.
 *
 * Type errors are not failures: the variable gets RAGFlow's `"ERROR:…"` text (`ERR_*`). A row without
 * `variable` or `operator`, or without `parameter` where the operator needs one, fails with "Variable
 * is not complete."; an unknown variable fails with `Can't find variable: '…'`. Nothing is written when
 * any row fails. A `params.variables` that is not a list assigns nothing (RAGFlow).
 */
export function assignVariables(params: Params, scope: Scope): Assignment[] {
  const rows = params.variables;
  if (!Array.isArray(rows)) return [];
  // Reads see earlier rows' writes: a copy-on-write view of the globals and of the outputs written.
  const globals: Record<string, unknown> = { ...scope.globals };
  const written: Record<string, Outputs> = {};
  const view: Scope = { globals, outputs: (id) => (hasOwn(written, id) ? written[id] : scope.outputs(id)) };
  const out: Assignment[] = [];
  for (const row of rows) {
    const item = isRecord(row) ? row : {};
    const { variable, operator, parameter } = item;
    if (!truthy(variable) || !truthy(operator)) throw new Error('Variable is not complete.');
    if (typeof variable !== 'string') throw new Error(`Variable must be a reference, got ${pyTypeName(variable)}`);
    const op = String(operator);
    if (!(VARIABLE_ASSIGNER_OPERATORS as readonly string[]).includes(op)) throw new Error(`Not supported operator: ${op}`);
    if (!NO_PARAMETER_OPERATORS.has(op) && (parameter === null || parameter === undefined)) throw new Error('Variable is not complete.');
    const target = normalizeTarget(variable);
    const current = resolveRef(target, view);
    const value = cloneValue(operate(current, op, parameter, view));
    const at = target.indexOf('@');
    if (at > 0) {
      const id = target.slice(0, at);
      if (!hasOwn(written, id)) setKey(written, id, { ...(scope.outputs(id) ?? {}) });
    }
    applyAssignment(globals, written, target, value);
    out.push({ target, value });
  }
  return out;
}

/** The value of a parameter that names a variable; a non-text parameter is the value itself. */
function referencedValue(parameter: unknown, scope: Scope): unknown {
  return typeof parameter === 'string' ? resolveRef(parameter, scope) : parameter;
}

function isNumber(v: unknown): v is number {
  return typeof v === 'number' && !Number.isNaN(v);
}

const NUMERIC_TEXT = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

function numericParameter(parameter: unknown, scope: Scope): unknown {
  let v = parameter;
  if (typeof v === 'string' && isWholeRef(v)) v = resolveRef(v, scope);
  if (typeof v === 'string' && NUMERIC_TEXT.test(v)) return Number(v);
  return v;
}

/** `set` on a non-text variable: the editor's text converted to the variable's type when it reads as one. */
function coerceLike(current: unknown, parameter: unknown): unknown {
  if (typeof parameter !== 'string') return parameter;
  const text = parameter.trim();
  if (typeof current === 'boolean') {
    const t = text.toLowerCase();
    if (t === 'yes' || t === 'true') return true;
    if (t === 'no' || t === 'false') return false;
    return parameter;
  }
  if (typeof current === 'number') return NUMERIC_TEXT.test(text) ? Number(text) : parameter;
  if (isRecord(current) || Array.isArray(current)) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (isRecord(current) ? isRecord(parsed) : Array.isArray(parsed)) return parsed;
    } catch {
      // not JSON: the text as it is
    }
  }
  return parameter;
}

function operate(current: unknown, op: string, parameter: unknown, scope: Scope): unknown {
  switch (op) {
    case 'overwrite':
      return referencedValue(parameter, scope);
    case 'clear':
      if (Array.isArray(current)) return [];
      if (typeof current === 'string') return '';
      if (isRecord(current)) return {};
      if (typeof current === 'boolean') return false;
      if (typeof current === 'number') return 0;
      return null;
    case 'set':
      if (current === null || current === undefined || typeof current === 'string') {
        return typeof parameter === 'string' ? renderTemplate(parameter, scope) : parameter;
      }
      return coerceLike(current, parameter);
    case 'append': {
      const p = referencedValue(parameter, scope);
      const list = current === null || current === undefined ? [] : current;
      if (!Array.isArray(list)) return ERR_VARIABLE_NOT_LIST;
      if (list.length && kindOf(p) !== kindOf(list[0])) return ERR_PARAMETER_NOT_LIST_ELEMENT_TYPE;
      return [...list, p];
    }
    case 'extend': {
      const p = referencedValue(parameter, scope);
      const list = current === null || current === undefined ? [] : current;
      if (!Array.isArray(list)) return ERR_VARIABLE_NOT_LIST;
      if (!Array.isArray(p)) return ERR_PARAMETER_NOT_LIST;
      if (list.length && p.length && kindOf(p[0]) !== kindOf(list[0])) return ERR_PARAMETER_NOT_LIST_ELEMENT_TYPE;
      return [...list, ...p];
    }
    case 'remove_first':
      if (!Array.isArray(current)) return ERR_VARIABLE_NOT_LIST;
      return current.slice(1);
    case 'remove_last':
      if (!Array.isArray(current)) return ERR_VARIABLE_NOT_LIST;
      return current.slice(0, -1);
  }
  // + - * /
  const p = numericParameter(parameter, scope);
  if (!isNumber(current) || !isNumber(p)) return ERR_NOT_NUMBER;
  switch (op) {
    case '+=':
      return current + p;
    case '-=':
      return current - p;
    case '*=':
      return current * p;
    default:
      return p === 0 ? ERR_DIVIDE_BY_ZERO : current / p;
  }
}

/**
 * Writes `value` where `target` points (RAGFlow `Graph.set_variable_value`), replacing — never
 * mutating in place — the objects on the way:
 * - `sys.x` / `env.x`: `canvasGlobals[key] = value`. A dotted name that is not itself a global but
 *   starts with one (`env.cfg.a`, with `env.cfg` a global) sets the key inside it, as reading walks
 *   into it.
 * - `cpn@out`: `outputsById[cpn].out = value` (`outputsById[cpn]` is created when missing).
 * - `cpn@out.a.b`: sets `b` inside `a` inside output `out`, creating the objects on the way; an
 *   empty output starts as {}, and a key on the way that holds no object is replaced by one. An
 *   output that holds something else than an object (a list, text that is not a JSON object, a number)
 *   cannot take a key: that throws (RAGFlow fails the same way).
 */
export function applyAssignment(canvasGlobals: Record<string, unknown>, outputsById: Record<string, Outputs>, target: string, value: unknown): void {
  const exp = normalizeTarget(target);
  const at = exp.indexOf('@');
  if (at < 0) {
    if (hasOwn(canvasGlobals, exp)) {
      setKey(canvasGlobals, exp, value);
      return;
    }
    const parts = exp.split('.');
    for (let n = parts.length - 1; n >= 2; n--) {
      const head = parts.slice(0, n).join('.');
      if (hasOwn(canvasGlobals, head)) {
        setKey(canvasGlobals, head, setPath(canvasGlobals[head], parts.slice(n), value, exp));
        return;
      }
    }
    setKey(canvasGlobals, exp, value);
    return;
  }
  const id = exp.slice(0, at);
  const varPath = exp.slice(at + 1);
  const dot = varPath.indexOf('.');
  const root = dot < 0 ? varPath : varPath.slice(0, dot);
  const current: Outputs = (hasOwn(outputsById, id) ? outputsById[id] : undefined) ?? {};
  if (dot < 0) {
    setKey(outputsById, id, { ...current, [root]: value });
    return;
  }
  setKey(outputsById, id, { ...current, [root]: setPath(hasOwn(current, root) ? current[root] : null, varPath.slice(dot + 1).split('.'), value, exp) });
}

function setPath(rootValue: unknown, keys: string[], value: unknown, exp: string): Record<string, unknown> {
  let root = rootValue;
  if (typeof root === 'string' && root.trim().startsWith('{')) {
    try {
      root = JSON.parse(root);
    } catch {
      // stays text: fails below
    }
  }
  if (!truthy(root)) root = {};
  if (!isRecord(root)) throw new Error(`Can't set '${exp}': the value it goes into is ${article(pyTypeName(root))}, not an object`);
  const top: Record<string, unknown> = { ...root };
  let cur = top;
  for (const key of keys.slice(0, -1)) {
    const next = hasOwn(cur, key) ? cur[key] : undefined;
    const copy: Record<string, unknown> = isRecord(next) ? { ...next } : {};
    setKey(cur, key, copy);
    cur = copy;
  }
  setKey(cur, keys[keys.length - 1]!, value);
  return top;
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`;
}

// ---------------------------------------------------------------------------------------------------
// StringTransform

/** RAGFlow's delimiters: a list of strings, or one string whose characters are each a delimiter. */
function delimitersOf(value: unknown): string[] {
  if (value === undefined || value === null) return [','];
  if (typeof value === 'string') return Array.from(value);
  if (Array.isArray(value)) return value.filter((d): d is string => typeof d === 'string');
  return [];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

const JINJA = /\{%[\s\S]*?%\}|\{\{[\s\S]*?\}\}|\{#[\s\S]*?#\}/;

/**
 * StringTransform (RAGFlow `StringTransform._invoke`): output `result`.
 *
 * - `method: "split"` (the default): the text that `split_ref` names (a reference, braces optional)
 *   split at every occurrence of any of `delimiters` (listed first wins where two match at one place),
 *   empty pieces kept: `"a,,b"` -> ["a", "", "b"]. A missing value (null, "") gives [""]; a value that is
 *   not text fails: `The input variable is not a string: <class 'list'>`.
 * - `method: "merge"`: `script` with every `{reference}` replaced by its value: text as it is, null as
 *   "", a list joined by the first delimiter (items as Python's `str()`), other values as JSON. Jinja
 *   (`{% %}`, `{{ name }}` that is not a reference, `{# #}`), which RAGFlow renders, is not supported and
 *   fails with a message saying so; `{{cpn@out}}` is a reference (extra braces are tolerated).
 */
export function stringTransform(params: Params, scope: Scope): Outputs {
  const method = params.method === undefined || params.method === null ? 'split' : String(params.method);
  const delimiters = delimitersOf(params.delimiters);
  if (method === 'split') return { result: splitText(params.split_ref, delimiters, scope) };
  if (method === 'merge') return { result: mergeText(params.script, delimiters, scope) };
  throw new Error(`StringTransform: unsupported method '${method}' (split or merge)`);
}

function splitText(ref: unknown, delimiters: string[], scope: Scope): string[] {
  if (typeof ref !== 'string' || !stripRef(ref)) throw new Error("StringTransform: 'split_ref' is empty: it must name the text to split");
  let text = resolveRef(ref, scope);
  if (!truthy(text)) text = '';
  if (typeof text !== 'string') throw new Error(`The input variable is not a string: <class '${pyTypeName(text)}'>`);
  const usable = delimiters.filter((d) => d.length > 0);
  if (!usable.length) return [text];
  return text.split(new RegExp(usable.map(escapeRegExp).join('|')));
}

function mergeText(script: unknown, delimiters: string[], scope: Scope): string {
  if (script === undefined || script === null) return '';
  if (typeof script !== 'string') throw new Error(`StringTransform: 'script' must be text, got ${pyTypeName(script)}`);
  const pieces = splitTemplate(script);
  for (const piece of pieces) {
    if ('text' in piece && JINJA.test(piece.text)) {
      throw new Error(`StringTransform: Jinja templates are not supported (found '${JINJA.exec(piece.text)![0]}'); use {component@output} references`);
    }
  }
  const joiner = delimiters[0] ?? ',';
  return pieces
    .map((piece) => {
      if ('text' in piece) return piece.text;
      const v = resolveRef(piece.ref, scope);
      if (Array.isArray(v)) return v.map(pyStr).join(joiner);
      return stringifyValue(v);
    })
    .join('');
}

// ---------------------------------------------------------------------------------------------------
// DataOperations

/** DataOperations' operations (RAGFlow `DataOperationsParam.check`). */
export const DATA_OPERATIONS = ['select_keys', 'literal_eval', 'combine', 'filter_values', 'append_or_update', 'remove_keys', 'rename_keys'] as const;

/**
 * The objects DataOperations works on: each reference in `query` (a list, or one reference) resolved;
 * an object is taken, a list contributes the objects in it, anything else (null, text, numbers) is
 * skipped. An unknown component or global fails (`Can't find variable`). Copies: inputs are never changed.
 */
function dataInputs(query: unknown, scope: Scope): Record<string, unknown>[] {
  const refs = Array.isArray(query) ? query : [query];
  const objects: Record<string, unknown>[] = [];
  for (const ref of refs) {
    if (typeof ref !== 'string' || !stripRef(ref)) continue;
    const value = resolveRef(ref, scope);
    if (isRecord(value)) objects.push(cloneValue(value));
    else if (Array.isArray(value)) for (const x of value) if (isRecord(x)) objects.push(cloneValue(x));
  }
  return objects;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((k): k is string => typeof k === 'string') : [];
}

/** A value template: text with references rendered (to text); a non-text value as it is. */
function renderValue(value: unknown, scope: Scope): unknown {
  return typeof value === 'string' ? renderTemplate(value, scope) : value;
}

/** One filter test on text, RAGFlow's `_eval` / `match_rule`: case-sensitive; unknown operators never hold. */
function textTest(v: string, operator: string, target: string): boolean {
  switch (operator) {
    case '=':
    case 'equals':
      return v === target;
    case '≠':
    case '!=':
      return v !== target;
    case 'contains':
      return v.includes(target);
    case 'start with':
      return v.startsWith(target);
    case 'end with':
      return v.endsWith(target);
  }
  return false;
}

/**
 * DataOperations (RAGFlow `DataOperations._invoke`) on the objects of `query`; output `result`:
 *
 * - `select_keys`: each object with only the keys in `select_keys` (its own key order).
 * - `literal_eval` (the default): every text value, deep, that looks like a Python literal
 *   (starts with `{ [ ( ' "`, is True/False/None, or digits with dots) parsed as one (`"[1, 'a']"`
 *   -> [1, "a"], `"12"` -> 12, `"True"` -> true); JSON is parsed too; anything else stays text.
 * - `combine`: ONE object: keys of all objects; a key met again collects its values in a list.
 * - `filter_values`: the objects for which every rule `{key, operator, value}` holds, comparing
 *   `str(obj[key])` with the rendered `value` (=, ≠, contains, start with, end with; case-sensitive;
 *   a missing key fails the rule; no rules keeps all).
 * - `append_or_update`: each object with `updates` `[{key, value}]` set (value: a template, rendered).
 * - `remove_keys`: each object without the keys in `remove_keys`.
 * - `rename_keys`: each object with `rename_keys` `[{old_key, new_key}]` applied (a renamed key moves
 *   to the end; pairs with an empty or identical name are skipped).
 */
export function dataOperations(params: Params, scope: Scope): Outputs {
  const op = params.operations === undefined || params.operations === null ? 'literal_eval' : String(params.operations);
  if (!(DATA_OPERATIONS as readonly string[]).includes(op)) throw new Error(`DataOperations: unsupported operation '${op}' (${DATA_OPERATIONS.join(', ')})`);
  const objects = dataInputs(params.query, scope);
  switch (op) {
    case 'select_keys': {
      const keys = new Set(stringList(params.select_keys));
      return { result: objects.map((o) => Object.fromEntries(Object.entries(o).filter(([k]) => keys.has(k)))) };
    }
    case 'literal_eval':
      return { result: objects.map((o) => literalEvalDeep(o)) };
    case 'combine':
      return { result: combine(objects) };
    case 'filter_values': {
      const rules = Array.isArray(params.filter_values) ? params.filter_values : [];
      return { result: objects.filter((o) => rules.every((r) => matchRule(o, r, scope))) };
    }
    case 'append_or_update': {
      const updates = Array.isArray(params.updates) ? params.updates : [];
      return {
        result: objects.map((o) => {
          const next = { ...o };
          for (const u of updates) {
            if (!isRecord(u) || typeof u.key !== 'string' || !u.key.trim()) continue;
            setKey(next, u.key.trim(), renderValue(u.value, scope));
          }
          return next;
        }),
      };
    }
    case 'remove_keys': {
      const keys = stringList(params.remove_keys);
      return {
        result: objects.map((o) => {
          const next = { ...o };
          for (const k of keys) delete next[k];
          return next;
        }),
      };
    }
    default: {
      const pairs = Array.isArray(params.rename_keys) ? params.rename_keys : [];
      return {
        result: objects.map((o) => {
          const next = { ...o };
          for (const pair of pairs) {
            if (!isRecord(pair)) continue;
            const from = typeof pair.old_key === 'string' ? pair.old_key.trim() : '';
            const to = typeof pair.new_key === 'string' ? pair.new_key.trim() : '';
            if (!from || !to || from === to || !hasOwn(next, from)) continue;
            const v = next[from];
            delete next[from];
            setKey(next, to, v);
          }
          return next;
        }),
      };
    }
  }
}

function combine(objects: Record<string, unknown>[]): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const obj of objects) {
    for (const [key, value] of Object.entries(obj)) {
      if (!hasOwn(result, key)) setKey(result, key, value);
      else if (Array.isArray(result[key])) (result[key] as unknown[]).push(...(Array.isArray(value) ? value : [value]));
      else setKey(result, key, Array.isArray(value) ? [result[key], ...value] : [result[key], value]);
    }
  }
  return result;
}

function matchRule(obj: Record<string, unknown>, rule: unknown, scope: Scope): boolean {
  if (!isRecord(rule)) return false;
  const key = typeof rule.key === 'string' ? rule.key : String(rule.key ?? '');
  if (!hasOwn(obj, key)) return false;
  const operator = typeof rule.operator === 'string' && rule.operator ? rule.operator.toLowerCase() : '=';
  const target = String(renderValue(normText(rule.value), scope));
  return textTest(normText(obj[key]), operator, target);
}

function literalEvalDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(literalEvalDeep);
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, literalEvalDeep(v)]));
  if (typeof value !== 'string') return value;
  const s = value.trim();
  const looksLiteral = /^[{[('"]/.test(s) || ['true', 'false', 'none'].includes(s.toLowerCase()) || /^[0-9]+$/.test(s.replace(/\./g, ''));
  if (!looksLiteral) return value;
  const parsed = parsePythonLiteral(s);
  if (parsed.ok) return parsed.value;
  if (/^[{[]/.test(s)) {
    try {
      return JSON.parse(s) as unknown;
    } catch {
      return value;
    }
  }
  return value;
}

// A parser for the Python literals `ast.literal_eval` accepts that JSON can hold: str (quotes of both
// kinds, triple quotes, r/u prefixes, escapes, adjacent literals joined), int (0x/0o/0b, underscores),
// float, True/False/None, one unary sign on a number, list, tuple (-> list), set (-> list, duplicates
// dropped), dict (str/number/bool/None keys). Bytes, complex numbers and anything else fail.

type Parsed = { ok: true; value: unknown } | { ok: false };

class LiteralSyntaxError extends Error {}

export function parsePythonLiteral(text: string): Parsed {
  const p = new PyLiteralParser(text);
  try {
    p.ws();
    const value = p.value();
    p.ws();
    if (!p.done()) return { ok: false };
    return { ok: true, value };
  } catch (err) {
    if (err instanceof LiteralSyntaxError) return { ok: false };
    throw err;
  }
}

class PyLiteralParser {
  private i = 0;
  constructor(private readonly s: string) {}

  done(): boolean {
    return this.i >= this.s.length;
  }

  private fail(): never {
    throw new LiteralSyntaxError();
  }

  ws(): void {
    while (this.i < this.s.length) {
      const c = this.s[this.i]!;
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') this.i++;
      else if (c === '\\' && this.s[this.i + 1] === '\n') this.i += 2;
      else if (c === '#') while (this.i < this.s.length && this.s[this.i] !== '\n') this.i++;
      else break;
    }
  }

  private peek(): string {
    return this.s[this.i] ?? '';
  }

  value(): unknown {
    const c = this.peek();
    if (c === '[') return this.sequence(']');
    if (c === '(') return this.tupleOrGroup();
    if (c === '{') return this.braces();
    if (c === '-' || c === '+') {
      this.i++;
      this.ws();
      const n = this.number();
      return c === '-' ? -n : n;
    }
    if (/[0-9.]/.test(c)) return this.number();
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.i))!;
      const word = m[0];
      const next = this.s[this.i + word.length];
      if (/^[rRuU]$/.test(word) && (next === "'" || next === '"')) return this.strings();
      this.i += word.length;
      if (word === 'True') return true;
      if (word === 'False') return false;
      if (word === 'None') return null;
      this.fail();
    }
    if (c === "'" || c === '"') return this.strings();
    this.fail();
  }

  private items(close: string): unknown[] {
    const out: unknown[] = [];
    this.ws();
    while (this.peek() !== close) {
      out.push(this.value());
      this.ws();
      if (this.peek() === ',') {
        this.i++;
        this.ws();
      } else if (this.peek() !== close) this.fail();
    }
    this.i++;
    return out;
  }

  private sequence(close: string): unknown[] {
    this.i++;
    return this.items(close);
  }

  private tupleOrGroup(): unknown {
    this.i++;
    this.ws();
    if (this.peek() === ')') {
      this.i++;
      return [];
    }
    const first = this.value();
    this.ws();
    if (this.peek() === ')') {
      this.i++;
      return first; // (x) is x; (x,) is a tuple
    }
    if (this.peek() !== ',') this.fail();
    this.i++;
    return [first, ...this.items(')')];
  }

  /** `{}` and `{k: v, ...}` are dicts; `{a, b}` is a set. */
  private braces(): unknown {
    this.i++;
    this.ws();
    if (this.peek() === '}') {
      this.i++;
      return {};
    }
    const first = this.value();
    this.ws();
    if (this.peek() !== ':') return this.set(first);
    const dict: Record<string, unknown> = {};
    let key = first;
    for (;;) {
      if (this.peek() !== ':') this.fail();
      this.i++;
      this.ws();
      setKey(dict, this.dictKey(key), this.value());
      this.ws();
      if (this.peek() === ',') {
        this.i++;
        this.ws();
      } else if (this.peek() !== '}') this.fail();
      if (this.peek() === '}') {
        this.i++;
        return dict;
      }
      key = this.value();
      this.ws();
    }
  }

  private set(first: unknown): unknown[] {
    let rest: unknown[] = [];
    if (this.peek() === ',') {
      this.i++;
      rest = this.items('}');
    } else if (this.peek() === '}') this.i++;
    else this.fail();
    const seen = new Set<string>();
    const out: unknown[] = [];
    for (const v of [first, ...rest]) {
      if (isRecord(v) || Array.isArray(v)) this.fail(); // unhashable
      const key = identityKey(v);
      if (!seen.has(key)) {
        seen.add(key);
        out.push(v);
      }
    }
    return out;
  }

  private dictKey(key: unknown): string {
    if (typeof key === 'string') return key;
    if (typeof key === 'number') return pyNumber(key);
    if (key === true) return 'true';
    if (key === false) return 'false';
    if (key === null) return 'null';
    return this.fail();
  }

  private number(): number {
    const rest = this.s.slice(this.i);
    const radix = /^0([xXoObB])((?:_?[0-9a-fA-F])+)/.exec(rest);
    if (radix) {
      const base = { x: 16, o: 8, b: 2 }[radix[1]!.toLowerCase() as 'x' | 'o' | 'b'];
      const digits = radix[2]!.replace(/_/g, '');
      if (![...digits].every((d) => Number.parseInt(d, 16) < base)) this.fail();
      this.i += radix[0].length;
      this.noNameAfter();
      return Number.parseInt(digits, base);
    }
    const m = /^(?:\d(?:_?\d)*)?(?:\.(?:\d(?:_?\d)*)?)?(?:[eE][-+]?\d(?:_?\d)*)?/.exec(rest)!;
    const lit = m[0];
    if (!lit || lit === '.' || !/\d/.test(lit.split(/[eE]/)[0]!)) this.fail();
    if (/^\d(?:_?\d)*$/.test(lit) && /^0+[1-9]/.test(lit.replace(/_/g, ''))) this.fail(); // 012 is a SyntaxError
    this.i += lit.length;
    this.noNameAfter();
    return Number(lit.replace(/_/g, ''));
  }

  /** `1j`, `1L`, `1abc` are not (JSON-able) literals. */
  private noNameAfter(): void {
    if (/[A-Za-z_0-9]/.test(this.peek())) this.fail();
  }

  /** One or more adjacent string literals, joined. */
  private strings(): string {
    let out = this.string();
    for (;;) {
      const save = this.i;
      this.ws();
      const c = this.peek();
      const prefixed = /^[rRuU]['"]/.test(this.s.slice(this.i, this.i + 2));
      if (c === "'" || c === '"' || prefixed) out += this.string();
      else {
        this.i = save;
        return out;
      }
    }
  }

  private string(): string {
    let raw = false;
    const c0 = this.peek();
    if (/[rRuU]/.test(c0)) {
      raw = c0 === 'r' || c0 === 'R';
      this.i++;
    }
    const q = this.peek();
    if (q !== "'" && q !== '"') this.fail();
    const triple = this.s.startsWith(q.repeat(3), this.i);
    const close = triple ? q.repeat(3) : q;
    this.i += close.length;
    let out = '';
    for (;;) {
      if (this.i >= this.s.length) this.fail();
      if (this.s.startsWith(close, this.i)) {
        this.i += close.length;
        return out;
      }
      const c = this.s[this.i]!;
      if (c === '\n' && !triple) this.fail();
      if (c !== '\\') {
        out += c;
        this.i++;
        continue;
      }
      const e = this.s[this.i + 1];
      if (e === undefined) this.fail();
      if (raw) {
        out += c + e;
        this.i += 2;
        continue;
      }
      this.i += 2;
      switch (e) {
        case '\n':
          break;
        case '\\':
        case "'":
        case '"':
          out += e;
          break;
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'a':
          out += '\x07';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        case 'x':
          out += this.hexEscape(2);
          break;
        case 'u':
          out += this.hexEscape(4);
          break;
        case 'U':
          out += this.hexEscape(8);
          break;
        default:
          if (/[0-7]/.test(e)) {
            const m = /^[0-7]{1,2}/.exec(this.s.slice(this.i))?.[0] ?? '';
            this.i += m.length;
            out += String.fromCodePoint(Number.parseInt(e + m, 8));
          } else if (e === 'N') {
            this.fail(); // \N{NAME}: no Unicode name table here
          } else {
            out += c + e; // unknown escapes stay as written
          }
      }
    }
  }

  private hexEscape(n: number): string {
    const hex = this.s.slice(this.i, this.i + n);
    if (hex.length !== n || !/^[0-9a-fA-F]+$/.test(hex)) this.fail();
    const code = Number.parseInt(hex, 16);
    if (code > 0x10ffff) this.fail();
    this.i += n;
    return String.fromCodePoint(code);
  }
}

// ---------------------------------------------------------------------------------------------------
// ListOperations

/** ListOperations' operations (RAGFlow `ListOperationsParam.check`; `topN` is read as `head`). */
export const LIST_OPERATIONS = ['nth', 'head', 'tail', 'filter', 'sort', 'drop_duplicates'] as const;

function listOperationName(value: unknown): string {
  const op = value === undefined || value === null ? '' : String(value).trim();
  if (op.toLowerCase() === 'topn') return 'head';
  return op || 'nth';
}

/** Python `int(n)`, 0 when it cannot be read (RAGFlow `_coerce_n`). */
function coerceN(n: unknown): number {
  if (typeof n === 'number') return Number.isFinite(n) ? Math.trunc(n) : 0;
  if (typeof n === 'boolean') return n ? 1 : 0;
  if (typeof n === 'string' && /^\s*[-+]?\d+(_\d+)*\s*$/.test(n)) return Number.parseInt(n.replace(/_/g, ''), 10);
  return 0;
}

function isStrict(strict: unknown): boolean {
  if (typeof strict === 'string') return ['1', 'true', 'yes', 'on'].includes(strict.trim().toLowerCase());
  return truthy(strict);
}

function sortKeys(sortBy: unknown): string[] {
  const parts = Array.isArray(sortBy) ? sortBy.map((k) => (typeof k === 'string' ? k : '')) : typeof sortBy === 'string' ? sortBy.split(',') : [];
  return parts.map((k) => k.trim()).filter(Boolean);
}

/**
 * ListOperations (RAGFlow `ListOperations._invoke`) on the list that `query` names; outputs `result`
 * (a list), `first` and `last` (its first / last element, null when empty). A value that is not a list
 * fails: "The input of List Operations should be an array.".
 *
 * - `nth`: `[item n]`, 1-based; negative counts from the end (-1 = last); 0 or out of range -> [].
 * - `head` (alias `topN`) / `tail`: the first / last `n` items (all when `n` exceeds the length; [] when
 *   `n` < 1).
 * - With `strict` true, an `n` out of range fails: `nth requires n to be within the valid range in
 *   strict mode, got 7.` instead of giving [].
 * - `filter`: the items for which `str(item) <operator> filter.value` holds (=, ≠, contains, start with,
 *   end with; case-sensitive; `filter.value` may hold references).
 * - `sort`: by `sort_method` asc (default) | desc, stable. A list of objects sorts by the `sort_by`
 *   keys (comma-separated or a list: primary, tie-break, …; a missing key sorts first), else by the
 *   objects' sorted key/value pairs; other items by value (see `pyCompare`).
 * - `drop_duplicates`: first occurrences kept (objects are equal whatever their key order).
 */
export function listOperations(params: Params, scope: Scope): Outputs {
  const query = params.query;
  if (typeof query !== 'string' || !stripRef(query)) throw new Error("ListOperations: 'query' is empty: it must name a list");
  const items = resolveRef(query, scope);
  if (!Array.isArray(items)) throw new Error('The input of List Operations should be an array.');
  const list = cloneValue(items);
  const op = listOperationName(params.operations);
  const n = coerceN(params.n);
  const strict = isStrict(params.strict);
  const rangeError = (): never => {
    throw new Error(`${op} requires n to be within the valid range in strict mode, got ${n}.`);
  };
  let result: unknown[];
  switch (op) {
    case 'nth':
      if (n === 0 || Math.abs(n) > list.length) result = strict ? rangeError() : [];
      else result = [list[n > 0 ? n - 1 : list.length + n]];
      break;
    case 'head':
    case 'tail':
      if (strict && !(n >= 1 && n <= list.length)) rangeError();
      result = n < 1 ? [] : op === 'head' ? list.slice(0, n) : list.slice(-n);
      break;
    case 'filter': {
      const filter = isRecord(params.filter) ? params.filter : {};
      const operator = typeof filter.operator === 'string' && filter.operator ? filter.operator : '=';
      const target = String(renderValue(normText(filter.value ?? ''), scope));
      result = list.filter((item) => textTest(normText(item), operator, target));
      break;
    }
    case 'sort': {
      const desc = params.sort_method === 'desc';
      const keys = sortKeys(params.sort_by);
      const keyOf = isRecord(list[0]) ? (keys.length ? (x: unknown) => keys.map((k) => (isRecord(x) && hasOwn(x, k) ? x[k] : null)) : hashable) : (x: unknown) => x;
      const keyed = list.map((item) => ({ item, key: keyOf(item) }));
      keyed.sort((a, b) => (desc ? -pyCompare(a.key, b.key) : pyCompare(a.key, b.key)));
      result = keyed.map((k) => k.item);
      break;
    }
    case 'drop_duplicates': {
      const seen = new Set<string>();
      result = list.filter((item) => {
        const key = identityKey(item);
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      break;
    }
    default:
      throw new Error(`ListOperations: unsupported operation '${op}' (${LIST_OPERATIONS.join(', ')}, topN)`);
  }
  return { result, first: result.length ? result[0] : null, last: result.length ? result[result.length - 1] : null };
}
