/**
 * The canvas interpreter: walks a RAGFlow canvas the way RAGFlow's `Canvas._run_impl` does, in
 * batches along `downstream`, deciding the next batch after each. Pure and deterministic: it runs as
 * Temporal workflow code, with I/O components handed to an Executor (activities in the workflow, fakes
 * in unit tests). Pure components (Begin, UserFillUp, Switch, VariableAggregator, a Message without a
 * streaming producer) run right here.
 */
import type { CanvasDsl, ComponentDef, Outputs, ReferenceBucket } from './dsl.js';
import { ERROR_OUTPUT, NEXT_OUTPUT } from './dsl.js';
import type { RunEvent } from '../events/types.js';
import { RUN_ERROR, STEP_REFERENCE } from '../events/types.js';
import type {
  AgentRunInput,
  ComponentCall,
  ComponentResult,
  MessagePiece,
  ModelCall,
  ModelSettings,
  PromptMessage,
  ToolDef,
  TurnOutcome,
  Usage,
  CanvasLimits,
} from './run-types.js';
import { componentFailureMessage, isInternalError, type RunFailure } from './run-failure.js';
import { referencedComponents, renderTemplate, resolveParam, resolveRef, splitTemplate, type Scope } from './refs.js';
import { aggregateVariables, beginOutputs, categorizePrompt, evaluateSwitch, fillUp, pickTemplate } from './components/pure.js';
import { externalComponentError, isExternalComponent } from './external.js';
import { dataImages, placesFiles, splitFiles, uniqueImages, withoutDataImages } from './prompt-images.js';
import { applyAssignment, assignVariables, dataOperations, listOperations, stringTransform } from './components/transforms.js';
import {
  collectPass,
  containerStates,
  descendantsOf,
  enclosing,
  itemNodeOf,
  loopEnds,
  loopVariables,
  rewriteIterationAliases,
  startIteration,
} from './components/containers.js';

export interface CallOptions {
  timeoutSec: number;
  maxRetries: number;
  delayAfterErrorSec: number;
  stream: boolean;
}

export interface Executor {
  call(call: ComponentCall, options: CallOptions): Promise<ComponentResult>;
  emit(events: RunEvent[]): void;
  /** Epoch milliseconds (workflow time in a workflow). */
  now(): number;
  /** In [0, 1) (deterministic in a workflow). */
  random(): number;
  /** Errors that must end the run rather than fail one component (a workflow's cancellation). */
  isFatal?(err: unknown): boolean;
  /** Errors of the machinery rather than of the component (an activity Temporal gave up on: its worker was lost). */
  isInternal?(err: unknown): boolean;
}

/** RAGFlow's per-class defaults (agent/component/*.py), in seconds. */
const DEFAULT_TIMEOUT: Record<string, number> = { Retrieval: 12, Agent: 20 * 60, LLM: 10 * 60, Categorize: 10 * 60, Message: 20 * 60, CodeExec: 10 * 60 };
const MODEL_COMPONENTS = new Set(['LLM', 'Agent']);
const IO_COMPONENTS = new Set(['LLM', 'Agent', 'Retrieval', 'Categorize', 'Invoke', 'CodeExec']);
/**
 * The walk limits when the run input carries none (CAIRN_AGENT_MAX_STEPS, CAIRN_AGENT_ITERATION_MAX_ITEMS;
 * the defaults live here, as workflow code cannot read settings).
 */
export const DEFAULT_CANVAS_LIMITS: CanvasLimits = { maxSteps: 10_000, iterationMaxItems: 200 };
const CONTAINERS = new Set(['Iteration', 'Loop']);
/**
 * Components a replay always runs anew, even before its `from_component`: Begin (a replay's `inputs`
 * reach it), UserFillUp (it pauses), VariableAssigner (its effect is the variables it writes, not
 * outputs), and containers with their children (each pass depends on the one before).
 */
const NEVER_REUSED = new Set(['Begin', 'UserFillUp', 'VariableAssigner', 'Iteration', 'IterationItem', 'Loop', 'LoopItem', 'ExitLoop']);

/** A pure component's result may say where the walk goes, or that it ended a container. */
interface StepResult extends ComponentResult {
  next?: string[];
  /** A Message's writes to memories: each memory's message id or error. */
  memoryWrites?: unknown[];
  /** The container (Iteration / Loop) this step finished. */
  containerDone?: string;
  /** A replay took the recorded outputs instead of running the component. */
  reused?: boolean;
}

export function emptyBucket(): ReferenceBucket {
  return { chunks: {}, doc_aggs: {} };
}

/** The run's outputs live beside the DSL, so the stored canvas is the snapshot the next turn starts from. */
function outputsOf(canvas: CanvasDsl): Record<string, Outputs> {
  canvas.component_outputs ??= {};
  return canvas.component_outputs as Record<string, Outputs>;
}

