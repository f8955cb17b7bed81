/**
 * Validation of an agent canvas DSL against `dsl-schemas/` (ajv, draft-07) plus the checks a schema
 * cannot express: component names, the `begin` component, ids that must name existing components, and
 * the tools an Agent may use.
 *
 * NOT pure (reads the schema files, uses ajv): the API and activities import it; workflow code never does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import { COMPONENT_NAMES, type CanvasDsl, type ComponentName } from './dsl.js';
import { isExternalComponent } from './external.js';
import { isRecord } from '../records.js';

/** A DSL that cannot be stored or run; the message names the component id and the param. */
export class DslError extends Error {
  constructor(
    message: string,
    readonly componentId?: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'DslError';
  }
}

/** Components an Agent may list in `params.tools` (besides the external ones of external.ts). */
export const TOOL_NAMES = ['Retrieval', 'Agent', 'CodeExec'] as const;

const SCHEMA_DIR = new URL('../../dsl-schemas/', import.meta.url);
const BASE_ID = 'https://cairn.dev/dsl-schemas/';

type JsonSchema = Record<string, unknown>;

interface Compiled {
  canvas: ValidateFunction;
  params: Map<string, ValidateFunction>;
  schemas: Map<string, JsonSchema>;
  /** Compiles a user-supplied structured-output schema (separate instance: no shared ids). */
  userAjv: Ajv;
}

let compiled: Compiled | undefined;

function readJson(url: URL): JsonSchema {
  return JSON.parse(readFileSync(url, 'utf8')) as JsonSchema;
}

/** The schemas, loaded and compiled once. */
function load(): Compiled {
  if (compiled) return compiled;
  const ajv = new Ajv({ allErrors: false, strict: false, verbose: true });
  const schemas = new Map<string, JsonSchema>();
  const componentsDir = new URL('components/', SCHEMA_DIR);
  for (const file of readdirSync(componentsDir).filter((f) => f.endsWith('.schema.json')).sort()) {
    const schema = readJson(new URL(file, componentsDir));
    schemas.set(file.replace(/\.schema\.json$/, ''), schema);
    ajv.addSchema(schema as AnySchema);
  }
  const canvasSchema = readJson(new URL('canvas.schema.json', SCHEMA_DIR));
  ajv.addSchema(canvasSchema as AnySchema);
  const canvas = ajv.getSchema(`${BASE_ID}canvas.schema.json`)!;
  const params = new Map<string, ValidateFunction>();
  for (const name of COMPONENT_NAMES) {
    const fn = ajv.getSchema(`${BASE_ID}components/${name}.schema.json`);
    if (!fn) throw new Error(`dsl-schemas/components/${name}.schema.json is missing`);
    params.set(name, fn);
  }
  compiled = { canvas, params, schemas, userAjv: new Ajv({ allErrors: false, strict: false }) };
  return compiled;
}

/** The JSON Schema of a component's params (as stored in dsl-schemas/components/). */
export function componentSchema(name: ComponentName): JsonSchema {
  const schema = load().schemas.get(name);
  if (!schema) throw new Error(`no schema for component '${name}'`);
  return schema;
}

/** Whether `name` is a component Cairn runs. */
export function isComponentName(name: unknown): name is ComponentName {
  return typeof name === 'string' && (COMPONENT_NAMES as readonly string[]).includes(name);
}

/**
 * A copy of `params` with the top-level defaults of the component's schema (and of the schemas it
 * extends) filled in where a key is missing. The stored DSL is never changed: this is for readers.
 */
export function withDefaults(name: ComponentName, params: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...params };
  const visit = (schema: JsonSchema | undefined, from: string): void => {
    if (!schema) return;
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const [key, prop] of Object.entries(props)) {
      if (!(key in out) && prop && 'default' in prop) out[key] = structuredClone(prop.default);
    }
    for (const part of (schema.allOf ?? []) as JsonSchema[]) visit(resolveLocalRef(part, from), from);
  };
  visit(componentSchema(name), `${name}.schema.json`);
  return out;
}

