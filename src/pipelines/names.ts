/**
 * The names of an ingestion pipeline canvas (RAGFlow's "dataflow canvas"). Pure: importable anywhere.
 *
 * A pipeline is stored on the agents routes like an agent canvas, with `canvas_category` set to
 * `dataflow_canvas`; its components are these, not the agent components.
 */

export const AGENT_CANVAS = 'agent_canvas';
export const DATAFLOW_CANVAS = 'dataflow_canvas';
export const CANVAS_CATEGORIES = [AGENT_CANVAS, DATAFLOW_CANVAS] as const;

/** The components a pipeline may hold (RAGFlow's rag/flow/), each with a schema in dsl-schemas/pipeline/. */
export const PIPELINE_COMPONENT_NAMES = ['File', 'Parser', 'TokenChunker', 'TitleChunker', 'Extractor', 'Tokenizer', 'Compiler'] as const;
export type PipelineComponentName = (typeof PIPELINE_COMPONENT_NAMES)[number];

/** Old component names RAGFlow still loads (agent/dsl_migration.py), and the component each now is. */
export const LEGACY_PIPELINE_NAMES: Readonly<Record<string, PipelineComponentName>> = {
  Splitter: 'TokenChunker',
  HierarchicalMerger: 'TitleChunker',
};

/** A pipeline starts at the component with this id, a File (RAGFlow's pipeline runner starts at "File"). */
export const PIPELINE_ENTRY_ID = 'File';

/** The pipeline component a `component_name` is (an old name gives its new one), or undefined. */
export function pipelineComponentName(name: unknown): PipelineComponentName | undefined {
  if (typeof name !== 'string') return undefined;
  if ((PIPELINE_COMPONENT_NAMES as readonly string[]).includes(name)) return name as PipelineComponentName;
  return LEGACY_PIPELINE_NAMES[name];
}
