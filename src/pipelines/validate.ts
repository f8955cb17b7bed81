/**
 * Validation of an ingestion pipeline canvas (`canvas_category: "dataflow_canvas"`) against
 * `dsl-schemas/pipeline/` (ajv, draft-07), plus what a schema cannot say: the components are pipeline
 * components, the pipeline starts at the component with id `File`, ids name existing components, and
 * the steps do not loop.
 *
 * NOT pure (reads the schema files, uses ajv): the API imports it; workflow code never does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import { canvasShapeError, describeParamError, DslError, paramPath } from '../agents/validate.js';
import { COMPONENT_NAMES } from '../agents/dsl.js';
import { isRecord } from '../records.js';
import { LEGACY_PIPELINE_NAMES, PIPELINE_COMPONENT_NAMES, PIPELINE_ENTRY_ID, pipelineComponentName, type PipelineComponentName } from './names.js';

const SCHEMA_DIR = new URL('../../dsl-schemas/', import.meta.url);
const BASE_ID = 'https://cairn.dev/dsl-schemas/';

interface Compiled {
  canvas: ValidateFunction;
  params: Map<PipelineComponentName, ValidateFunction>;
}

let compiled: Compiled | undefined;

function addDir(ajv: Ajv, dir: URL): void {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.schema.json')).sort()) {
    ajv.addSchema(JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as AnySchema);
  }
}

/** The schemas, loaded once: the pipeline ones refer to the agent components' common and LLM schemas. */
function load(): Compiled {
  if (compiled) return compiled;
  const ajv = new Ajv({ allErrors: false, strict: false, verbose: true });
  addDir(ajv, new URL('components/', SCHEMA_DIR));
  addDir(ajv, new URL('pipeline/', SCHEMA_DIR));
  ajv.addSchema(JSON.parse(readFileSync(new URL('canvas.schema.json', SCHEMA_DIR), 'utf8')) as AnySchema);
  const params = new Map<PipelineComponentName, ValidateFunction>();
  for (const name of PIPELINE_COMPONENT_NAMES) {
    const fn = ajv.getSchema(`${BASE_ID}pipeline/${name}.schema.json`);
    if (!fn) throw new Error(`dsl-schemas/pipeline/${name}.schema.json is missing`);
    params.set(name, fn);
  }
  compiled = { canvas: ajv.getSchema(`${BASE_ID}canvas.schema.json`)!, params };
  return compiled;
}

/** A schema node may carry `x-error`: the text of any error at that node (say, of an `anyOf`). */
function describe(fn: ValidateFunction): { param: string; text: string } {
  const errors = fn.errors ?? [];
  const custom = errors.find((e) => isRecord(e.parentSchema) && typeof e.parentSchema['x-error'] === 'string');
  if (custom) {
    const { param } = describeParamError({ ...custom, keyword: 'x-error' } as ErrorObject);
    return { param, text: (custom.parentSchema as Record<string, unknown>)['x-error'] as string };
  }
  return describeParamError(errors.find((e) => e.keyword === 'propertyNames') ?? errors[0]!);
}

function unknownComponent(id: string, name: unknown): DslError {
  const allowed = `a pipeline's components are ${PIPELINE_COMPONENT_NAMES.join(', ')} (old names: ${Object.keys(LEGACY_PIPELINE_NAMES).join(', ')})`;
  const agentComponent = typeof name === 'string' && (COMPONENT_NAMES as readonly string[]).includes(name);
  const what = agentComponent ? `'${name}' is an agent component, not a pipeline component` : `unknown component '${String(name)}'`;
  return new DslError(`Component '${id}': ${what}: ${allowed}`, id);
}

/**
 * Validates a pipeline DSL. Returns it unchanged: nothing is filled in, so a pipeline is stored,
 * listed and exported exactly as given. Throws a DslError naming the component id and the param.
 */
