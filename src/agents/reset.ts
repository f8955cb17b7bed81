import type { CanvasDsl } from './dsl.js';

/**
 * RAGFlow's `Canvas.reset()`: the DSL without its run state. History, path, reference buckets and every
 * component's outputs go; each `sys.*` global goes back to the empty value of its type; each `env.*`
 * back to its conversation variable's declared value (the type's empty value when none). Pure.
 */
export function resetCanvas(dsl: CanvasDsl): CanvasDsl {
  const canvas = structuredClone(dsl);
  const globals: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(canvas.globals ?? {})) {
    if (key.startsWith('sys.')) globals[key] = emptyLike(value);
    else if (key.startsWith('env.')) globals[key] = variableDefault(canvas.variables?.[key.slice(4)], value);
    else globals[key] = value;
  }
  canvas.globals = globals;
  canvas.history = [];
  canvas.path = [];
  canvas.retrieval = [];
  canvas.memory = [];
  canvas.component_outputs = {};
  delete canvas.container_state;
  delete canvas.paused;
  return canvas;
}

function emptyLike(value: unknown): unknown {
  if (typeof value === 'string') return '';
  if (typeof value === 'number') return 0;
  if (Array.isArray(value)) return [];
  if (value !== null && typeof value === 'object') return {};
  return null;
}

function variableDefault(variable: { type?: string; value?: unknown } | undefined, current: unknown): unknown {
  if (!variable) return current;
  if (variable.value !== undefined && variable.value !== null) return variable.value;
  const type = String(variable.type ?? '');
  if (type === 'number') return 0;
  if (type === 'boolean') return false;
  if (type === 'object') return {};
  return type.startsWith('array') ? [] : '';
}
