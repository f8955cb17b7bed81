/**
 * A turn's component steps, rebuilt from its event log for the run record (docs/agents.md, "Runs and
 * replay"): each `node_started` opens a step, the component's next `node_finished` closes it. Pure.
 */
import type { Outputs, ReferenceBucket } from './dsl.js';
import type { ComponentCall, ComponentResult, RunStatus } from './run-types.js';
import { STEP_INPUTS, STEP_REFERENCE, type RunEvent } from '../events/types.js';

export type StepStatus = 'running' | 'finished' | 'failed' | 'paused' | 'cancelled';

export interface RecordedStep {
  component_id: string;
  component_name: string;
  component_type: string;
  status: StepStatus;
  /** A replay took the recorded outputs instead of running it. */
  reused: boolean;
  /** Epoch milliseconds. */
  started_at: number;
  /** Seconds; null when it never finished. */
  duration: number | null;
  inputs: unknown;
  outputs: Outputs;
  error: string | null;
  /** An Agent's tool calls, as RAGFlow's trace lists them. */
  trace: { path: string; tool_name: string; arguments: unknown; result: unknown; elapsed_time: number }[];
  /** The chunks and documents it added to the turn's reference; null when none. */
  reference: ReferenceBucket | null;
}

/** Timing keys the interpreter adds to node_finished outputs: not outputs of the component. */
const TIMING_KEYS = ['_created_time', '_elapsed_time'];

export function componentOutputs(outputs: Outputs): Outputs {
  const out = { ...outputs };
  for (const k of TIMING_KEYS) delete out[k];
  return out;
}

/**
 * The STEP_INPUTS events an I/O call makes: the call as the activity received it, less its routing
 * (`kind`, `id`); a streaming Message's producers (LLM / Agent) each get their own.
 */
export function stepInputEvents(call: ComponentCall): RunEvent[] {
  // A Message's memory write is part of that Message, whose inputs are its template.
  if (call.kind === 'Memory') return [];
  const { kind: _kind, id, ...inputs } = call;
  if (call.kind !== 'Message') return [{ event: STEP_INPUTS, data: { component_id: id, inputs } }];
  const events: RunEvent[] = [{ event: STEP_INPUTS, data: { component_id: id, inputs: { pieces: call.pieces } } }];
  for (const [pid, producer] of Object.entries(call.producers)) {
    const { kind: _k, id: _id, ...rest } = producer;
    events.push({ event: STEP_INPUTS, data: { component_id: pid, inputs: rest } });
  }
  return events;
}

/**
 * The STEP_REFERENCE events of an I/O component's result: one for the component and one for each
 * streamed producer that retrieved something (an Agent's Retrieval tools, a Retrieval component).
 */
export function stepReferenceEvents(id: string, result: ComponentResult): RunEvent[] {
  const found = (r: ReferenceBucket | undefined): r is ReferenceBucket => !!r && (Object.keys(r.chunks).length > 0 || Object.keys(r.doc_aggs).length > 0);
  const events: RunEvent[] = [];
  if (found(result.reference)) events.push({ event: STEP_REFERENCE, data: { component_id: id, reference: result.reference } });
  for (const [pid, p] of Object.entries(result.producers ?? {})) if (found(p.reference)) events.push({ event: STEP_REFERENCE, data: { component_id: pid, reference: p.reference } });
  return events;
}

type NodeData = {
  component_id: string;
  component_name?: string;
  component_type?: string;
  created_at?: number;
  inputs?: unknown;
  outputs?: Outputs;
  error?: string | null;
  elapsed_time?: number;
  reused?: boolean;
  tool_calls?: { tool_name: string; arguments: unknown; result: unknown; elapsed_time: number }[];
};

/** The steps of a run in start order; steps that never finished take the run's end (paused, cancelled, failed). */
export function stepsFromEvents(events: RunEvent[], runStatus: RunStatus): RecordedStep[] {
  const steps: RecordedStep[] = [];
  const open = (id: string) => lastWhere(steps, (s) => s.component_id === id && s.status === 'running');
  for (const { event, data: raw, created_at } of events) {
    const data = raw as NodeData;
    if (event === 'node_started') {
      steps.push({
        component_id: data.component_id,
        component_name: data.component_name ?? data.component_id,
        component_type: data.component_type ?? '',
        status: 'running',
        reused: Boolean(data.reused),
        started_at: (data.created_at ?? created_at ?? 0) * 1000,
        duration: null,
        inputs: null,
        outputs: {},
        error: null,
        trace: [],
        reference: null,
      });
    } else if (event === STEP_INPUTS) {
      const step = open(data.component_id) ?? lastWhere(steps, (s) => s.component_id === data.component_id);
      if (step) step.inputs = data.inputs;
    } else if (event === STEP_REFERENCE) {
      const step = open(data.component_id) ?? lastWhere(steps, (s) => s.component_id === data.component_id);
      // A retried attempt publishes its reference again: the last one is the one the turn kept.
      if (step) step.reference = (raw as { reference: ReferenceBucket }).reference;
    } else if (event === 'node_finished') {
      let step = open(data.component_id);
      if (!step) {
        // A container's end has no start of its own in the batch it ends.
        step = { component_id: data.component_id, component_name: data.component_name ?? data.component_id, component_type: data.component_type ?? '', status: 'running', reused: false, started_at: (data.created_at ?? 0) * 1000, duration: null, inputs: null, outputs: {}, error: null, trace: [], reference: null };
        steps.push(step);
      }
      const created = Number(data.outputs?._created_time);
      if (Number.isFinite(created) && created > 0) step.started_at = Math.round(created * 1000);
      step.status = data.error ? 'failed' : 'finished';
      step.reused = step.reused || Boolean(data.reused);
      step.duration = data.elapsed_time ?? null;
      step.outputs = componentOutputs(data.outputs ?? {});
      step.error = data.error ?? null;
      step.inputs ??= data.inputs ?? {};
      step.trace = (data.tool_calls ?? []).map((c) => ({ path: `${data.component_id}-->${c.tool_name}`, tool_name: c.tool_name, arguments: c.arguments, result: c.result, elapsed_time: c.elapsed_time }));
    }
  }
  // A turn stopped by a newer one (multitask_strategy interrupt / rollback) is a stopped run, as a cancel is.
  const unfinished: StepStatus = runStatus === 'finished' ? 'failed' : runStatus === 'interrupted' || runStatus === 'rolled_back' ? 'cancelled' : runStatus;
  for (const s of steps) if (s.status === 'running') s.status = unfinished;
  return steps;
}

function lastWhere<T>(items: T[], test: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return items[i];
  return undefined;
}