export async function runCanvas(input: AgentRunInput, exec: Executor): Promise<TurnOutcome> {
  return new CanvasRun(input, exec).run();
}

/**
 * Runs one component of the canvas by itself, against the outputs and globals already in the canvas
 * (the component debug route): no walk, no streaming into a Message, no writes to memories.
 */
export async function runComponentAlone(input: AgentRunInput, componentId: string, exec: Executor): Promise<ComponentResult> {
  return new CanvasRun(input, exec).runAlone(componentId);
}

class CanvasRun {
  private readonly canvas: CanvasDsl;
  private readonly outputs: Record<string, Outputs>;
  private readonly usage: Usage = { prompt_tokens: 0, completion_tokens: 0, calls: 0 };
  private readonly startedMs: number;
  private readonly deferred = new Map<string, ModelCall & { kind: 'LLM' | 'Agent' }>();
  private answer = '';
  private lastOutputs: Outputs = {};
  private steps = 0;
  private readonly startedAt: Record<string, number> = {};
  /** Running one component by itself (runAlone). */
  private alone = false;
  /** The container whose pass the walk is in, for a spent step budget's message. */
  private inPass?: string;

  constructor(
    private readonly input: AgentRunInput,
    private readonly exec: Executor,
  ) {
    this.canvas = input.canvas;
    this.outputs = outputsOf(this.canvas);
    this.startedMs = exec.now();
  }

  private get bucket(): ReferenceBucket {
    if (!this.canvas.retrieval.length) this.canvas.retrieval.push(emptyBucket());
    return this.canvas.retrieval[this.canvas.retrieval.length - 1]!;
  }

  private scope(): Scope {
    return { outputs: (id) => (this.canvas.components[id] ? (this.outputs[id] ?? {}) : undefined), globals: this.canvas.globals };
  }

  private emit(event: string, data: unknown): void {
    this.exec.emit([{ event, data, created_at: Math.floor(this.exec.now() / 1000) }]);
  }

  async run(): Promise<TurnOutcome> {
    const { canvas, input } = this;
    const { request } = input;
    const g = canvas.globals;
    g['sys.date'] = new Date(this.startedMs).toISOString().slice(0, 19).replace('T', ' ');
    g['sys.query'] = request.query;
    g['sys.user_id'] = request.userId;
    g['sys.files'] = request.files;
    if (request.chatTemplateKwargs) g['sys.chat_template_kwargs'] = request.chatTemplateKwargs;
    g['sys.conversation_turns'] = Number(g['sys.conversation_turns'] ?? 0) + 1;
    if (request.query) canvas.history.push(['user', request.query]);

    rewriteIterationAliases(canvas);
    const resumeAt = canvas.path[0];
    const resuming = resumeAt !== undefined && canvas.components[resumeAt]?.obj.component_name === 'UserFillUp' && canvas.paused === true;
    if (!resuming) {
      for (const key of Object.keys(this.outputs)) delete this.outputs[key];
      canvas.container_state = {};
      this.resetEnv();
      canvas.path = ['begin'];
      canvas.retrieval.push(emptyBucket());
      this.emit('workflow_started', { inputs: request.inputs });
    } else {
      canvas.path = [resumeAt];
    }
    canvas.paused = false;

    let idx = 0;
    while (idx < canvas.path.length) {
      const batch = canvas.path.slice(idx);
      idx = canvas.path.length;
      const runnable = batch.filter((id) => this.ready(id));
      for (const id of runnable) this.nodeStarted(id);
      const results = await this.runBatch(runnable, resuming && idx === 1);
      for (const [i, id] of runnable.entries()) {
        const outcome = this.afterComponent(id, results[i]!);
        if (outcome) return this.finish(outcome.status, outcome.error);
      }
      const paused = this.pauseIfWaiting(idx);
      if (paused) return paused;
      if (++this.steps > this.limits.maxSteps) return this.finish('failed', this.stepBudgetSpent());
    }
    return this.finish('finished');
  }

  async runAlone(id: string): Promise<ComponentResult> {
    this.alone = true;
    const result = await this.runOne(id, this.def(id).obj.component_name === 'UserFillUp');
    return { outputs: result.outputs, error: result.error, usage: result.usage, reference: result.reference, trace: result.trace };
  }

  /** Conversation variables start each (non-resumed) turn from their declared value. */
  private resetEnv(): void {
    const defaults: Record<string, unknown> = { number: 0, boolean: false, object: {} };
    for (const [name, v] of Object.entries(this.canvas.variables ?? {})) {
      const type = String(v.type ?? '');
      this.canvas.globals[`env.${name}`] = v.value ?? (type.startsWith('array') ? [] : (defaults[type] ?? ''));
    }
  }

