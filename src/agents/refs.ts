/**
 * Variable references of RAGFlow's canvas DSL (reference §1.3): `{cpn_id@var.path}`, `{sys.x}`, `{env.x}`.
 *
 * PURE: no Node APIs, no I/O, deterministic; imported by Temporal workflow code.
 *
 * Semantics, following RAGFlow's `ComponentBase.variable_ref_patt`, `Graph.get_variable_value`,
 * `Graph.get_variable_param_value` and `ComponentBase.get_input`:
 * - `cpn_id` is `[A-Za-z0-9_:]+`, `var` is `[A-Za-z0-9_.-]+`; sys/env names are `[A-Za-z0-9_.]+`. Extra
 *   surrounding braces, with spaces between them (`{{sys.query}}`, `{ {begin@x} }`), are tolerated and
 *   belong to the match, so rendering replaces them too. The `sys.` / `env.` prefix is case-insensitive.
 * - `var` is a dotted path: the first segment names the output, the rest walks dicts by key and lists by
 *   integer index (negative counts from the end, as in Python); a JSON string met on the way is parsed;
 *   any miss gives `null` (also an output the component has not produced).
 * - An unknown component throws `Can't find variable: '<id>@<var>'`; an unknown `sys.`/`env.` key throws
 *   `Can't find variable: '<key>'`. A dotted global (`sys.x.y`) walks into `sys.x` when `sys.x.y` itself is
 *   not a key.
 */
import type { Outputs } from './dsl.js';
import { isRecord } from '../records.js';

/** What references resolve against. */
export interface Scope {
  /**
   * The outputs of a component: `undefined` means there is no such component (an error); a component
   * that exists but has not run (yet) must give `{}`.
   */
  outputs(componentId: string): Outputs | undefined;
  /** `sys.*` and `env.*` values, keyed by their full names (`sys.query`). */
  globals: Record<string, unknown>;
}

/** Thrown when a reference names a component or global that does not exist. */
export class VariableNotFoundError extends Error {
  constructor(readonly ref: string) {
    super(`Can't find variable: '${ref}'`);
    this.name = 'VariableNotFoundError';
  }
}

const REF_BODY = String.raw`[A-Za-z0-9_:]+@[A-Za-z0-9_.-]+|sys\.[A-Za-z0-9_.]+|env\.[A-Za-z0-9_.]+`;
/**
 * RAGFlow's `variable_ref_patt` (use case-insensitively); group 1 is the reference without braces.
 * One deliberate difference: RAGFlow's `\{* *\{` also swallows plain spaces before and after a reference
 * (`"Q: {sys.query} ok"` renders as `"Q:<value>ok"` in its Message stream, but not in LLM prompts);
 * here spaces are part of the match only next to extra braces (`{ {sys.query} }`), so text keeps them.
 */
export const REF_PATTERN_SOURCE = String.raw`(?:\{+ *)?\{(${REF_BODY})\}(?: *\}+)?`;

/** A fresh global regex each time: `lastIndex` state must never leak between callers. */
function refRegex(): RegExp {
  return new RegExp(REF_PATTERN_SOURCE, 'gi');
}
const WHOLE_REF = new RegExp(String.raw`^\s*${REF_PATTERN_SOURCE}\s*$`, 'i');
/** A reference written without braces, as Switch `cpn_id`, Categorize `query`, VariableAggregator accept. */
const BARE_CPN_REF = /^\s*([A-Za-z0-9_:]+)@([A-Za-z0-9_.-]+)\s*$/;
const BARE_GLOBAL_REF = /^\s*((?:sys|env)\.[A-Za-z0-9_.]+)\s*$/i;

/** Strip the braces and spaces around a reference: `{ {begin@x} }` -> `begin@x`. */
export function stripRef(ref: string): string {
  return ref.replace(/^[\s{]+/, '').replace(/[\s}]+$/, '');
}

/** `SYS.Query` -> `sys.Query`: only the prefix is case-insensitive. */
function normalizeGlobalKey(key: string): string {
  const m = /^(sys|env)\./i.exec(key);
  return m ? `${m[1]!.toLowerCase()}.${key.slice(m[0].length)}` : key;
}


/** Walk `path` (dot-separated) into `value` as RAGFlow's `get_variable_param_value` does. */
export function walkPath(value: unknown, path: string): unknown {
  let cur: unknown = value;
  if (!path) return cur === undefined ? null : cur;
  for (const key of path.split('.')) {
    if (cur === null || cur === undefined) return null;
    if (typeof cur === 'string') {
      try {
        cur = JSON.parse(cur);
      } catch {
        return null;
      }
    }
    if (Array.isArray(cur)) {
      if (!/^\s*[-+]?\d+\s*$/.test(key)) return null;
      let idx = Number.parseInt(key, 10);
      if (idx < 0) idx += cur.length;
      if (idx < 0 || idx >= cur.length) return null;
      cur = cur[idx];
      continue;
    }
    if (isRecord(cur)) {
      cur = Object.prototype.hasOwnProperty.call(cur, key) ? cur[key] : null;
      continue;
    }
    return null;
  }
  return cur === undefined ? null : cur;
}

/**
 * The value of one reference, with or without braces: `{begin@customer_review}`, `begin@customer_review`,
 * `sys.query`, `Agent:X@structured.items.0.title`.
 */
export function resolveRef(ref: string, scope: Scope): unknown {
  const exp = stripRef(ref);
  const at = exp.indexOf('@');
  if (at > 0) {
    const componentId = exp.slice(0, at);
    const varPath = exp.slice(at + 1);
    const outputs = scope.outputs(componentId);
    if (outputs === undefined) throw new VariableNotFoundError(`${componentId}@${varPath}`);
    const dot = varPath.indexOf('.');
    const root = dot < 0 ? varPath : varPath.slice(0, dot);
    const rest = dot < 0 ? '' : varPath.slice(dot + 1);
    const rootValue = Object.prototype.hasOwnProperty.call(outputs, root) ? outputs[root] : null;
    return walkPath(rootValue, rest);
  }
  return resolveGlobal(exp, scope.globals);
}