/** Follows `$ref`s between our own schema files ("common.schema.json#/definitions/x", "LLM.schema.json"). */
function resolveLocalRef(schema: JsonSchema, _from: string): JsonSchema | undefined {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const [file, pointer] = ref.split('#');
  const base = file ? load().schemas.get(file.replace(/\.schema\.json$/, '')) : undefined;
  if (!base) return undefined;
  if (!pointer) return base;
  let cur: unknown = base;
  for (const seg of pointer.split('/').filter(Boolean)) cur = (cur as Record<string, unknown> | undefined)?.[seg];
  return cur as JsonSchema | undefined;
}


/** `/prompts/0/role` -> `prompts[0].role`; odd keys quoted: `category_description["Negative review "].to`. */
export function paramPath(segments: (string | number)[]): string {
  let out = '';
  for (const seg of segments) {
    if (typeof seg === 'number' || /^\d+$/.test(seg)) out += `[${seg}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

function pointerSegments(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function article(type: string | string[]): string {
  const t = Array.isArray(type) ? type.join(' or ') : type;
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}

/** One ajv error as `param 'x' must ...` (what follows the component prefix). */
export function describeParamError(e: ErrorObject, prefix: (string | number)[] = []): { param: string; text: string } {
  const segs = [...prefix, ...pointerSegments(e.instancePath)];
  let text: string;
  switch (e.keyword) {
    case 'required':
      segs.push(String(e.params.missingProperty));
      text = 'is required';
      break;
    case 'enum':
      text = `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
      break;
    case 'type':
      text = `must be ${article(e.params.type as string | string[])}`;
      break;
    case 'pattern': {
      const parent = (e.parentSchema ?? {}) as JsonSchema;
      if ('minimum' in parent || 'maximum' in parent) {
        const lo = parent.minimum;
        const hi = parent.maximum;
        text = hi === undefined ? `must be a number >= ${lo}` : `must be a number between ${lo} and ${hi}`;
      } else {
        text = `must match ${String(e.params.pattern)}`;
      }
      break;
    }
    case 'minItems':
      text = Number(e.params.limit) === 1 ? 'must not be empty' : (e.message ?? 'is invalid');
      break;
    case 'minLength':
      text = Number(e.params.limit) === 1 ? 'must not be empty' : (e.message ?? 'is invalid');
      break;
    case 'minProperties':
      text = Number(e.params.limit) === 1 ? 'must not be empty' : (e.message ?? 'is invalid');
      break;
    case 'propertyNames':
      text = 'must not have an empty key';
      break;
    default:
      text = e.message ?? 'is invalid';
  }
  // `propertyNames` reports the offending key in params; other errors already point at the value.
  return { param: paramPath(segs) || '(params)', text };
}

function firstError(fn: ValidateFunction): ErrorObject {
  const errors = fn.errors ?? [];
  // propertyNames errors come with a nested error about the key; the outer one reads better.
  return errors.find((e) => e.keyword === 'propertyNames') ?? errors[0]!;
}

/** The error of a DSL whose top-level shape (canvas.schema.json, checked by `fn`) is wrong. */
export function canvasShapeError(fn: ValidateFunction): DslError {
  const e = firstError(fn);
  const segs = pointerSegments(e.instancePath);
  if (segs[0] === 'components' && segs.length >= 2) {
    const id = segs[1]!;
    if (segs.length === 2) return new DslError(`Component '${id}' ${describeParamError({ ...e, instancePath: '' }).text}`, id);
    const { param, text } = describeParamError({ ...e, instancePath: '/' + segs.slice(2).join('/') });
    return new DslError(`Component '${id}': '${param}' ${text}`, id);
  }
  const { param, text } = describeParamError(e);
  return new DslError(param === '(params)' ? `dsl ${text}` : `dsl.${param} ${text}`);
}

/**
 * Validates a canvas DSL and returns a copy with the missing run-state defaults filled: globals
 * `sys.query` "", `sys.user_id` "", `sys.conversation_turns` 0, `sys.files` [], `sys.history` [],
 * `env.<name>` from `variables`; `variables` {}, `history` [], `path` [], `retrieval` [] (an old single
 * bucket object becomes []); each component's `downstream` / `upstream` [] and `params` {}.
 * Component params are NOT filled with their defaults (the stored DSL stays as the user wrote it; see
 * `withDefaults`). Throws a DslError naming the component and the param.
 */
