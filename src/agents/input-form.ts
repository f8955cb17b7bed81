/**
 * RAGFlow's component input form (`Canvas.get_component_input_form`): what a component reads, as the
 * editor's "run this component" dialog asks for it. Keys are what `POST …/components/{cid}/debug`
 * takes in `params`. Pure.
 *
 * Per component, as RAGFlow: Begin / UserFillUp their `inputs`; LLM and Agent the references in their
 * prompts (an Agent's sub-agents' too), `{ref: {type: "line", name}}` where `name` is the node's name
 * and the variable (`Answer@content`) or the global itself; Categorize and Retrieval `query`;
 * Iteration, Loop and VariableAssigner `items`; Invoke its variables' references; DataOperations its
 * `query` references; StringTransform `line` (split) or its script's references; CodeExec its
 * arguments; Switch `urls`; VariableAggregator `variables`; ListOperations nothing. A Message (RAGFlow
 * has no form for it and fails) lists the references of its content.
 */
import type { CanvasDsl, ComponentDef } from './dsl.js';
import { splitTemplate } from './refs.js';

export type InputForm = Record<string, { type: string; name: string; [k: string]: unknown }>;

/** The editor's node names by component id (from `graph.nodes`). */
export function nodeNames(dsl: CanvasDsl): Record<string, string> {
  const names: Record<string, string> = {};
  const nodes = (dsl.graph as { nodes?: { id?: string; data?: { name?: string } }[] } | undefined)?.nodes ?? [];
  for (const n of nodes) if (n?.id && n.data?.name) names[n.id] = n.data.name;
  return names;
}

/** The references in `texts`, each as a form line named as RAGFlow names it. */
function refLines(texts: unknown[], names: Record<string, string>): InputForm {
  const form: InputForm = {};
  for (const text of texts) {
    if (typeof text !== 'string') continue;
    for (const piece of splitTemplate(text)) {
      if (!('ref' in piece) || piece.ref in form) continue;
      const at = piece.ref.indexOf('@');
      const name = at > 0 ? `${names[piece.ref.slice(0, at)] ?? ''}@${piece.ref.slice(at + 1)}` : piece.ref;
      form[piece.ref] = { type: 'line', name };
    }
  }
  return form;
}

function promptTexts(params: Record<string, unknown>): unknown[] {
  const prompts = typeof params.prompts === 'string' ? [{ content: params.prompts }] : Array.isArray(params.prompts) ? params.prompts : [];
  return [params.sys_prompt, params.user_prompt, ...prompts.map((p: { content?: unknown }) => p?.content)];
}

const FIXED: Record<string, InputForm> = {
  Categorize: { query: { type: 'line', name: 'Query' } },
  Retrieval: { query: { type: 'line', name: 'Query' } },
  Iteration: { items: { type: 'json', name: 'Items' } },
  Loop: { items: { type: 'json', name: 'Items' } },
  VariableAssigner: { items: { type: 'json', name: 'Items' } },
  Switch: { urls: { type: 'line', name: 'URLs' } },
  VariableAggregator: { variables: { type: 'list', name: 'Variables' } },
  ListOperations: {},
};

export function componentInputForm(def: ComponentDef, names: Record<string, string>): InputForm {
  const name = def.obj.component_name;
  const params = def.obj.params ?? {};
  if (FIXED[name]) return structuredClone(FIXED[name]);
  switch (name) {
    case 'Begin':
    case 'UserFillUp':
      return structuredClone((params.inputs ?? {}) as InputForm);
    case 'LLM':
      return refLines(promptTexts(params), names);
    case 'Agent': {
      const tools = (Array.isArray(params.tools) ? params.tools : []) as { component_name?: string; params?: Record<string, unknown> }[];
      const subAgents = tools.filter((t) => t?.component_name === 'Agent').flatMap((t) => promptTexts(t.params ?? {}));
      return refLines([...promptTexts(params), ...subAgents], names);
    }
    case 'Invoke':
      return refLines(((params.variables ?? []) as { ref?: string }[]).map((v) => (v?.ref ? `{${v.ref}}` : undefined)), names);
    case 'DataOperations':
      return refLines((Array.isArray(params.query) ? params.query : [params.query]).map((q) => (typeof q === 'string' && !q.includes('{') ? `{${q}}` : q)), names);
    case 'StringTransform':
      return params.method === 'split' ? { line: { type: 'line', name: 'String' } } : refLines([params.script], names);
    case 'CodeExec':
      return Object.fromEntries(Object.keys((params.arguments ?? {}) as object).map((k) => [k, { type: 'line', name: k }]));
    case 'Message':
      return refLines(Array.isArray(params.content) ? params.content : [params.content], names);
    default:
      return {};
  }
}
