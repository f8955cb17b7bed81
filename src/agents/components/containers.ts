/**
 * Iteration and Loop containers (RAGFlow's iteration.py / iterationitem.py / loop.py / loopitem.py /
 * exit_loop.py). A container's children carry `parent_id`; each pass starts at its item node
 * (IterationItem / LoopItem), and a child with no downstream leads back to it. PURE: workflow code.
 */
import type { CanvasDsl, Outputs } from '../dsl.js';
import { resolveRef, stripRef, type Scope } from '../refs.js';
import { compare, truthy } from './pure.js';

/** A container's progress, kept in the canvas so a pause inside a pass survives. */
export interface ContainerState {
  /** Passes started so far minus one: -1 before the first. */
  pass: number;
  items?: unknown[];
  collected?: Record<string, unknown[]>;
}

export type ContainerStates = Record<string, ContainerState>;

export function containerStates(canvas: CanvasDsl): ContainerStates {
  canvas.container_state ??= {};
  return canvas.container_state as ContainerStates;
}

/** The container's item node: where each pass starts. */
export function itemNodeOf(canvas: CanvasDsl, containerId: string): string {
  const wanted = canvas.components[containerId]?.obj.component_name === 'Loop' ? 'LoopItem' : 'IterationItem';
  const found = Object.entries(canvas.components).find(([, c]) => c.parent_id === containerId && c.obj.component_name === wanted);
  if (!found) throw new Error(`${containerId} has no ${wanted} child`);
  return found[0];
}

/** Every node inside the container, nested containers' nodes included. */
export function descendantsOf(canvas: CanvasDsl, containerId: string): string[] {
  const direct = Object.entries(canvas.components).filter(([, c]) => c.parent_id === containerId).map(([id]) => id);
  return direct.flatMap((id) => [id, ...descendantsOf(canvas, id)]);
}

/** The nearest enclosing container of the given kind. */
export function enclosing(canvas: CanvasDsl, id: string, kind: 'Loop' | 'Iteration'): string | undefined {
  for (let p = canvas.components[id]?.parent_id; p; p = canvas.components[p]?.parent_id) {
    if (canvas.components[p]?.obj.component_name === kind) return p;
  }
  return undefined;
}

/**
 * `{item}`, `{index}` and `{result}` in the params of an Iteration's children mean the current pass's
 * IterationItem outputs: rewritten once into ordinary references.
 */
export function rewriteIterationAliases(canvas: CanvasDsl): void {
  for (const [id, def] of Object.entries(canvas.components)) {
    const parent = def.parent_id;
    if (!parent || canvas.components[parent]?.obj.component_name !== 'Iteration') continue;
    const item = itemNodeOf(canvas, parent);
    if (item === id) continue;
    def.obj.params = rewrite(def.obj.params, item) as Record<string, unknown>;
  }
}

function rewrite(value: unknown, item: string): unknown {
  if (typeof value === 'string') return value.replace(/\{\s*(item|index|result)\s*\}/g, (_m, k: string) => `{${item}@${k}}`);
  if (Array.isArray(value)) return value.map((v) => rewrite(v, item));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v, item)]));
  return value;
}

/** Starts an Iteration: its list of items, at most `limit.maxItems` of them (CAIRN_AGENT_ITERATION_MAX_ITEMS). */
export function startIteration(params: Record<string, unknown>, scope: Scope, limit: { id: string; maxItems: number }): ContainerState {
  let items = resolveRef(stripRef(String(params.items_ref ?? '')), scope);
  if (typeof items === 'string') {
    try {
      items = JSON.parse(items);
    } catch {
      // not JSON: not a list either
    }
  }
  if (!Array.isArray(items)) throw new Error(`items_ref '${String(params.items_ref)}' must resolve to a list (got ${items === null ? 'null' : typeof items})`);
  if (items.length > limit.maxItems) {
    throw new Error(`Iteration '${limit.id}' has ${items.length} items, which exceeds the limit of ${limit.maxItems} items (setting CAIRN_AGENT_ITERATION_MAX_ITEMS)`);
  }
  const declared = Object.keys((params.outputs as Record<string, unknown>) ?? {});
  return { pass: -1, items, collected: Object.fromEntries(declared.map((k) => [k, []])) };
}

/** After a pass: the Iteration's declared outputs take one more value each. */
export function collectPass(params: Record<string, unknown>, state: ContainerState, scope: Scope): void {
  for (const [name, decl] of Object.entries((params.outputs as Record<string, { ref?: string }>) ?? {})) {
    const ref = decl?.ref;
    (state.collected![name] ??= []).push(ref ? resolveRef(stripRef(ref), scope) : null);
  }
}

/** A Loop's outputs: its loop variables, from constants or references. */
export function loopVariables(params: Record<string, unknown>, scope: Scope): Outputs {
  const defaults: Record<string, unknown> = { number: 0, boolean: false, object: {}, string: '' };
  const out: Outputs = {};
  for (const v of (params.loop_variables as { variable: string; type?: string; input_mode?: string; value?: unknown }[]) ?? []) {
    const type = String(v.type ?? '');
    if (v.input_mode === 'variable' && typeof v.value === 'string' && v.value) out[v.variable] = resolveRef(stripRef(v.value), scope);
    else out[v.variable] = v.value ?? (type.startsWith('array') ? [] : (defaults[type] ?? ''));
  }
  return out;
}

/** Whether a Loop ends after a pass: its termination conditions (and / or), or its maximum count. */
export function loopEnds(params: Record<string, unknown>, state: ContainerState, loopId: string, scope: Scope): boolean {
  const max = Number(params.maximum_loop_count ?? 10) || 10;
  if (state.pass + 1 >= max) return true;
  const conditions = (params.loop_termination_condition as { variable?: string; operator?: string; input_mode?: string; value?: unknown }[]) ?? [];
  if (!conditions.length) return false;
  const results = conditions.map((c) => {
    const name = String(c.variable ?? '');
    const current = /@|^(sys|env)\./i.test(name) ? resolveRef(stripRef(name), scope) : scope.outputs(loopId)?.[name];
    const expected = c.input_mode === 'variable' && typeof c.value === 'string' ? resolveRef(stripRef(c.value), scope) : c.value;
    return compareLoose(current, String(c.operator ?? '='), expected);
  });
  return params.logical_operator === 'or' ? results.some(Boolean) : results.every(Boolean);
}

/** RAGFlow's loop conditions also say `is` / `is not` for equality. */
function compareLoose(input: unknown, operator: string, value: unknown): boolean {
  if (operator === 'is') return compare(input, '=', value);
  if (operator === 'is not') return !compare(input, '=', value);
  if (operator === 'empty') return !truthy(input);
  return compare(input, operator, value);
}
