import { CancelledFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps.js';
import type { ActivityInput, ComponentCall, ComponentResult, ModelCall, RunIds, RunRequest, TurnOutcome } from '../src/agents/run-types.js';
import { runModelCall, type ModelRunDeps } from '../src/agents/io/model-runner.js';
import { runRetrieval } from '../src/agents/io/retrieval-tool.js';
import { mcpConfigOf } from '../src/services/mcp-servers.js';
import { runInvoke } from '../src/agents/io/invoke.js';
import { isBuiltinModelId } from '../src/models/builtin/spec.js';
import { runCode } from '../src/agents/io/sandbox/index.js';
import { DeltaPublisher } from '../src/agents/io/delta-publisher.js';
import { toolRunEvent } from '../src/agents/io/tool-events.js';
import { pickCategory } from '../src/agents/components/pure.js';
import { walkPath } from '../src/agents/refs.js';
import { recordTurn, runnableCanvas } from '../src/agents/io/session-turns.js';
import { streamedSoFar } from '../src/agents/stream.js';
import type { CanvasDsl } from '../src/agents/dsl.js';
import { recordRunEnd } from '../src/agents/io/run-records.js';
import { stepInputEvents, stepReferenceEvents } from '../src/agents/run-steps.js';
import { RUN_END, type RunEvent } from '../src/events/types.js';
import { isInternalError } from '../src/agents/run-failure.js';

type Call<K extends ComponentCall['kind']> = Extract<ComponentCall, { kind: K }>;

/**
 * The I/O components of agent runs. Each runs its component's retries and timeout itself and returns
 * the failure as a result (a component's error is the canvas's to handle); Temporal retries an
 * activity only when its worker died or stopped heartbeating.
 */
export function agentActivities(deps: ActivityDeps) {
  const { store, models, events, agentMemories: memories } = deps;
  const sources = { datasets: deps.agentRetrieval, memories };
  const modelDeps = (tenantId: string): ModelRunDeps => ({
    chat: (llmId) => models.chat(tenantId, llmId),
    retrieve: (query, params) => runRetrieval(sources, tenantId, query, params),
    mcpServer: async (mcpId) => {
      const row = await store.mcpServers.byId(mcpId);
      if (!row || row.tenant_id !== tenantId) throw new Error(`MCP server '${mcpId}' not found`);
      return { ...mcpConfigOf(row), fetch: await deps.urlGuard(row.url) };
    },
    // An Agent's CodeExec tool: the same sandbox and limits as the CodeExec component (the Agent's timeout bounds both).
    runCode: (params, signal) => runCode(params, signal, deps.agentLimits.code),
  });

  return {
    agentLLM: (input: ActivityInput) => component(input, (signal, publisher, emit) => modelComponent(input, input.call as Call<'LLM'>, signal, emit, publisher)),
    agentAgent: (input: ActivityInput) => component(input, (signal, publisher, emit) => modelComponent(input, input.call as Call<'Agent'>, signal, emit, publisher)),

    agentRetrieval: (input: ActivityInput) =>
      component(input, async () => {
        const call = input.call as Call<'Retrieval'>;
        const out = await runRetrieval(sources, input.tenantId, call.query, call.params);
        return { outputs: { formalized_content: out.formalized_content, json: out.json }, reference: out.reference };
      }),

    agentCategorize: (input: ActivityInput) =>
      component(input, async (signal) => {
        const call = input.call as Call<'Categorize'>;
        // The tiny built-in model rarely answers with a bare category name: its answer is constrained to one.
        const model = await models.chat(input.tenantId, call.settings.llm_id);
        const names = Object.keys(call.categories);
        const schema = isBuiltinModelId(model.id) && names.length ? { type: 'object', properties: { category: { type: 'string', enum: names } }, required: ['category'] } : undefined;
        const result = await runModelCall({ kind: 'LLM', id: call.id, messages: call.messages, settings: call.settings, schema }, modelDeps(input.tenantId), { signal });
        const answer = schema ? String((result.outputs.structured as { category?: unknown } | undefined)?.category ?? '') : String(result.outputs.content ?? '');
        return { outputs: pickCategory(answer, { category_description: call.categories }), usage: result.usage };
      }),

    /** A Message that shows the content of LLM/Agent producers: runs them and streams their tokens as they come. */
    agentMessage: (input: ActivityInput) =>
      component(input, async (signal, publisher, emit) => {
        const call = input.call as Call<'Message'>;
        const producers: NonNullable<ComponentResult['producers']> = {};
        let content = '';
        for (const piece of call.pieces) {
          if ('text' in piece) {
            content += piece.text;
            publisher?.answer(piece.text);
            continue;
          }
          let done = producers[piece.producer];
          if (!done) {
            const streamIt = piece.path === 'content';
            const result = await runModelCall(call.producers[piece.producer]!, modelDeps(input.tenantId), {
              signal,
              onAnswer: streamIt ? (t) => publisher?.answer(t) : undefined,
              onReasoning: streamIt ? (t) => publisher?.reasoning(t) : undefined,
              onTool: (e) => emit(toolRunEvent(piece.producer, e)),
            }).catch((err: unknown) => {
              throw new ProducerError(piece.producer, err);
            });
            done = producers[piece.producer] = { outputs: result.outputs, usage: result.usage, reference: result.reference, trace: result.trace };
            if (streamIt) {
              content += String(result.outputs.content ?? '');
              continue;
            }
          }
          const value = walkPath(done.outputs, piece.path);
          const text = typeof value === 'string' ? value : value == null ? '' : JSON.stringify(value);
          content += text;
          publisher?.answer(text);
        }
        return { outputs: { content }, producers };
      }),

    /**
     * A Message's `memory_ids`: the turn goes to each memory (raw message at once, extraction as its own
     * workflow). Each memory's outcome is returned, failures included, for the run's events.
     */
    agentSaveMemory: (input: ActivityInput) =>
      component(input, async () => {
        const call = input.call as Call<'Memory'>;
        const writes = await memories.addTurn(input.tenantId, {
          memory_ids: call.memory_ids,
          agent_id: input.agentId,
          session_id: input.sessionId,
          user_id: call.user_id,
          user_input: call.user_input,
          agent_response: call.agent_response,
          turn_key: `${input.runKey}:${call.id}`,
        });
        return { outputs: { writes } };
      }),

    /** RAGFlow's Invoke: an HTTP request, behind the SSRF guard. */
    agentInvoke: (input: ActivityInput) =>
      component(input, async (signal) => ({ outputs: await runInvoke((input.call as Call<'Invoke'>).params, signal, { ...deps.agentLimits.urls, idempotencyKey: activityKey() }) })),

    /** RAGFlow's CodeExec: Python or JavaScript in a locked-down child process per call. */
    agentCodeExec: (input: ActivityInput) =>
      component(input, async (signal) => {
        const { code } = deps.agentLimits;
        const timeoutMs = Math.min(code.timeoutMs, input.timeoutSec * 1000);
        return { outputs: await runCode((input.call as Call<'CodeExec'>).params, signal, { ...code, timeoutMs }) };
      }),

    /** Persists the turn in its session and its run record (once, whatever the retries), then sends the last events and closes the log. */
    async agentFinishTurn(input: RunIds & { request: RunRequest; outcome: TurnOutcome; events: RunEvent[] }): Promise<void> {
      // Ran already (the log's end is written last): Temporal runs a local activity again when the task holding it
      // does not complete (a worker killed; a signal arriving as the workflow closes). Again, the turn's final
      // events would be logged twice and its last steps recorded twice.
      if (await events.ended(input.runKey)) return;
      if (input.outcome.status === 'interrupted') {
        // Tokens never pass through the workflow: the text the turn streamed before it was stopped is in its log.
        const answer = await streamedSoFar(events, input.runKey);
        input.outcome.answer = answer;
        const now = Math.floor(Date.now() / 1000);
        input.events.push({ event: 'workflow_finished', data: { inputs: input.request.inputs, outputs: { content: answer }, created_at: input.createdAt }, created_at: now });
      }
      await recordTurn(store, input);
      // Before the log's end: a caller whose stream ended finds the run recorded.
      await recordRunEnd(store, events, input);
      await events.publish(input.runKey, [...input.events, { event: RUN_END, data: { status: input.outcome.status } }]);
    },

    /** The session's canvas as the next turn starts from it: for a turn that waited behind others. */
    async agentSessionCanvas(input: { sessionId: string }): Promise<{ canvas: CanvasDsl; names: Record<string, string> } | undefined> {
      const row = await store.agentSessions.byId(input.sessionId);
      return row ? runnableCanvas(JSON.parse(row.dsl) as CanvasDsl) : undefined;
    },
  };

  async function modelComponent(input: ActivityInput, call: ModelCall & { kind: 'LLM' | 'Agent' }, signal: AbortSignal, emit: (event: RunEvent) => void, publisher?: DeltaPublisher): Promise<ComponentResult> {
    const result = await runModelCall(call, modelDeps(input.tenantId), {
      signal,
      onAnswer: publisher ? (t) => publisher.answer(t) : undefined,
      onReasoning: publisher ? (t) => publisher.reasoning(t) : undefined,
      onTool: (e) => emit(toolRunEvent(call.id, e)),
    });
    return { outputs: result.outputs, usage: result.usage, reference: result.reference, trace: result.trace };
  }

  /**
   * Runs a component's tries. `publisher` streams its text (when the component is streamed); `emit`
   * sends other events of the run (tool calls) as they happen, in order with the text.
   */
  async function component(
    input: ActivityInput,
    work: (signal: AbortSignal, publisher: DeltaPublisher | undefined, emit: (event: RunEvent) => void) => Promise<ComponentResult>,
  ): Promise<ComponentResult> {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    // The component's resolved inputs go to the log too, for the run's record (never to the caller).
    if (attempt === 1) await events.publish(input.runKey, [...input.before, ...stepInputEvents(input.call)]);
    const beat = setInterval(() => ctx.heartbeat(), 250);
    let lastError = '';
    let lastFailure: unknown;
    let lastInternal = false;
    try {
      for (let retry = 0; retry <= input.maxRetries; retry++) {
        const timeout = new AbortController();
        const timer = setTimeout(() => timeout.abort(new Error(`timed out after ${input.timeoutSec} s`)), input.timeoutSec * 1000);
        const signal = AbortSignal.any([ctx.cancellationSignal, timeout.signal]);
        // Each try streams as a new attempt: the API forwards only what goes beyond the text already sent.
        const out = new DeltaPublisher(events, input.runKey, input.call.id, attempt * 100 + retry);
        const publisher = input.stream || input.call.kind === 'Message' ? out : undefined;
        try {
          const result = await work(signal, publisher, (event) => out.event(event));
          await out.close();
          // What it retrieved goes to the run's record, so a replay that reuses it has the chunks too.
          await events.publish(input.runKey, stepReferenceEvents(input.call.id, result));
          return result;
        } catch (err) {
          await out.close().catch(() => undefined);
          if (ctx.cancellationSignal.aborted) throw new CancelledFailure('the run was cancelled');
          lastFailure = err;
          lastInternal = !timeout.signal.aborted && isInternalError(err instanceof ProducerError ? err.cause : err);
          lastError = timeout.signal.aborted ? (timeout.signal.reason as Error).message : err instanceof Error ? err.message : String(err);
        } finally {
          clearTimeout(timer);
        }
        if (retry < input.maxRetries) await sleep(input.delayAfterErrorSec * 1000, ctx.cancellationSignal);
      }
      // A Message fails because of the producer it streamed: the run names that component.
      const internal = lastInternal ? { internal: true } : {};
      if (lastFailure instanceof ProducerError) return { outputs: {}, producers: { [lastFailure.producer]: { outputs: {}, error: lastError, ...internal } } };
      return { outputs: {}, error: lastError, ...internal };
    } finally {
      clearInterval(beat);
    }
  }
}

class ProducerError extends Error {
  constructor(
    readonly producer: string,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}

/**
 * The running activity's identity in its workflow run: the same for each attempt of this activity (a
 * worker that died, a heartbeat timeout) and different for every other one, so it keys a side effect
 * that must happen once however often Temporal runs the activity.
 */
function activityKey(): string {
  const info = Context.current().info;
  return `${info.workflowExecution?.runId ?? info.activityRunId}/${info.activityId}`;
}
