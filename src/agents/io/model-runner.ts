import type { ChatMessage, ChatModel, ChatOptions, ToolCall, ToolSpec } from '../../models/types.js';
import type { Outputs, ReferenceBucket } from '../dsl.js';
import type { ModelCall, ToolCallEvent, ToolDef, Usage } from '../run-types.js';
import { countTokens } from '../../text/tokens.js';
import { RETRIEVAL_TOOL_DESCRIPTION, RETRIEVAL_TOOL_NAME, type RetrievalOutput } from './retrieval-tool.js';
import { McpConnection, type McpServerConfig } from './mcp-client.js';
import { externalComponentError, isExternalComponent } from '../external.js';
import { isBuiltinModelId } from '../../models/builtin/spec.js';
import { newToolCallId } from '../../models/builtin/chat-json.js';
import { summariseRetrieval, summariseText } from './tool-events.js';
import { CODE_TOOL_NAME, codeJobOf, codeToolResult, codeToolSpec } from './code-tool.js';
import type { CodeExecParams } from './sandbox/index.js';

export interface ModelRunDeps {
  chat(llmId?: string): Promise<ChatModel>;
  retrieve(query: string, params: Record<string, unknown>): Promise<RetrievalOutput>;
  /** The tenant's MCP server of that id, checked against the SSRF guard; throws when there is none. */
  mcpServer(mcpId: string): Promise<McpServerConfig>;
  /** Runs a CodeExec tool's job in the sandbox the CodeExec component uses (a child process per call). */
  runCode(params: CodeExecParams, signal: AbortSignal): Promise<Outputs>;
}

export interface ModelRunIo {
  signal: AbortSignal;
  /** Streamed answer text (only for the component being streamed; sub-agents stay silent). */
  onAnswer?(text: string): void;
  onReasoning?(text: string): void;
  /** Each tool call as it starts and as it ends (sub-agents' calls too, with `via` naming them). */
  onTool?(event: ToolCallEvent): void;
}

export interface ModelRunResult {
  outputs: Outputs;
  usage: Usage;
  reference: ReferenceBucket;
  trace: { tool_name: string; arguments: unknown; result: string; elapsed_time: number }[];
}

/** Runs an LLM or Agent component: one model call, or RAGFlow's function-calling loop over the Agent's tools. */
export async function runModelCall(call: ModelCall & { kind: 'LLM' | 'Agent' }, deps: ModelRunDeps, io: ModelRunIo): Promise<ModelRunResult> {
  const model = await deps.chat(call.settings.llm_id);
  const run: ModelRunResult = { outputs: {}, usage: { prompt_tokens: 0, completion_tokens: 0, calls: 0 }, reference: { chunks: {}, doc_aggs: {} }, trace: [] };
  const options: ChatOptions = { ...samplingOf(call), signal: io.signal };
  if (call.chatTemplateKwargs) options.chat_template_kwargs = call.chatTemplateKwargs;

  if (call.schema) {
    const text = await streamOnce(model, call.messages, { ...options, json_schema: call.schema }, run, {});
    run.outputs = { content: text, structured: parseStructured(text) };
    return run;
  }
  const connections: McpConnection[] = [];
  try {
    const tools = toolsOf(call.tools ?? []);
    for (const entry of call.mcp ?? []) {
      const conn = await McpConnection.open(await deps.mcpServer(entry.mcp_id), io.signal);
      connections.push(conn);
      tools.push(...mcpTools(conn, await conn.tools(io.signal), entry.tools, tools));
    }
    const messages: ChatMessage[] = [...call.messages];
    const rounds = call.max_rounds ?? 5;
    const searches = isBuiltinModelId(model.id) ? searchesFirst(tools, messages) : [];
    if (searches.length) await runCalls(searches, '', messages, tools, deps, run, io);
    for (let round = searches.length ? 1 : 0; ; round++) {
      const offer = tools.length && round < rounds;
      const calls: ToolCall[] = [];
      const text = await streamOnce(model, messages, offer ? { ...options, tools: tools.map((t) => t.spec) } : options, run, io, calls);
      if (!calls.length) {
        run.outputs = { content: text };
        return run;
      }
      await runCalls(calls, text, messages, tools, deps, run, io);
    }
  } finally {
    await Promise.all(connections.map((c) => c.close()));
  }
}

/**
 * The first round of an Agent on the built-in model: its Retrieval tools called with the user's
 * question as the query. SmolLM2-135M cannot be trusted with this round: offered the tool, it searched
 * for "1234567890" when asked which number to call in an emergency (the search found nothing, so the
 * answer was invented), and a grammar that forces the call would still leave the query to the model.
 * The question itself is what a person would type into the search box, and hybrid retrieval ranks
 * passages for a whole question well. Remote models keep RAGFlow's loop: they choose their calls.
 */