  private get limits(): CanvasLimits {
    return this.input.limits ?? DEFAULT_CANVAS_LIMITS;
  }

  /** The step budget ran out: a cycle in the graph, or a Loop that never meets its condition. Names the innermost running container. */
  private stepBudgetSpent(): RunFailure {
    const { maxSteps } = this.limits;
    const container = this.inPass;
    const where = container ? ` (still inside ${this.def(container).obj.component_name} '${container}')` : '';
    const failure: RunFailure = {
      kind: 'user',
      message: `The run executed more than ${maxSteps} steps${where}, the limit of steps per turn (setting CAIRN_AGENT_MAX_STEPS): the canvas loops without end, or needs a larger limit`,
    };
    if (container) Object.assign(failure, this.componentOf(container));
    return failure;
  }

  /** The failed component as the run's failure names it. */
  private componentOf(id: string): Pick<RunFailure, 'component_id' | 'component_name' | 'component_type'> {
    return { component_id: id, component_name: this.nameOf(id), component_type: this.canvas.components[id]?.obj.component_name ?? '' };
  }

  private def(id: string): ComponentDef {
    const def = this.canvas.components[id];
    if (!def) throw new Error(`component '${id}' is not in the canvas`);
    return def;
  }

  private nameOf(id: string): string {
    return this.input.names[id] ?? id;
  }

  /**
   * The implicit join: a component that reads the output of a component that has not run in this turn
   * waits; it is appended again when that upstream finishes. VariableAggregator joins alternatives, so it
   * never waits.
   */
  private ready(id: string): boolean {
    const def = this.def(id);
    const name = def.obj.component_name;
    // Containers name their children's outputs; VariableAggregator joins alternatives.
    if (name === 'VariableAggregator' || name === 'Begin' || CONTAINERS.has(name)) return true;
    // A VariableAssigner waits for what it reads, not for the outputs it writes.
    const reads = name === 'VariableAssigner' ? ((def.obj.params.variables as { parameter?: unknown }[] | undefined) ?? []).map((v) => v?.parameter) : def.obj.params;
    return referencedComponents(reads).every((ref) => ref === id || !this.canvas.components[ref] || ref in this.outputs || this.deferred.has(ref));
  }

  /** In a replay: the recorded outputs this component takes instead of running (see NEVER_REUSED). */
  private recorded(id: string): Outputs | undefined {
    const outputs = this.input.reuse?.[id];
    const def = this.canvas.components[id];
    if (!outputs || !def || NEVER_REUSED.has(def.obj.component_name) || def.parent_id) return undefined;
    return outputs;
  }

  private nodeStarted(id: string): void {
    const def = this.def(id);
    this.emit('node_started', {
      inputs: null,
      created_at: Math.floor(this.exec.now() / 1000),
      component_id: id,
      component_name: this.nameOf(id),
      component_type: def.obj.component_name,
      thoughts: '',
      ...(this.recorded(id) ? { reused: true } : {}),
    });
    this.startedAt[id] = this.exec.now();
  }

  private nodeFinished(id: string, outputs: Outputs, error?: string, toolCalls?: unknown[], memoryWrites?: unknown[], reused?: boolean): void {
    const def = this.def(id);
    const began = this.startedAt[id] ?? this.exec.now();
    const elapsed = (this.exec.now() - began) / 1000;
    this.emit('node_finished', {
      inputs: def.obj.params.inputs ?? {},
      outputs: { ...outputs, _created_time: began / 1000, _elapsed_time: elapsed },
      component_id: id,
      component_name: this.nameOf(id),
      component_type: def.obj.component_name,
      error: error ?? null,
      elapsed_time: elapsed,
      created_at: Math.floor(began / 1000),
      ...(toolCalls?.length ? { tool_calls: toolCalls } : {}),
      ...(memoryWrites ? { memory_writes: memoryWrites } : {}),
      ...(reused ? { reused: true } : {}),
    });
  }

  private async runBatch(ids: string[], resumed: boolean): Promise<StepResult[]> {
    return Promise.all(ids.map((id) => this.runOne(id, resumed)));
  }