export function validatePipelineDsl(dsl: unknown): Record<string, unknown> {
  const { canvas, params } = load();
  if (!isRecord(dsl)) throw new DslError('dsl must be an object');
  if (!canvas(dsl)) throw canvasShapeError(canvas);
  const components = dsl.components as Record<string, Record<string, unknown>>;

  const entry = components[PIPELINE_ENTRY_ID];
  if (!entry) throw new DslError(`dsl.components has no '${PIPELINE_ENTRY_ID}' component: a pipeline starts at the File component, whose id must be '${PIPELINE_ENTRY_ID}'`, PIPELINE_ENTRY_ID);

  const names = new Map<string, PipelineComponentName>();
  for (const [id, cpn] of Object.entries(components)) {
    const obj = cpn.obj as Record<string, unknown>;
    const name = pipelineComponentName(obj.component_name);
    if (!name) throw unknownComponent(id, obj.component_name);
    names.set(id, name);
    const given = String(obj.component_name);
    const label = `Component '${id}' (${given === name ? name : `${given}, now ${name}`})`;
    const fn = params.get(name)!;
    if (!fn(obj.params ?? {})) {
      const { param, text } = describe(fn);
      throw new DslError(`${label}: param '${param}' ${text}`, id, param);
    }
  }

  if (names.get(PIPELINE_ENTRY_ID) !== 'File') {
    throw new DslError(`Component '${PIPELINE_ENTRY_ID}' (${names.get(PIPELINE_ENTRY_ID)}): the component with id '${PIPELINE_ENTRY_ID}' must be a File`, PIPELINE_ENTRY_ID);
  }
  for (const [id, name] of names) {
    if (name === 'File' && id !== PIPELINE_ENTRY_ID) throw new DslError(`Component '${id}' (File): a pipeline has one File component, with id '${PIPELINE_ENTRY_ID}'`, id);
  }
  const upstream = entry.upstream;
  if (Array.isArray(upstream) && upstream.length) {
    throw new DslError(`Component '${PIPELINE_ENTRY_ID}' (File): field 'upstream' must be empty: a pipeline starts at File`, PIPELINE_ENTRY_ID, 'upstream');
  }

  for (const [id, cpn] of Object.entries(components)) checkIds(id, names.get(id)!, cpn, components);
  checkNoLoop(components, names);
  return dsl;
}

/** Every id a component names must be a component of the canvas. */
function checkIds(id: string, name: PipelineComponentName, cpn: Record<string, unknown>, components: Record<string, unknown>): void {
  const check = (ids: unknown, param: string, what: string): void => {
    if (!Array.isArray(ids)) return;
    for (const ref of ids) {
      if (typeof ref === 'string' && !(ref in components)) {
        throw new DslError(`Component '${id}' (${name}): ${what} '${param}' refers to unknown component '${ref}'`, id, param);
      }
    }
  };
  check(cpn.downstream, 'downstream', 'field');
  check(cpn.upstream, 'upstream', 'field');
  if (typeof cpn.parent_id === 'string' && cpn.parent_id) check([cpn.parent_id], 'parent_id', 'field');
  const params = (cpn.obj as { params?: Record<string, unknown> }).params ?? {};
  check(params.exception_goto, paramPath(['exception_goto']), 'param');
}

/** The steps run along `downstream` from File; a component reached again would run forever. */
function checkNoLoop(components: Record<string, Record<string, unknown>>, names: Map<string, PipelineComponentName>): void {
  const state = new Map<string, 'open' | 'done'>();
  const visit = (id: string): void => {
    state.set(id, 'open');
    for (const next of (components[id]!.downstream as string[] | undefined) ?? []) {
      if (state.get(next) === 'open') {
        throw new DslError(`Component '${id}' (${names.get(id)}): field 'downstream' leads back to '${next}': a pipeline's steps must not loop`, id, 'downstream');
      }
      if (!state.has(next)) visit(next);
    }
    state.set(id, 'done');
  };
  for (const id of Object.keys(components)) if (!state.has(id)) visit(id);
}
