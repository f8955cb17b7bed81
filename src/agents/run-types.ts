import type { CanvasDsl, Outputs, ReferenceBucket, RunInputs } from './dsl.js';
import type { RunEvent } from '../events/types.js';
import type { RunFailure } from './run-failure.js';

/** Pure types shared by the interpreter (workflow code), the activities and the API. */

export interface RunRequest {
  query: string;
  inputs: RunInputs;
  files: unknown[];
  userId: string;
  chatTemplateKwargs?: Record<string, unknown>;
  /** What started the turn, for its run record: 'completion' when absent. */
  trigger?: string;
  /** Set when the turn replays a recorded run (docs/agents.md, "Runs and replay"). */
  replay?: { run_id: string; from_component: string };
}

/** Identity of one turn of one session: the workflow's input besides the canvas. */
export interface RunIds {
  /** The turn's message id; also the key of its event log. */
  runKey: string;
  agentId: string;
  sessionId: string;
  /** The tenant whose models and datasets the run uses (the agent's owner). */
  tenantId: string;
  /** Unix seconds when the run started. */
  createdAt: number;
}

export interface AgentRunInput extends RunIds {
  canvas: CanvasDsl;
  request: RunRequest;
  /** Component id -> the editor's node name (from `graph`), for event payloads. */
  names: Record<string, string>;
  /**
   * A replay's recorded outputs (component id -> outputs) of the components that finished before the
   * replay's `from_component`: the walk takes them instead of running those components. Absent in
   * ordinary turns (and in workflow histories written before replays existed).
   */
  reuse?: Record<string, Outputs>;
  /**
   * A replay's recorded references (component id -> the chunks and documents it added to its turn's
   * reference) of reused components: they join the replay's reference. Absent in ordinary turns, and
   * in histories written before reused steps carried their references.
   */
  reuseReferences?: Record<string, ReferenceBucket>;
  /**
   * Set on a turn that waited behind another (multitask_strategy enqueue / interrupt / rollback): its
   * canvas was read when it was submitted, so the turn reads the session's canvas again when it starts.
   */
  fromSession?: boolean;
  /** Turns waiting behind this one, in the order they run (carried over continue-as-new). */
  queued?: AgentRunInput[];
  /** The deployment's walk limits (absent in histories written before they were settings: the defaults). */
  limits?: CanvasLimits;
}

/** How far one turn's walk may go (CAIRN_AGENT_MAX_STEPS, CAIRN_AGENT_ITERATION_MAX_ITEMS). */
export interface CanvasLimits {
  /** Batches one turn may execute: past it the canvas is taken to loop without end. */
  maxSteps: number;
  /** Items one Iteration may walk. */
  iterationMaxItems: number;
}

/**
 * What a second turn does when one of the session is running (LangGraph Platform's multitask
 * strategies): `reject` (409), `enqueue` (runs after it), `interrupt` (stops it, keeps what it produced,
 * then runs), `rollback` (stops it and removes it, then runs).
 */
export const MULTITASK_STRATEGIES = ['reject', 'enqueue', 'interrupt', 'rollback'] as const;
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

/** The signal a turn submitted with a strategy other than `reject` sends to the session's workflow. */
export const AGENT_TURN_SIGNAL = 'agentTurn';
export interface AgentTurnSignal {
  turn: AgentRunInput;
  strategy: Exclude<MultitaskStrategy, 'reject'>;
}

/** A session's open turn workflow: the turn it runs (its memo) and its Temporal run id. */
export interface OpenAgentRun {
  runKey: string;
  runId: string;
}

/**
 * `interrupted`: stopped by a newer turn, its streamed text kept as the answer. `rolled_back`: stopped
 * (or dropped from the queue) by a newer turn, nothing of it stays in the session.
 */
export type RunStatus = 'finished' | 'paused' | 'failed' | 'cancelled' | 'interrupted' | 'rolled_back';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  calls: number;
}

/** A chat message as the model components receive it. */
export interface PromptMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  /** On the last user message: images (data URLs) for the model to see (prompt-images.ts). */
  images?: string[];
}

/** Model settings of an LLM / Agent / Categorize component, already gated by their *Enabled flags. */
export interface ModelSettings {
  llm_id?: string;
  temperature?: number;
  top_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  max_tokens?: number;
}

/** An Agent's tool (RAGFlow `params.tools[]`): Retrieval, CodeExec, another Agent as a sub-agent, or an outside-service tool (external.ts). */
export interface ToolDef {
  component_name: string;
  name?: string;
  params: Record<string, unknown>;
}