  private async runOne(id: string, resumed: boolean): Promise<StepResult> {
    const def = this.def(id);
    const name = def.obj.component_name;
    const params = def.obj.params;
    const scope = this.scope();
    const recorded = this.recorded(id);
    if (recorded) {
      // A replay: no model or tool is called again. A Message shows its recorded text.
      if (name === 'Message') this.emit('message', { content: String(recorded.content ?? '') });
      // Its recorded chunks join this turn's reference, and this run's record, as if it had run.
      const reference = this.input.reuseReferences?.[id];
      if (reference) this.emit(STEP_REFERENCE, { component_id: id, reference });
      return { outputs: { ...recorded }, reused: true, ...(reference ? { reference } : {}) };
    }
    try {
      switch (name) {
        case 'Begin':
          return { outputs: beginOutputs(params, this.input.request.inputs, this.canvas.globals) };
        case 'UserFillUp':
          return { outputs: fillUp(params, resumed ? this.input.request.inputs : {}, scope).outputs };
        case 'Switch':
          return { outputs: evaluateSwitch(params, scope, (cid) => this.nameOf(cid)) };
        case 'VariableAggregator':
          return { outputs: aggregateVariables(params, scope) };
        case 'Message':
          return this.saveToMemory(id, params, await this.runMessage(id, params));
        case 'VariableAssigner': {
          // All rows are computed (and checked) before anything is written.
          for (const a of assignVariables(params, scope)) applyAssignment(this.canvas.globals, this.outputs, a.target, a.value);
          return { outputs: {} };
        }
        case 'StringTransform':
          return { outputs: stringTransform(params, scope) };
        case 'DataOperations':
          return { outputs: dataOperations(params, scope) };
        case 'ListOperations':
          return { outputs: listOperations(params, scope) };
        case 'Iteration':
        case 'IterationItem':
        case 'Loop':
        case 'LoopItem':
        case 'ExitLoop':
          return this.runContainerStep(id, name, params);
      }
      if (MODEL_COMPONENTS.has(name) && this.canDefer(id)) {
        this.deferred.set(id, this.modelCall(id, name as 'LLM' | 'Agent', params));
        return { outputs: {} };
      }
      if (isExternalComponent(name)) return { outputs: {}, error: externalComponentError(name) };
      if (!IO_COMPONENTS.has(name)) return { outputs: {}, error: `component '${name}' cannot run` };
      return await this.exec.call(this.ioCall(id, name, params), this.callOptions(name, params, false));
    } catch (err) {
      if (this.exec.isFatal?.(err)) throw err;
      return { outputs: {}, error: describeError(err), ...(isInternalError(err) || this.exec.isInternal?.(err) ? { internal: true } : {}) };
    }
  }

  /** One step of an Iteration or a Loop: start it, begin or end a pass, or leave it. */
  private runContainerStep(id: string, name: string, params: Record<string, unknown>): StepResult {
    const states = containerStates(this.canvas);
    const scope = this.scope();
    const parent = this.def(id).parent_id ?? '';
    switch (name) {
      case 'Iteration':
        states[id] = startIteration(params, scope, { id, maxItems: this.limits.iterationMaxItems });
        return { outputs: {}, next: [itemNodeOf(this.canvas, id)] };
      case 'Loop':
        states[id] = { pass: -1 };
        return { outputs: loopVariables(params, scope), next: [itemNodeOf(this.canvas, id)] };
      case 'ExitLoop': {
        const loop = enclosing(this.canvas, id, 'Loop');
        if (!loop) throw new Error('ExitLoop is not inside a Loop');
        return { outputs: {}, containerDone: loop };
      }
    }
    const state = states[parent];
    if (!state) throw new Error(`${name} runs only inside its ${name === 'LoopItem' ? 'Loop' : 'Iteration'}`);
    const parentParams = this.def(parent).obj.params;
    if (name === 'IterationItem') {
      if (state.pass >= 0) collectPass(parentParams, state, scope);
      if (state.pass + 1 >= state.items!.length) {
        this.outputs[parent] = { ...state.collected };
        this.inPass = undefined;
        return { outputs: {}, containerDone: parent };
      }
    } else if (state.pass >= 0 && loopEnds(parentParams, state, parent, scope)) {
      this.inPass = undefined;
      return { outputs: {}, containerDone: parent };
    }
    this.inPass = parent;
    state.pass++;
    // Each pass sees its own values: the previous pass's outputs inside the container are gone.
    for (const child of descendantsOf(this.canvas, parent)) if (child !== id) delete this.outputs[child];
    const item = state.items?.[state.pass];
    return { outputs: name === 'IterationItem' ? { item, index: state.pass, result: item } : { index: state.pass } };
  }

  private callOptions(name: string, params: Record<string, unknown>, stream: boolean) {
    const timeout = Number(params.timeout);
    // Invoke's own `timeout` is its HTTP timeout (60 s by default): the component allows a moment more,
    // so the request's own, clearer timeout message is the one reported.
    const invokeSec = (Number.isFinite(timeout) && timeout > 0 ? timeout : 60) + 1;
    return {
      timeoutSec: name === 'Invoke' ? invokeSec : Number.isFinite(timeout) && timeout > 0 ? timeout : (DEFAULT_TIMEOUT[name] ?? 600),
      maxRetries: Math.max(0, Math.floor(Number(params.max_retries ?? 0)) || 0),
      delayAfterErrorSec: Math.max(0, Number(params.delay_after_error ?? 2) || 0),
      stream,
    };
  }

