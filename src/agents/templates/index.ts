/**
 * Cairn's agent templates: one JSON file per template in this directory (and the ingestion pipelines' in
 * src/pipelines/templates/), in RAGFlow's template format
 * (`agent/templates/*.json`): `{id, title: {en, de, zh}, description: {…}, canvas_type, avatar?, dsl}`,
 * the DSL complete with its editor `graph`. Every template runs with a chat model and datasets, or a memory
 * (assistant_with_memory).
 *
 * NOT pure (reads files): the API imports it; workflow code never does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isRecord } from '../../records.js';

export interface AgentTemplate {
  id: string;
  /** Language code -> text; `en` is always there. */
  title: Record<string, string>;
  description: Record<string, string>;
  /** RAGFlow's template category ("Recommended", "Customer Support", "Agent", …). */
  canvas_type: string;
  /** agent_canvas, or dataflow_canvas for the ingestion pipelines (src/pipelines/templates/). */
  canvas_category: 'agent_canvas' | 'dataflow_canvas';
  avatar?: string;
  dsl: Record<string, unknown>;
}

const AGENT_DIR = new URL('./', import.meta.url);
const PIPELINE_DIR = new URL('../../pipelines/templates/', import.meta.url);

let loaded: AgentTemplate[] | undefined;


function texts(v: unknown, what: string, file: string): Record<string, string> {
  if (!isRecord(v) || typeof v.en !== 'string' || !v.en) throw new Error(`agent template ${file}: ${what}.en is missing`);
  return v as Record<string, string>;
}

/** Reads one template file; a malformed file is a programming error, so it throws. */
function read(dir: URL, file: string): AgentTemplate {
  const raw: unknown = JSON.parse(readFileSync(new URL(file, dir), 'utf8'));
  if (!isRecord(raw)) throw new Error(`agent template ${file}: not an object`);
  const id = raw.id;
  if (typeof id !== 'string' || `${id}.json` !== file) throw new Error(`agent template ${file}: its id must be the file name without .json`);
  if (!isRecord(raw.dsl) || !isRecord(raw.dsl.components)) throw new Error(`agent template ${file}: dsl.components is missing`);
  const template: AgentTemplate = {
    id,
    title: texts(raw.title, 'title', file),
    description: texts(raw.description, 'description', file),
    canvas_type: typeof raw.canvas_type === 'string' ? raw.canvas_type : 'Other',
    canvas_category: raw.canvas_category === 'dataflow_canvas' ? 'dataflow_canvas' : 'agent_canvas',
    dsl: raw.dsl,
  };
  if (typeof raw.avatar === 'string' && raw.avatar) template.avatar = raw.avatar;
  return template;
}

const readDir = (dir: URL) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => read(dir, f));

/**
 * Every template, the agents' ordered by id, then the ingestion pipelines' (src/pipelines/templates/); read
 * once. Callers get copies, so nobody changes the cached ones.
 */
export function agentTemplates(): AgentTemplate[] {
  loaded ??= [...readDir(AGENT_DIR), ...readDir(PIPELINE_DIR)];
  return structuredClone(loaded);
}

/** One template (a copy), or undefined. */
export function agentTemplate(id: string): AgentTemplate | undefined {
  return agentTemplates().find((t) => t.id === id);
}

/**
 * The template's DSL with `datasetIds` as the `kb_ids` of every Retrieval: Retrieval components, the
 * Retrieval tools of Agents (and of sub-Agent tools, at any depth), and the same params in the editor
 * graph's node forms, so the editor shows what runs. Without `datasetIds` the DSL is the template's.
 */
export function templateDsl(template: AgentTemplate, datasetIds?: string[]): Record<string, unknown> {
  const dsl = structuredClone(template.dsl);
  if (!datasetIds) return dsl;
  const setIds = (params: Record<string, unknown>) => {
    params.kb_ids = [...datasetIds];
    if ('dataset_ids' in params) params.dataset_ids = [...datasetIds];
  };
  const fillTools = (params: Record<string, unknown>) => {
    for (const tool of Array.isArray(params.tools) ? params.tools : []) {
      if (!isRecord(tool)) continue;
      if (!isRecord(tool.params)) tool.params = {};
      if (tool.component_name === 'Retrieval') setIds(tool.params as Record<string, unknown>);
      else if (tool.component_name === 'Agent') fillTools(tool.params as Record<string, unknown>);
    }
  };
  const fill = (name: unknown, params: unknown) => {
    if (!isRecord(params)) return;
    if (name === 'Retrieval') setIds(params);
    else if (name === 'Agent') fillTools(params);
  };
  for (const component of Object.values(dsl.components as Record<string, unknown>)) {
    if (isRecord(component) && isRecord(component.obj)) fill(component.obj.component_name, component.obj.params);
  }
  const graph = dsl.graph;
  for (const node of isRecord(graph) && Array.isArray(graph.nodes) ? graph.nodes : []) {
    if (isRecord(node) && isRecord(node.data)) fill(node.data.label, node.data.form);
  }
  return dsl;
}