export function validateDsl(dsl: unknown): CanvasDsl {
  const { canvas } = load();
  if (!isRecord(dsl)) throw new DslError('dsl must be an object');
  if (!canvas(dsl)) throw canvasShapeError(canvas);
  const out = structuredClone(dsl) as Record<string, unknown>;
  const components = out.components as Record<string, Record<string, unknown>>;

  if (!components.begin) throw new DslError("dsl.components has no 'begin' component: the entry component's id must be 'begin'", 'begin');

  for (const [id, cpn] of Object.entries(components)) {
    const obj = cpn.obj as Record<string, unknown>;
    const name = obj.component_name;
    const external = isExternalComponent(name);
    if (!isComponentName(name) && !external) throw new DslError(`Component '${id}': unknown component '${String(name)}'`, id);
    if (obj.params === undefined) obj.params = {};
    cpn.downstream ??= [];
    cpn.upstream ??= [];
    // An external component's params are its service's: kept as given; it fails when it runs.
    if (!external) validateParams(id, name, obj.params as Record<string, unknown>, []);
  }

  const begin = (components.begin.obj as Record<string, unknown>).component_name;
  if (begin !== 'Begin') throw new DslError(`Component 'begin' (${String(begin)}): the component with id 'begin' must be a Begin`, 'begin');

  for (const [id, cpn] of Object.entries(components)) checkIds(id, cpn, components);

  fillDefaults(out);
  return out as CanvasDsl;
}

/** Validates one component's params (and, for an Agent, each tool's params against that tool's schema). */
function validateParams(id: string, name: ComponentName, params: Record<string, unknown>, toolPath: (string | number)[], ownerName: ComponentName = name): void {
  const fn = load().params.get(name)!;
  const label = `Component '${id}' (${ownerName})`;
  if (!fn(params)) {
    const { param, text } = describeParamError(firstError(fn), toolPath);
    throw new DslError(`${label}: param '${param}' ${text}`, id, param);
  }
  const structured = isRecord(params.outputs) ? params.outputs.structured : undefined;
  if (isRecord(structured) && (name === 'LLM' || name === 'Agent')) {
    const schema = isRecord(structured.schema) ? structured.schema : structured;
    const user = stripValue(schema);
    try {
      load().userAjv.compile(user);
    } catch (err) {
      const param = paramPath([...toolPath, 'outputs', 'structured']);
      throw new DslError(`${label}: param '${param}' is not a valid JSON Schema: ${(err as Error).message}`, id, param);
    } finally {
      load().userAjv.removeSchema(user);
    }
  }
  if (name === 'Agent' && Array.isArray(params.tools)) {
    for (const [i, tool] of (params.tools as Record<string, unknown>[]).entries()) {
      const toolName = tool.component_name;
      const at = [...toolPath, 'tools', i];
      if (isExternalComponent(toolName)) continue;
      if (!(TOOL_NAMES as readonly string[]).includes(String(toolName))) {
        const param = paramPath([...at, 'component_name']);
        throw new DslError(`${label}: param '${param}': unknown tool '${String(toolName)}' (Cairn's agents can use ${TOOL_NAMES.join(', ')}, the tools of MCP servers (param 'mcp'), and RAGFlow's tools that need an outside service, which answer with an error)`, id, param);
      }
      validateParams(id, toolName as ComponentName, toolParamsToCheck(toolName as ComponentName, isRecord(tool.params) ? tool.params : {}), [...at, 'params'], ownerName);
    }
  }
}

/**
 * A tool's params as its component's schema checks them. CodeExec as a tool gets its script from the
 * model's call (RAGFlow's `execute_code` function), so the tool needs none of its own (RAGFlow's
 * data_analysis_beginner_assistant gives it `{}`); a script it does give is checked as usual.
 */