function searchesFirst(tools: BoundTool[], messages: ChatMessage[]): ToolCall[] {
  const question = [...messages].reverse().find((m) => m.role === 'user')?.content.trim();
  if (!question) return [];
  return tools.filter((t) => t.def.component_name === 'Retrieval').map((t) => ({ id: newToolCallId(), name: t.spec.name, arguments: JSON.stringify({ query: question }) }));
}

/** One round's calls: recorded as the model's turn, each result answered as a tool message. */
async function runCalls(calls: ToolCall[], text: string, messages: ChatMessage[], tools: BoundTool[], deps: ModelRunDeps, run: ModelRunResult, io: ModelRunIo): Promise<void> {
  messages.push({ role: 'assistant', content: text, tool_calls: calls });
  for (const c of calls) messages.push({ role: 'tool', tool_call_id: c.id, content: await callTool(c, tools, deps, run, io) });
}

/** The MCP server's tools the Agent chose (`tools` names them; none named = all), as functions for the model. */
function mcpTools(conn: McpConnection, available: Awaited<ReturnType<McpConnection['tools']>>, chosen: Record<string, unknown> | undefined, taken: BoundTool[]): BoundTool[] {
  const names = chosen && Object.keys(chosen).length ? new Set(Object.keys(chosen)) : undefined;
  const missing = names ? [...names].filter((n) => !available.some((t) => t.name === n)) : [];
  if (missing.length) throw new Error(`MCP server '${conn.server.name}' has no tool ${missing.join(', ')}`);
  return available
    .filter((t) => !names || names.has(t.name))
    .filter((t) => !taken.some((b) => b.spec.name === t.name))
    .map((t) => ({ def: { component_name: 'MCP', name: t.name, params: {} }, mcp: conn, spec: { name: t.name, description: t.description, parameters: t.inputSchema } }));
}

async function streamOnce(
  model: ChatModel,
  messages: ChatMessage[],
  options: ChatOptions,
  run: ModelRunResult,
  io: Pick<ModelRunIo, 'onAnswer' | 'onReasoning'>,
  calls: ToolCall[] = [],
): Promise<string> {
  let text = '';
  let reported = false;
  for await (const d of model.stream(messages, options)) {
    if (d.kind === 'answer') {
      text += d.text;
      io.onAnswer?.(d.text);
    } else if (d.kind === 'reasoning') {
      io.onReasoning?.(d.text);
    } else if (d.kind === 'tool_calls') {
      calls.push(...d.calls);
    } else if (d.kind === 'usage') {
      run.usage.prompt_tokens += d.usage.prompt_tokens;
      run.usage.completion_tokens += d.usage.completion_tokens;
      reported = true;
    }
  }
  options.signal?.throwIfAborted();
  run.usage.calls += 1;
  if (!reported) {
    run.usage.prompt_tokens += messages.reduce((n, m) => n + countTokens(m.content), 0);
    run.usage.completion_tokens += countTokens(text);
  }
  return text;
}

function samplingOf(call: ModelCall): ChatOptions {
  const { temperature, top_p, presence_penalty, frequency_penalty, max_tokens } = call.settings;
  return Object.fromEntries(Object.entries({ temperature, top_p, presence_penalty, frequency_penalty, max_tokens }).filter(([, v]) => v !== undefined));
}

function parseStructured(text: string): unknown {
  const body = text.trim().replace(/^```(?:json)?\s*/i, '').replace(/```$/, '');
  try {
    return JSON.parse(body);
  } catch {
    throw new Error(`the model's structured output is not valid JSON: ${text.slice(0, 200)}`);
  }
}

interface BoundTool {
  spec: ToolSpec;
  def: ToolDef;
  /** For a tool of an MCP server: the open connection that calls it. */
  mcp?: McpConnection;
}

/**
 * Function names the model sees: RAGFlow's `search_my_dateset` for Retrieval and `execute_code` for
 * CodeExec; a sub-agent or an outside-service tool by its name.
 */