  /**
   * RAGFlow's lazy producer: an LLM/Agent whose downstream are all Messages, one of which shows its
   * content, is run by that Message, so its tokens stream as they are produced. Not with structured
   * output or a goto exception handler, which need the whole answer first.
   */
  private canDefer(id: string): boolean {
    const def = this.def(id);
    const params = def.obj.params;
    if (this.alone || params.exception_method === 'goto' || structuredSchema(params)) return false;
    const down = def.downstream.map((d) => this.canvas.components[d]);
    if (!down.length || down.some((d) => d?.obj.component_name !== 'Message')) return false;
    return down.some((d) => referencedComponents(d!.obj.params.content).includes(id));
  }

  private modelCall(id: string, kind: 'LLM' | 'Agent', params: Record<string, unknown>): ModelCall & { kind: 'LLM' | 'Agent' } {
    const scope = this.scope();
    const window = Math.max(0, Number(params.message_history_window_size ?? 13) || 0);
    const history = this.historyWindow(window);
    const images: string[] = [];
    const visual = typeof params.visual_files_var === 'string' ? params.visual_files_var.trim() : '';
    if (visual) images.push(...dataImages(resolveParam(visual, scope)));
    const takeImages = (value: unknown) => {
      images.push(...dataImages(value));
      return withoutDataImages(value);
    };
    const system = renderTemplate(String(params.sys_prompt ?? ''), scope, takeImages);
    const messages: PromptMessage[] = [];
    if (system) messages.push({ role: 'system', content: system });
    messages.push(...history);
    const prompts = Array.isArray(params.prompts) && params.prompts.length ? params.prompts : [{ role: 'user', content: kind === 'Agent' && params.user_prompt ? params.user_prompt : '{sys.query}' }];
    for (const p of prompts as { role?: string; content?: unknown }[]) {
      const content = renderTemplate(String(p.content ?? ''), scope, takeImages);
      messages.push({ role: p.role === 'assistant' ? 'assistant' : 'user', content });
    }
    this.attachFiles(messages, images, placesFiles(params));
    const call: ModelCall & { kind: 'LLM' | 'Agent' } = { kind, id, messages, settings: modelSettings(params) };
    const schema = structuredSchema(params);
    if (schema) call.schema = schema;
    if (kind === 'Agent') {
      call.tools = (Array.isArray(params.tools) ? params.tools : []).map((t: ToolDef) => ({ ...t, params: toolParams(t, scope) }));
      call.max_rounds = Number(params.max_rounds ?? 5) || 5;
      const mcp = Array.isArray(params.mcp) ? (params.mcp as { mcp_id: string; tools?: Record<string, unknown> }[]) : [];
      if (mcp.length) call.mcp = mcp.map((m) => ({ mcp_id: m.mcp_id, tools: m.tools }));
    }
    if (params.cite !== undefined) call.cite = Boolean(params.cite);
    const kwargs = this.canvas.globals['sys.chat_template_kwargs'];
    if (kwargs && typeof kwargs === 'object') call.chatTemplateKwargs = kwargs as Record<string, unknown>;
    return call;
  }

  /**
   * The turn's attached files go with the last user message unless the prompt placed `{sys.files}`
   * itself: their texts appended to it, their images beside it with the prompt's other images.
   */
  private attachFiles(messages: PromptMessage[], images: string[], placedByPrompt: boolean): void {
    const files = placedByPrompt ? { texts: [], images: [] } : splitFiles(this.canvas.globals['sys.files']);
    images.push(...files.images);
    if (!files.texts.length && !images.length) return;
    let last = [...messages].reverse().find((m) => m.role === 'user');
    if (!last) messages.push((last = { role: 'user' as const, content: '' }));
    if (files.texts.length) last.content = [last.content, ...files.texts].filter(Boolean).join('\n\n');
    if (images.length) last.images = uniqueImages(images);
  }

  /** The last `n` exchanges before the current question, as chat messages. */
  private historyWindow(n: number): PromptMessage[] {
    const past = this.canvas.history.slice(0, -1).slice(-2 * n);
    return n ? past.map(([role, content]) => ({ role: role === 'assistant' ? 'assistant' : 'user', content: String(content) })) : [];
  }