function toolParamsToCheck(name: ComponentName, params: Record<string, unknown>): Record<string, unknown> {
  if (name === 'CodeExec' && params.script === undefined) return { ...params, script: 'written by the model' };
  return params;
}

/** A stored run snapshot puts the parsed answer into `outputs.structured.value`: not part of the schema. */
function stripValue(schema: Record<string, unknown>): Record<string, unknown> {
  const { value: _value, $id: _id, ...rest } = schema;
  return rest;
}

/** Every id a component names must be a component of the canvas. */
function checkIds(id: string, cpn: Record<string, unknown>, components: Record<string, unknown>): void {
  const obj = cpn.obj as { component_name: string; params: Record<string, unknown> };
  const label = `Component '${id}' (${obj.component_name})`;
  const check = (ids: unknown, param: string, what = 'param'): void => {
    if (!Array.isArray(ids)) return;
    for (const ref of ids) {
      if (typeof ref === 'string' && !(ref in components)) {
        throw new DslError(`${label}: ${what} '${param}' refers to unknown component '${ref}'`, id, param);
      }
    }
  };
  check(cpn.downstream, 'downstream', 'field');
  check(cpn.upstream, 'upstream', 'field');
  // A component wired to itself would run again after each run of its own, with nothing to end it:
  // repeating is a Loop's job (RAGFlow's editor draws no such edge either).
  for (const field of ['downstream', 'upstream'] as const) {
    if (Array.isArray(cpn[field]) && (cpn[field] as unknown[]).includes(id)) {
      throw new DslError(`${label}: field '${field}' wires the component to itself; a component cannot follow itself (use a Loop to repeat steps)`, id, field);
    }
  }
  if (typeof cpn.parent_id === 'string' && cpn.parent_id) check([cpn.parent_id], 'parent_id', 'field');
  const p = obj.params;
  check(p.exception_goto, 'exception_goto');
  if (obj.component_name === 'Categorize' && isRecord(p.category_description)) {
    for (const [cat, def] of Object.entries(p.category_description)) {
      if (isRecord(def)) check(def.to, paramPath(['category_description', cat, 'to']));
    }
  }
  if (obj.component_name === 'Switch') {
    if (Array.isArray(p.conditions)) {
      for (const [i, cond] of (p.conditions as unknown[]).entries()) {
        if (isRecord(cond)) check(cond.to, paramPath(['conditions', i, 'to']));
      }
    }
    check(p.end_cpn_ids, 'end_cpn_ids');
  }
}

/** Type default of a conversation variable (RAGFlow `Canvas.reset`). */
export function variableDefault(variable: { type?: unknown; value?: unknown }): unknown {
  if (variable.value !== undefined && variable.value !== null) return variable.value;
  const type = typeof variable.type === 'string' ? variable.type : '';
  if (type === 'number') return 0;
  if (type === 'boolean') return false;
  if (type === 'object') return {};
  if (type.startsWith('array')) return [];
  return '';
}

function fillDefaults(dsl: Record<string, unknown>): void {
  const globals = (isRecord(dsl.globals) ? dsl.globals : {}) as Record<string, unknown>;
  const defaults: Record<string, () => unknown> = {
    'sys.query': () => '',
    'sys.user_id': () => '',
    'sys.conversation_turns': () => 0,
    'sys.files': () => [],
    'sys.history': () => [],
  };
  for (const [key, make] of Object.entries(defaults)) {
    if (globals[key] === undefined || globals[key] === null) globals[key] = make();
  }
  const variables = isRecord(dsl.variables) ? dsl.variables : {}; // [] (some templates) -> {}
  for (const [name, variable] of Object.entries(variables)) {
    const key = name.startsWith('env.') ? name : `env.${name}`;
    if (!(key in globals) && isRecord(variable)) globals[key] = variableDefault(variable);
  }
  dsl.globals = globals;
  dsl.variables = variables;
  if (!Array.isArray(dsl.history)) dsl.history = [];
  if (!Array.isArray(dsl.path)) dsl.path = [];
  if (!Array.isArray(dsl.retrieval)) dsl.retrieval = [];
}