function toolsOf(defs: ToolDef[]): BoundTool[] {
  const used = new Set<string>();
  const unique = (name: string) => {
    let n = name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 60) || 'tool';
    for (let i = 2; used.has(n); i++) n = `${name}_${i}`;
    used.add(n);
    return n;
  };
  return defs.map((def) => {
    if (def.component_name === 'Retrieval') {
      const description = String(def.params.description || RETRIEVAL_TOOL_DESCRIPTION);
      return {
        def,
        spec: {
          name: unique(RETRIEVAL_TOOL_NAME),
          description,
          parameters: { type: 'object', properties: { query: { type: 'string', description: 'The keywords to search the datasets for.' } }, required: ['query'] },
        },
      };
    }
    if (def.component_name === 'CodeExec') return { def, spec: codeToolSpec(unique(CODE_TOOL_NAME), def.params) };
    if (isExternalComponent(def.component_name)) {
      return {
        def,
        spec: {
          name: unique(def.name || def.component_name),
          description: String(def.params.description || `${def.component_name}: not available in Cairn.`),
          parameters: { type: 'object', properties: { query: { type: 'string' } } },
        },
      };
    }
    return {
      def,
      spec: {
        name: unique(def.name || String(def.params.name || 'agent')),
        description: String(def.params.description || 'A sub-agent that answers a task.'),
        parameters: {
          type: 'object',
          properties: {
            user_prompt: { type: 'string', description: 'The task for the agent.' },
            reasoning: { type: 'string', description: 'Why the task is given.' },
            context: { type: 'string', description: 'What the agent needs to know.' },
          },
          required: ['user_prompt'],
        },
      },
    };
  });
}

/** Runs one tool call; a failing tool answers the model with its error instead of failing the Agent. */
async function callTool(c: ToolCall, tools: BoundTool[], deps: ModelRunDeps, run: ModelRunResult, io: ModelRunIo): Promise<string> {
  const { signal } = io;
  const started = Date.now();
  const tool = tools.find((t) => t.spec.name === c.name);
  let args: Record<string, unknown> = {};
  let badArguments: unknown;
  try {
    args = c.arguments ? (JSON.parse(c.arguments) as Record<string, unknown>) : {};
  } catch (err) {
    badArguments = err;
  }
  const event = { tool_call_id: c.id, tool_name: c.name, tool_type: tool?.def.component_name ?? 'unknown', arguments: args, via: [] };
  io.onTool?.({ ...event, phase: 'started' });
  let result: string;
  let error: string | null = null;
  let retrieved: RetrievalOutput | undefined;
  try {
    if (badArguments) throw badArguments;
    if (!tool) throw new Error(`there is no tool named ${c.name}`);
    if (tool.mcp) {
      result = await tool.mcp.call(c.name, args, signal);
    } else if (isExternalComponent(tool.def.component_name)) {
      throw new Error(externalComponentError(tool.def.component_name));
    } else if (tool.def.component_name === 'CodeExec') {
      result = codeToolResult(await deps.runCode(codeJobOf(args, tool.def.params), signal));
    } else if (tool.def.component_name === 'Retrieval') {
      retrieved = await deps.retrieve(String(args.query ?? ''), tool.def.params);
      Object.assign(run.reference.chunks, retrieved.reference.chunks);
      Object.assign(run.reference.doc_aggs, retrieved.reference.doc_aggs);
      result = retrieved.formalized_content || 'Nothing relevant was found.';
    } else {
      const p = tool.def.params;
      const user = [args.user_prompt, args.context ? `Context: ${args.context}` : ''].filter(Boolean).join('\n\n');
      // The sub-agent's own tool calls are reported too, as made through this one.
      const onTool = io.onTool && ((e: ToolCallEvent) => io.onTool!({ ...e, via: [c.name, ...e.via] }));
      const sub = await runModelCall(
        {
          kind: 'Agent',
          id: `${tool.spec.name}`,
          messages: [...(p.sys_prompt ? [{ role: 'system' as const, content: String(p.sys_prompt) }] : []), { role: 'user', content: user }],
          settings: { llm_id: p.llm_id ? String(p.llm_id) : undefined },
          tools: (Array.isArray(p.tools) ? p.tools : []) as ToolDef[],
          max_rounds: Number(p.max_rounds ?? 5) || 5,
        },
        deps,
        { signal, onTool },
      );
      Object.assign(run.reference.chunks, sub.reference.chunks);
      Object.assign(run.reference.doc_aggs, sub.reference.doc_aggs);
      run.usage.calls += sub.usage.calls;
      run.usage.prompt_tokens += sub.usage.prompt_tokens;
      run.usage.completion_tokens += sub.usage.completion_tokens;
      result = String(sub.outputs.content ?? '');
    }
  } catch (err) {
    signal.throwIfAborted();
    error = err instanceof Error ? err.message : String(err);
    result = `Error: ${error}`;
  }
  const elapsed = (Date.now() - started) / 1000;
  run.trace.push({ tool_name: c.name, arguments: args, result, elapsed_time: elapsed });
  const summary = retrieved ? summariseRetrieval(retrieved) : { result: error ? `Error: ${error}` : summariseText(result) };
  io.onTool?.({ ...event, phase: 'finished', elapsed_time: elapsed, error, ...summary });
  return result;
}
