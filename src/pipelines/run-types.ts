/**
 * What the ingestion workflow and its pipeline steps exchange. Pure types and names: the workflow imports them.
 */
import type { PipelineStep } from './plan.js';

/** A pipeline run of one document: the pipeline as it was when the run started. */
export interface PipelineRun {
  id: string;
  title: string;
  steps: PipelineStep[];
  /** The step to start from (0 unless a rerun names one): the steps before it reuse their stored outputs. */
  fromIndex: number;
}

/** One step of a run, as the step activity gets it. */
export interface PipelineStepInput {
  documentId: string;
  runSeq: number;
  datasetId: string;
  pipelineId: string;
  step: PipelineStep;
  index: number;
  total: number;
  /** Where the step before this one stored its output in this run; absent for the first step run (a rerun reads the last run's). */
  inputKey?: string;
}

/** What a step hands on: counts for the logs; `indexed` once the chunks are in the index. */
export interface PipelineStepOutput {
  counts: Record<string, number>;
  /** Where the step stored its output (the next step's input). */
  outputKey?: string;
  /** After a chunk method's Index step: whether the dataset's RAPTOR job or knowledge graph is to hear of the new chunks. */
  after?: { raptor: boolean; graph: boolean };
  /** Set by the step that stored the chunks (Tokenizer or Compiler): the run is DONE. */
  indexed?: { chunks: number; tokens: number };
  /** What the step could not do, said in the logs (a Compiler's template groups). */
  notes?: string[];
}

/** The activity id of a run's step: the Temporal UI (and the benches) read which step an activity is. */
export function stepActivityId(index: number, step: PipelineStep): string {
  return `${index}:${step.component}:${step.id}`;
}

/** The component of a step's activity, from its id (stepActivityId); undefined for another activity. */
export function stepComponentOf(activityId: string | null | undefined): string | undefined {
  const parts = activityId?.split(':');
  return parts && parts.length >= 3 && /^\d+$/.test(parts[0]!) ? parts[1] : undefined;
}

/**
 * Where a step's output is kept: per document and step, overwritten by each run, so a rerun from a later
 * step reads what the step before it last produced. `prefix` is the dataset's blob prefix.
 */
export function stepOutputKey(prefix: string, documentId: string, index: number, stepId: string): string {
  return `${prefix}/pipeline-steps/${documentId}/${index}-${stepId.replace(/[^A-Za-z0-9_-]/g, '_')}.json`;
}

/** Where all of a document's step outputs live (removed with the document). */
export function stepOutputsPrefix(prefix: string, documentId: string): string {
  return `${prefix}/pipeline-steps/${documentId}`;
}