  private ioCall(id: string, name: string, params: Record<string, unknown>): ComponentCall {
    const scope = this.scope();
    if (name === 'LLM' || name === 'Agent') return this.modelCall(id, name, params);
    if (name === 'Invoke') return { kind: 'Invoke', id, params: invokeParams(params, scope) };
    if (name === 'CodeExec') return { kind: 'CodeExec', id, params: codeParams(params, scope) };
    if (name === 'Retrieval') {
      const query = params.query ? resolveRef(String(params.query), scope) : this.canvas.globals['sys.query'];
      const resolved = resolveParam({ ...params, query: undefined }, scope) as Record<string, unknown>;
      return { kind: 'Retrieval', id, query: String(query ?? ''), params: resolved };
    }
    const query = String((params.query ? resolveRef(String(params.query), scope) : this.canvas.globals['sys.query']) ?? '');
    const window = Math.max(0, Number(params.message_history_window_size ?? 1) || 0);
    const categories = (params.category_description ?? {}) as Record<string, { to?: string[] }>;
    return { kind: 'Categorize', id, query, messages: categorizePrompt(params, query, this.historyWindow(window)), settings: modelSettings(params), categories };
  }

  private async runMessage(id: string, params: Record<string, unknown>): Promise<ComponentResult> {
    const template = pickTemplate(params, this.exec.random());
    const scope = this.scope();
    const pieces: MessagePiece[] = [];
    const producers: Record<string, ModelCall & { kind: 'LLM' | 'Agent' }> = {};
    for (const piece of splitTemplate(template)) {
      const owner = 'ref' in piece ? piece.componentId : undefined;
      if ('ref' in piece && owner && this.deferred.has(owner)) {
        producers[owner] = this.deferred.get(owner)!;
        pieces.push({ producer: owner, path: piece.ref.slice(piece.ref.indexOf('@') + 1) });
      } else {
        pieces.push({ text: 'ref' in piece ? renderTemplate(`{${piece.ref}}`, scope) : piece.text });
      }
    }
    if (!Object.keys(producers).length) {
      const content = pieces.map((p) => ('text' in p ? p.text : '')).join('');
      this.emit('message', { content });
      return { outputs: { content } };
    }
    for (const pid of Object.keys(producers)) this.deferred.delete(pid);
    const options = this.callOptions('Message', params, true);
    const longest = Math.max(...Object.values(producers).map((p) => DEFAULT_TIMEOUT[p.kind]!));
    const producerTimeouts = Object.keys(producers).map((p) => Number(this.def(p).obj.params.timeout)).filter((t) => t > 0);
    options.timeoutSec = producerTimeouts.length ? Math.max(...producerTimeouts) : Number(params.timeout) > 0 ? Number(params.timeout) : longest;
    options.maxRetries = Math.max(...Object.keys(producers).map((p) => this.callOptions('LLM', this.def(p).obj.params, true).maxRetries));
    options.delayAfterErrorSec = Math.max(...Object.keys(producers).map((p) => this.callOptions('LLM', this.def(p).obj.params, true).delayAfterErrorSec));
    return this.exec.call({ kind: 'Message', id, pieces, producers }, options);
  }

  /** RAGFlow's Message `memory_ids` (and `user_id`): the turn is written to those memories once the content is final. */
  private async saveToMemory(id: string, params: Record<string, unknown>, result: StepResult): Promise<StepResult> {
    const memoryIds = (Array.isArray(params.memory_ids) ? params.memory_ids : []).map(String).filter(Boolean);
    if (this.alone || !memoryIds.length || result.error || Object.values(result.producers ?? {}).some((p) => p.error)) return result;
    const userId = params.user_id ? resolveParam(params.user_id, this.scope()) : this.canvas.globals['sys.user_id'];
    const call: ComponentCall = {
      kind: 'Memory',
      id,
      memory_ids: memoryIds,
      user_id: userId ? String(userId) : undefined,
      user_input: String(this.canvas.globals['sys.query'] ?? ''),
      agent_response: String(result.outputs.content ?? ''),
    };
    const saved = await this.exec.call(call, { timeoutSec: 60, maxRetries: 0, delayAfterErrorSec: 0, stream: false });
    return { ...result, memoryWrites: saved.error ? memoryIds.map((m) => ({ memory_id: m, error: saved.error })) : (saved.outputs.writes as unknown[]) };
  }