function resolveGlobal(exp: string, globals: Record<string, unknown>): unknown {
  const key = normalizeGlobalKey(exp);
  for (const candidate of key === exp ? [key] : [key, exp]) {
    if (Object.prototype.hasOwnProperty.call(globals, candidate)) {
      const v = globals[candidate];
      return v === undefined ? null : v;
    }
  }
  // `sys.history.0`: the longest existing key, then walk the rest.
  const parts = key.split('.');
  for (let n = parts.length - 1; n >= 2; n--) {
    const head = parts.slice(0, n).join('.');
    if (Object.prototype.hasOwnProperty.call(globals, head)) return walkPath(globals[head], parts.slice(n).join('.'));
  }
  throw new VariableNotFoundError(key);
}

/** True when `text` is exactly one braced reference (surrounding braces/spaces tolerated). */
export function isWholeRef(text: string): boolean {
  return WHOLE_REF.test(text);
}

/**
 * A brace-less whole-value reference that RAGFlow's `is_reff` accepts: `cpn@var` whose component exists,
 * or a `sys.`/`env.` key present in the globals.
 */
function bareRef(text: string, scope: Scope): string | undefined {
  const c = BARE_CPN_REF.exec(text);
  if (c) return scope.outputs(c[1]!) !== undefined ? `${c[1]}@${c[2]}` : undefined;
  const g = BARE_GLOBAL_REF.exec(text);
  if (g) {
    const key = normalizeGlobalKey(g[1]!);
    return Object.prototype.hasOwnProperty.call(scope.globals, key) ? key : undefined;
  }
  return undefined;
}

/** A value as it is substituted into text: strings as they are, null -> "", anything else as JSON. */
export function stringifyValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}

/**
 * Substitute every reference inside `text` (unknown components/globals throw). `prepare` sees each value
 * before it becomes text (a prompt takes the images out of it: prompt-images.ts).
 */
export function renderTemplate(text: string, scope: Scope, prepare: (value: unknown) => unknown = (v) => v): string {
  return text.replace(refRegex(), (_match, exp: string) => stringifyValue(prepare(resolveRef(exp, scope))));
}

/**
 * Resolve a param value as RAGFlow's `get_input` does:
 * - a string that is exactly one reference gets the RAW value (type kept: lists, dicts, numbers);
 *   written with braces, or without them when the component / global exists (`begin@x`, `sys.query`);
 * - a string with references inside text gets them substituted (non-strings JSON-encoded, null -> "");
 * - other strings, numbers, booleans, null pass through.
 *
 * Decision (RAGFlow resolves only top-level string params, and LLM/Message templates itself): arrays and
 * plain objects ARE resolved deeply here, with the same rules for every string inside them, so prompt
 * lists (`prompts[].content`), Message `content` lists, `kb_ids` holding references and an Agent tool's
 * params can be resolved in one call. Callers pass only the params that are meant to be resolved (never
 * Switch `conditions` or `outputs` declarations, whose strings are references by design / schemas).
 * `undefined` values inside objects are dropped from the result.
 */
export function resolveParam(value: unknown, scope: Scope): unknown {
  if (typeof value === 'string') {
    if (isWholeRef(value)) return resolveRef(value, scope);
    const bare = bareRef(value, scope);
    if (bare !== undefined) return resolveRef(bare, scope);
    return refRegex().test(value) ? renderTemplate(value, scope) : value;
  }
  if (Array.isArray(value)) return value.map((v) => resolveParam(v, scope));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      out[k] = resolveParam(v, scope);
    }
    return out;
  }
  return value;
}

/** A piece of a template: literal text, or a reference (without braces) and the component it names. */
export type TemplatePiece = { text: string } | { ref: string; componentId?: string };

/**
 * Literal pieces and references of `text`, in order (empty literals omitted). A Message uses it to
 * interleave its literal text with an upstream LLM/Agent's streamed output.
 */
export function splitTemplate(text: string): TemplatePiece[] {
  const pieces: TemplatePiece[] = [];
  let last = 0;
  for (const m of text.matchAll(refRegex())) {
    const start = m.index ?? 0;
    if (start > last) pieces.push({ text: text.slice(last, start) });
    const ref = m[1]!;
    const at = ref.indexOf('@');
    pieces.push(at > 0 ? { ref, componentId: ref.slice(0, at) } : { ref: normalizeGlobalKey(ref) });
    last = start + m[0].length;
  }
  if (last < text.length) pieces.push({ text: text.slice(last) });
  return pieces;
}

/**
 * Component ids referenced anywhere in a param value (deep; strings in arrays and objects), in order of
 * first appearance, without duplicates. A whole string written as a brace-less `cpn@var` counts too
 * (Switch `cpn_id`, Categorize `query`, VariableAggregator variables); the caller ignores ids that are
 * not components (an e-mail address in a prompt looks like one).
 */
export function referencedComponents(value: unknown): string[] {
  const seen = new Set<string>();
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      for (const m of v.matchAll(refRegex())) {
        const exp = m[1]!;
        const at = exp.indexOf('@');
        if (at > 0) seen.add(exp.slice(0, at));
      }
      const bare = BARE_CPN_REF.exec(v);
      if (bare) seen.add(bare[1]!);
    } else if (Array.isArray(v)) {
      v.forEach(visit);
    } else if (isRecord(v)) {
      Object.values(v).forEach(visit);
    }
  };
  visit(value);
  return [...seen];
}
