/**
 * The inputs of a component debug run (`POST /agents/{id}/components/{cid}/debug`, RAGFlow's
 * `{params: {name: {value}}}`), placed where the component reads them. Pure.
 *
 * A key is a reference the component reads (`Answer:Foo@content`, `sys.query`, `env.x`): its value
 * becomes that output or global. Other keys are the component's own form fields: Begin / UserFillUp
 * fields become the run's inputs; Categorize and Retrieval `query` is the query they search or sort;
 * CodeExec arguments and StringTransform `line` fill the reference they name. A key the component
 * does not take is refused, never ignored. Iteration, Loop and their inner nodes run only inside a walk.
 */
import type { CanvasDsl, RunInputs } from './dsl.js';
import type { AgentRunInput } from './run-types.js';

export class DebugInputError extends Error {}

const CONTAINER_PARTS = new Set(['Iteration', 'IterationItem', 'Loop', 'LoopItem', 'ExitLoop']);
const REF_KEY = /^(?:[A-Za-z0-9_:]+@[A-Za-z0-9_.-]+|(?:sys|env)\.[A-Za-z0-9_.]+)$/i;

export interface DebugSetup {
  canvas: CanvasDsl;
  inputs: RunInputs;
}

/** Sets `ref` to `value` in the canvas: a component's output (a dotted path builds nested objects) or a global. */
function seed(canvas: CanvasDsl, ref: string, value: unknown): void {
  const at = ref.indexOf('@');
  if (at < 0) {
    const lower = ref.toLowerCase();
    canvas.globals[lower.startsWith('sys.') ? `sys.${ref.slice(4)}` : `env.${ref.slice(4)}`] = value;
    return;
  }
  const cid = ref.slice(0, at);
  if (!canvas.components[cid]) throw new DebugInputError(`'${ref}' names component '${cid}', which is not in the agent`);
  const [first, ...rest] = ref.slice(at + 1).split('.');
  const outputs = ((canvas.component_outputs ??= {}) as Record<string, Record<string, unknown>>);
  const nested = rest.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
  outputs[cid] = { ...outputs[cid], [first!]: nested };
}

const bare = (ref: unknown) => (typeof ref === 'string' ? ref.trim().replace(/^\{+\s*/, '').replace(/\s*\}+$/, '') : '');

/** The canvas (a copy) with the debug values in place, and the run's inputs. */
export function debugSetup(dsl: CanvasDsl, componentId: string, params: Record<string, { value?: unknown } | undefined>): DebugSetup {
  const canvas = structuredClone(dsl);
  canvas.component_outputs = {};
  const def = canvas.components[componentId]!;
  const name = def.obj.component_name;
  if (CONTAINER_PARTS.has(name)) throw new DebugInputError(`${name} '${componentId}' runs only as part of the whole agent; debug the components inside it one by one`);
  const componentParams = def.obj.params;
  const inputs: RunInputs = {};
  for (const [key, entry] of Object.entries(params)) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new DebugInputError(`params.${key} must be an object {"value": …}`);
    const value = entry.value;
    if (REF_KEY.test(key)) {
      seed(canvas, key, value);
    } else if (name === 'Begin' || name === 'UserFillUp') {
      inputs[key] = { ...entry };
    } else if ((name === 'Categorize' || name === 'Retrieval') && key === 'query') {
      delete componentParams.query;
      canvas.globals['sys.query'] = value;
    } else if (name === 'CodeExec' && bare((componentParams.arguments as Record<string, unknown> | undefined)?.[key])) {
      seed(canvas, bare((componentParams.arguments as Record<string, unknown>)[key]), value);
    } else if (name === 'StringTransform' && key === 'line' && bare(componentParams.split_ref)) {
      seed(canvas, bare(componentParams.split_ref), value);
    } else {
      throw new DebugInputError(`${name} '${componentId}' takes no input '${key}': give the references it reads (GET …/components/${componentId}/input-form lists them)`);
    }
  }
  return { canvas, inputs };
}

/** The debug workflow's input: a run of the seeded canvas, and the component to run. */
export interface ComponentDebugInput extends AgentRunInput {
  componentId: string;
}