  /**
   * Records a component's result: outputs, references, usage, events, and where the walk goes next.
   * Returns a terminal outcome when the run must stop.
   */
  private afterComponent(id: string, result: StepResult): { status: 'failed'; error: RunFailure } | undefined {
    const def = this.def(id);
    if (this.deferred.has(id)) {
      // Runs later, inside the Message that shows its content; the walk goes on to that Message now.
      this.appendToPath(def.downstream);
      return undefined;
    }
    const name = def.obj.component_name;
    this.absorb(result);
    let culprit = id;
    const produced = Object.entries(result.producers ?? {}).map(([pid, p]) => {
      this.absorb(p);
      const outputs = { ...p.outputs, ...(p.error ? { [ERROR_OUTPUT]: p.error } : {}) };
      this.outputs[pid] = outputs;
      if (p.error && !result.error) [result.error, result.internal, culprit] = [p.error, p.internal, pid];
      return () => this.nodeFinished(pid, outputs, p.error, p.trace);
    });
    const outputs: Outputs = { ...result.outputs };
    let next: string[] = def.downstream;
    if (result.error) {
      outputs[ERROR_OUTPUT] = result.error;
      // A streamed producer's failure is handled as that producer says.
      const params = this.def(culprit).obj.params;
      if (params.exception_method === 'goto' && Array.isArray(params.exception_goto) && params.exception_goto.length) {
        next = params.exception_goto as string[];
      } else if (params.exception_method === 'comment' || (params.exception_default_value ?? '') !== '') {
        const fallback = String(params.exception_default_value ?? '');
        outputs.content = fallback;
        outputs.result = fallback;
        this.emit('message', { content: fallback });
        this.emit('message_end', {});
        this.answer += fallback;
      } else {
        this.outputs[id] = outputs;
        for (const finished of produced) finished();
        this.nodeFinished(id, outputs, result.error);
        const named = this.componentOf(culprit);
        const message = componentFailureMessage(culprit, named.component_type!, named.component_name!, result.error);
        return { status: 'failed', error: { kind: result.internal ? 'internal' : 'user', message, ...named } };
      }
    } else if (result.next) {
      next = result.next;
    } else if (Array.isArray(outputs[NEXT_OUTPUT])) {
      next = outputs[NEXT_OUTPUT] as string[];
    }
    if (CONTAINERS.has(name) && !result.error) {
      // A container finishes when its last pass does.
      this.outputs[id] = { ...this.outputs[id], ...outputs };
      this.appendToPath(next);
      return undefined;
    }
    this.outputs[id] = outputs;
    this.lastOutputs = outputs;
    if (name === 'Message' && !result.error) {
      this.answer += String(outputs.content ?? '');
      this.emit('message_end', { reference: bucketView(this.bucket) });
    }
    // As in RAGFlow, a streamed producer finishes after the Message that showed its tokens.
    for (const finished of produced) finished();
    this.nodeFinished(id, outputs, result.error, result.trace, result.memoryWrites, result.reused);
    if (result.containerDone) {
      const container = result.containerDone;
      this.nodeFinished(container, this.outputs[container] ?? {});
      next = this.def(container).downstream;
      if (!next.length) next = this.backEdge(container);
    } else if (!next.length) {
      next = this.backEdge(id);
    }
    this.appendToPath(next);
    return undefined;
  }

  /** A node without downstream inside a container leads back to the container's item node: the next pass. */
  private backEdge(id: string): string[] {
    const parent = this.def(id).parent_id;
    return parent && this.canvas.components[parent] ? [itemNodeOf(this.canvas, parent)] : [];
  }

  /** RAGFlow appends next nodes skipping only one equal to the current last (revisits are allowed). */
  private appendToPath(ids: string[]): void {
    for (const n of ids) if (this.canvas.path[this.canvas.path.length - 1] !== n) this.canvas.path.push(n);
  }

  private absorb(result: { reference?: ReferenceBucket; usage?: Usage }): void {
    if (result.reference) {
      Object.assign(this.bucket.chunks, result.reference.chunks);
      Object.assign(this.bucket.doc_aggs, result.reference.doc_aggs);
    }
    if (result.usage) {
      this.usage.prompt_tokens += result.usage.prompt_tokens;
      this.usage.completion_tokens += result.usage.completion_tokens;
      this.usage.calls += result.usage.calls;
    }
  }

  /** A UserFillUp reached in this batch whose fields are not all answered pauses the run. */
  private pauseIfWaiting(from: number): TurnOutcome | undefined {
    for (const id of this.canvas.path.slice(from)) {
      const def = this.canvas.components[id];
      if (def?.obj.component_name !== 'UserFillUp') continue;
      const waiting = fillUp(def.obj.params, {}, this.scope());
      if (!waiting.unsatisfied.length) continue;
      this.nodeStarted(id);
      this.canvas.path = [id];
      this.canvas.paused = true;
      this.emit('user_inputs', waiting.event);
      this.answer += waiting.event.tips ? String(waiting.event.tips) : '';
      return this.finish('paused');
    }
    return undefined;
  }