/** What an I/O component needs, resolved by the interpreter so the activity input is readable in history. */
export type ComponentCall =
  | ({ kind: 'LLM' | 'Agent' } & ModelCall)
  | { kind: 'Retrieval'; id: string; query: string; params: Record<string, unknown> }
  | { kind: 'Categorize'; id: string; query: string; messages: PromptMessage[]; settings: ModelSettings; categories: Record<string, { to?: string[] }> }
  | { kind: 'Message'; id: string; pieces: MessagePiece[]; producers: Record<string, ModelCall & { kind: 'LLM' | 'Agent' }> }
  | { kind: 'Invoke'; id: string; params: Record<string, unknown> }
  | { kind: 'CodeExec'; id: string; params: Record<string, unknown> }
  | { kind: 'Memory'; id: string; memory_ids: string[]; user_id?: string; user_input: string; agent_response: string };

export interface ModelCall {
  id: string;
  messages: PromptMessage[];
  settings: ModelSettings;
  /** JSON Schema of `structured` output, when the component declares one. */
  schema?: Record<string, unknown>;
  tools?: ToolDef[];
  /** MCP servers whose tools the Agent offers: `tools` names the chosen ones (none = all). */
  mcp?: { mcp_id: string; tools?: Record<string, unknown> }[];
  max_rounds?: number;
  /** Add the citation prompt when the turn has references. */
  cite?: boolean;
  chatTemplateKwargs?: Record<string, unknown>;
}

/** A Message template after resolution: literal text, or the streamed content of a deferred producer. */
export type MessagePiece = { text: string } | { producer: string; path: string };

/** What a Retrieval tool call found, in short: for the run's events (the chunks themselves are in the reference). */
export interface RetrievedSummary {
  /** Chunks found. */
  total: number;
  /** The first chunks (at most 8): id, document, and the start of the content. */
  chunks: { id: string; document_id: string; document_name: string; content: string }[];
}

/**
 * An Agent's tool call as it starts and as it ends; streamed as `tool_started` / `tool_finished`
 * (docs/agents.md). `via` names the sub-agent tools a nested call went through, outermost first.
 */
export type ToolCallEvent = {
  tool_call_id: string;
  tool_name: string;
  /** The tool's component: Retrieval, Agent, MCP, or an outside-service component. */
  tool_type: string;
  arguments: unknown;
  via: string[];
} & (
  | { phase: 'started' }
  | {
      phase: 'finished';
      elapsed_time: number;
      error: string | null;
      /** One line: what came back ("3 chunks: a.md, b.md"), or the error. */
      result: string;
      retrieved?: RetrievedSummary;
    }
);

/** What the interpreter hands an activity: the call, plus the run's envelope and pending events. */
export interface ActivityInput extends RunIds {
  call: ComponentCall;
  /** Events the workflow produced since the last activity; published before the component runs. */
  before: RunEvent[];
  /** Seconds; the component fails when it takes longer (per attempt). */
  timeoutSec: number;
  maxRetries: number;
  delayAfterErrorSec: number;
  /** Stream `message` deltas for this component (LLM/Agent deferred into a Message, or the Message itself). */
  stream: boolean;
}

export interface ComponentResult {
  outputs: Outputs;
  /** Set when the component failed after its retries: the reason. */
  error?: string;
  /** The failure is a fault of Cairn's (see run-failure.ts), not of the canvas or its input. */
  internal?: boolean;
  /** Chunks and documents it retrieved, to merge into the run's reference bucket. */
  reference?: ReferenceBucket;
  usage?: Usage;
  /** For a Message with deferred producers: their outputs. */
  producers?: Record<string, { outputs: Outputs; error?: string; internal?: boolean; usage?: Usage; reference?: ReferenceBucket; trace?: unknown[] }>;
  /** Tool calls made (Agent), for `trace`. */
  trace?: unknown[];
}

/** The turn's end, as the workflow returns it and finishTurn persists it. */
export interface TurnOutcome {
  status: RunStatus;
  canvas: CanvasDsl;
  /** The assistant's text of this turn (every Message's content). */
  answer: string;
  reference: ReferenceBucket;
  error?: string;
  /** Whose fault a failed turn is, and the component that failed (see run-failure.ts). */
  failure?: RunFailure;
}

/**
 * The activity that runs each kind of I/O component, for a turn (workflows/agent-run.ts) and for a
 * component's debug run (workflows/agent-debug.ts): one activity type per component, so the history reads
 * like the canvas.
 */
export const COMPONENT_ACTIVITY = {
  LLM: 'agentLLM',
  Agent: 'agentAgent',
  Retrieval: 'agentRetrieval',
  Categorize: 'agentCategorize',
  Message: 'agentMessage',
  Memory: 'agentSaveMemory',
  Invoke: 'agentInvoke',
  CodeExec: 'agentCodeExec',
} as const satisfies Record<ComponentCall['kind'], string>;
