/**
 * The steps of an ingestion pipeline, in the order they run: what the ingestion workflow interprets.
 * Pure (no I/O): the service builds a plan when a run starts and hands it to the workflow, so a run goes
 * on with the pipeline as it was when it started, whatever is saved meanwhile.
 */
import { isRecord } from '../records.js';
import { PIPELINE_ENTRY_ID, pipelineComponentName, type PipelineComponentName } from './names.js';

/**
 * Cairn's own steps, never in a canvas: a dataset of a chunk method ingests as the pipeline these make
 * (chunkMethodPlan), run by the same workflow and step activity as a canvas's steps.
 */
export type ChunkMethodStep = 'ChunkMethod' | 'Enrichment' | 'Index';

/** One step: a component of the canvas (old names read as their new component), or one of Cairn's own. */
export interface PipelineStep {
  /** The component id in the canvas, e.g. "TokenChunker:Slicer". */
  id: string;
  component: PipelineComponentName | ChunkMethodStep;
  params: Record<string, unknown>;
}

/**
 * A chunk method as a pipeline: the file read and cut by the method in one step in a parser process
 * (`ChunkMethod:<method>`), keywords and questions written by the chat model when parser_config asks for them
 * (`Enrichment:keywords_questions`), and the chunks embedded and indexed (`Index:chunks`), as the built-in
 * parse has always done. The steps run the built-in activities, so chunks and counts are the method's own.
 */
export function chunkMethodPlan(method: string, enrich: { keywords: number; questions: number }): PipelineStep[] {
  const wantsEnrichment = enrich.keywords > 0 || enrich.questions > 0;
  return [
    { id: `ChunkMethod:${method}`, component: 'ChunkMethod', params: {} },
    ...(wantsEnrichment ? [{ id: 'Enrichment:keywords_questions', component: 'Enrichment' as const, params: { ...enrich } }] : []),
    { id: 'Index:chunks', component: 'Index', params: { enriched: wantsEnrichment } },
  ];
}

/** What the steps pass on: nothing yet (the file), the parsed document, or its chunks. */
type Holding = 'file' | 'document' | 'chunks' | 'indexed';

/** What each component takes and hands on (File is the entry and is not a step). */
const FLOW: Record<Exclude<PipelineComponentName, 'File'>, { takes: Holding[]; gives: Holding }> = {
  Parser: { takes: ['file'], gives: 'document' },
  TokenChunker: { takes: ['document'], gives: 'chunks' },
  TitleChunker: { takes: ['document'], gives: 'chunks' },
  Extractor: { takes: ['chunks'], gives: 'chunks' },
  Tokenizer: { takes: ['chunks'], gives: 'indexed' },
  Compiler: { takes: ['chunks', 'indexed'], gives: 'indexed' },
};

const NEEDS: Record<Holding, string> = {
  file: 'the file (it must come right after File)',
  document: 'a parsed document (a Parser before it)',
  chunks: 'chunks (a TokenChunker or TitleChunker before it)',
  indexed: 'indexed chunks',
};

/** A pipeline that cannot run as drawn: the message names the component. */
export class PipelinePlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PipelinePlanError';
  }
}

/**
 * The steps reached from File along `downstream`, in order. A pipeline is a chain: a component with two
 * downstream components would run two ingestions of one document into one set of chunks, which RAGFlow's
 * runner does not define either, so it is refused. Each step must get what it takes (a chunker after a
 * Parser, an Extractor after a chunker...), and the last must store the chunks (a Tokenizer or a Compiler).
 */
export function pipelinePlan(dsl: Record<string, unknown>): PipelineStep[] {
  const components = isRecord(dsl.components) ? dsl.components : {};
  const steps: PipelineStep[] = [];
  let holding: Holding = 'file';
  let id: string | undefined = PIPELINE_ENTRY_ID;
  const seen = new Set<string>();
  while (id !== undefined) {
    if (seen.has(id)) throw new PipelinePlanError(`Component '${id}' is reached twice: a pipeline's steps cannot loop`);
    seen.add(id);
    const node = components[id];
    if (!isRecord(node) || !isRecord(node.obj)) throw new PipelinePlanError(`Component '${id}' is named downstream but is not in the canvas`);
    const component = pipelineComponentName(node.obj.component_name);
    if (!component) throw new PipelinePlanError(`Component '${id}': '${String(node.obj.component_name)}' is not a pipeline component`);
    if (component !== 'File') {
      const flow = FLOW[component];
      if (!flow.takes.includes(holding)) throw new PipelinePlanError(`Component '${id}' (${component}) needs ${NEEDS[flow.takes[0]!]}, but gets ${NEEDS[holding].replace(/ \(.*\)$/, '')}`);
      steps.push({ id, component, params: isRecord(node.obj.params) ? node.obj.params : {} });
      holding = flow.gives;
    }
    const downstream: string[] = Array.isArray(node.downstream) ? node.downstream.filter((d): d is string => typeof d === 'string') : [];
    if (downstream.length > 1) throw new PipelinePlanError(`Component '${id}' has ${downstream.length} downstream components (${downstream.join(', ')}): a pipeline is one chain of steps`);
    id = downstream[0];
  }
  if (steps.length === 0) throw new PipelinePlanError(`The pipeline has no steps after File: connect a Parser to it`);
  if (holding !== 'indexed') {
    const last = steps[steps.length - 1]!;
    throw new PipelinePlanError(`The pipeline ends at '${last.id}' (${last.component}) without storing its chunks: end it with a Tokenizer (the indexer) or a Compiler`);
  }
  return steps;
}

/** The index of the step with this component id, or a PipelinePlanError naming the steps there are. */
export function stepIndex(steps: PipelineStep[], id: string): number {
  const i = steps.findIndex((s) => s.id === id);
  if (i < 0) throw new PipelinePlanError(`The pipeline has no step '${id}': its steps are ${steps.map((s) => s.id).join(', ')}`);
  return i;
}