  private finish(status: TurnOutcome['status'], failure?: RunFailure): TurnOutcome {
    const elapsed = (this.exec.now() - this.startedMs) / 1000;
    if (status === 'failed') {
      this.emit(RUN_ERROR, failure);
    } else if (status === 'finished') {
      this.emit('workflow_finished', {
        inputs: this.input.request.inputs,
        outputs: this.lastOutputs,
        elapsed_time: elapsed,
        created_at: this.input.createdAt,
        usage: { ...this.usage, total_tokens: this.usage.prompt_tokens + this.usage.completion_tokens },
      });
    }
    if (status !== 'paused') this.canvas.path = this.canvas.path.slice(-1);
    if (status === 'finished') this.canvas.history.push(['assistant', this.answer]);
    return { status, canvas: this.canvas, answer: this.answer, reference: this.bucket, ...(failure ? { error: failure.message, failure } : {}) };
  }
}

/** Invoke's params with references resolved (RAGFlow's `_resolve_arg_value` for each variable). */
function invokeParams(params: Record<string, unknown>, scope: Scope): Record<string, unknown> {
  let headers = params.headers;
  if (typeof params.headers === 'string' && params.headers.trim()) {
    const text = params.headers;
    try {
      headers = JSON.parse(text);
    } catch {
      throw new Error(`headers is not a JSON object: ${text.slice(0, 80)}`);
    }
  }
  const variables = ((params.variables as { key?: string; ref?: string; value?: unknown }[] | undefined) ?? []).map((v) => ({
    key: v.key,
    value: v.ref ? (resolveRef(v.ref, scope) ?? '') : (resolveParam(v.value, scope) ?? ''),
  }));
  return {
    ...params,
    url: renderTemplate(String(params.url ?? ''), scope),
    headers: headers && typeof headers === 'object' ? resolveParam(headers, scope) : headers,
    variables,
  };
}

/**
 * An Agent tool's params, resolved as its component resolves them: a CodeExec script is code, not a
 * template, and only its arguments are references; a sub-Agent's own tools follow the same rule.
 */
function toolParams(tool: ToolDef, scope: Scope): Record<string, unknown> {
  const params = tool.params ?? {};
  if (tool.component_name === 'CodeExec') return { ...params, ...codeParams(params, scope) };
  if (tool.component_name === 'Agent' && Array.isArray(params.tools)) {
    const { tools, ...rest } = params;
    return { ...(resolveParam(rest, scope) as Record<string, unknown>), tools: (tools as ToolDef[]).map((t) => ({ ...t, params: toolParams(t, scope) })) };
  }
  return (resolveParam(params, scope) ?? {}) as Record<string, unknown>;
}

/** CodeExec's params: each argument is a reference (or empty), resolved to its value. */
function codeParams(params: Record<string, unknown>, scope: Scope): Record<string, unknown> {
  const raw = params.arguments;
  const args: Record<string, unknown> = {};
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const [k, ref] of Object.entries(raw)) args[k] = typeof ref === 'string' && ref ? resolveRef(ref, scope) : (ref ?? null);
  }
  return { lang: params.lang, script: params.script, arguments: args, outputs: params.outputs };
}

/** An activity failure's cause carries the reason (a timeout, the model's error). */
function describeError(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && (e as { cause?: unknown }).cause instanceof Error && /^Activity task|^activity/i.test(e.message)) e = (e as { cause?: unknown }).cause;
  return e instanceof Error ? e.message : String(e);
}

/** The JSON Schema of an LLM's `structured` output: `outputs.structured.schema`, or the declaration itself. */
function structuredSchema(params: Record<string, unknown>): Record<string, unknown> | undefined {
  const structured = (params.outputs as Record<string, unknown> | undefined)?.structured;
  if (!isObject(structured)) return undefined;
  const candidate = isObject(structured.schema) ? structured.schema : structured;
  return isObject(candidate.properties) && Object.keys(candidate.properties).length ? candidate : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The *Enabled flags gate each sampling setting, as in RAGFlow's LLM param; a setting written without
 * its flag (a hand-written DSL) is used. Templates carry numbers as strings ("0.1") too.
 */
function modelSettings(params: Record<string, unknown>): ModelSettings {
  const settings: ModelSettings = {};
  if (params.llm_id) settings.llm_id = String(params.llm_id);
  for (const key of ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'max_tokens'] as const) {
    const enabled = params[`${camel(key)}Enabled`];
    const value = typeof params[key] === 'string' && params[key] !== '' ? Number(params[key]) : params[key];
    if (typeof value === 'number' && Number.isFinite(value) && enabled !== false) settings[key] = value;
  }
  return settings;
}

function camel(key: string): string {
  return key.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
}

/** A bucket as the API shows it: lists of chunks and documents. */
export function bucketView(bucket: ReferenceBucket): { chunks: unknown[]; doc_aggs: unknown[]; total: number } {
  const chunks = Object.values(bucket.chunks);
  return { chunks, doc_aggs: Object.values(bucket.doc_aggs), total: chunks.length };
}
