/**
 * Deterministic behaviour shared by the fake model servers, so tests can predict exact outputs:
 * - chat: an AnswerScript maps the request messages to {reasoning?, answer, tool_calls?}; the default
 *   `echoAnswer` answers `Echo: <last user message>`; streamed "tokens" are whitespace-delimited words
 *   (`splitTokens`); scripted tool calls are sent in the provider's own tool-call format;
 * - embeddings: `fakeEmbedding` = hashed bag of words, L2-normalised (texts sharing words are similar);
 * - rerank: `overlapScore` = share of the query's distinct words found in the document (0..1).
 */

/** A tool call as a script sees it in the conversation (arguments parsed from the wire). */
export interface FakeToolCall {
  /** The call id (OpenAI `tool_calls[].id`; Ollama sends none, then ''). */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** A request message, normalised across the provider protocols. */
export interface FakeMessage {
  role: string;
  content: string;
  /** On an assistant message: the tool calls it made. */
  tool_calls?: FakeToolCall[];
  /** On a tool message (OpenAI): the call it answers. */
  tool_call_id?: string;
  /** On a tool message (Ollama): the tool's name. */
  tool_name?: string;
}

export interface ScriptedToolCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Call id sent to the client (OpenAI); default `call_<n>`, n counting per fake server. */
  id?: string;
}

export interface ScriptedAnswer {
  /** Streamed first, as the provider's reasoning field or inside <think> tags (see reasoningStyle). */
  reasoning?: string;
  /** Answer text; may be empty when the answer is only tool calls. */
  answer: string;
  /** When present, the model calls these tools (after any answer text), finish_reason `tool_calls`. */
  tool_calls?: ScriptedToolCall[];
}

/** What a chat request asked for besides its messages, normalised across the provider protocols. */
export interface FakeChatRequest {
  /** The functions offered (OpenAI `tools[].function`, Ollama `tools[].function`). */
  tools: { name: string; description?: string; parameters?: unknown }[];
  /** The JSON schema requested (OpenAI `response_format.json_schema.schema`, Ollama `format` object). */
  json_schema?: unknown;
  /** The raw request body. */
  body: any;
}

export type AnswerScript = (messages: FakeMessage[], model: string, request?: FakeChatRequest) => ScriptedAnswer;

export interface FakeFailure {
  /** HTTP status to answer with. */
  status: number;
  message?: string;
  /** Only requests whose path starts with this fail (default: all). */
  path?: string;
  /** Fail this many requests, then recover (default: every request). */
  times?: number;
}

/** Mutable at run time through the fake's `behaviour` property. */
export interface FakeBehaviour {
  answer: AnswerScript;
  /** Delay before the first streamed token (time to first token). */
  ttftMs: number;
  /** Delay between streamed tokens. A non-streamed reply waits ttftMs + tokens * tokenDelayMs. */
  tokenDelayMs: number;
  /** Embedding dimensions. */
  dims: number;
  /** Delay before an embeddings reply (a slow embedding model). */
  embedDelayMs: number;
  /** 'field': reasoning_content (OpenAI-style) / message.thinking (Ollama); 'think-tags': inline in content. */
  reasoningStyle: 'field' | 'think-tags';
  failure?: FakeFailure;
  /** Chat calls this gate picks wait, before anything is sent, until the test releases them. */
  gate?: CallGate;
}

/**
 * Holds the chat calls it picks open until the test releases them: for a test that needs a model call
 * still waiting while something else happens, however long that takes (a fixed delay has to guess).
 * A held call leaves the gate when it is released or when its client goes away (then it is not answered).
 *
 *   const gate = callGate((messages) => messages[1]?.content.includes('FIRST'));
 *   fake.behaviour.gate = gate;
 *   await eventually(async () => gate.held === 1);   // the call is waiting on the "model"
 *   ...
 *   gate.release();                                  // it is answered now, and later calls pass
 */
export interface CallGate {
  /** Calls waiting at the gate now (their clients still connected). */
  readonly held: number;
  /** Lets the held calls go on; from now on every call passes. */
  release(): void;
  /** Resolves when the call may be answered: at once unless the gate holds it. */
  pass(messages: FakeMessage[], clientGone: AbortSignal): Promise<void>;
}

/** A gate holding every call `holds` picks (asked once per call, in arrival order) until released. */
export function callGate(holds: (messages: FakeMessage[]) => boolean = () => true): CallGate {
  let released = false;
  const waiting = new Set<() => void>();
  return {
    get held() {
      return waiting.size;
    },
    release() {
      released = true;
      for (const go of [...waiting]) go();
    },
    pass(messages, clientGone) {
      if (released || clientGone.aborted || !holds(messages)) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const go = () => {
          waiting.delete(go);
          clientGone.removeEventListener('abort', go);
          resolve();
        };
        waiting.add(go);
        clientGone.addEventListener('abort', go);
      });
    },
  };
}

export function lastUserMessage(messages: FakeMessage[]): string {
  return [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
}

/** Default script: `Echo: <last user message>`, no reasoning. */
export const echoAnswer: AnswerScript = (messages) => ({ answer: `Echo: ${lastUserMessage(messages)}` });

export function fixedAnswer(answer: string, reasoning?: string): AnswerScript {
  return () => ({ answer, reasoning });
}

/** The content of the last tool message, or undefined when the conversation has no tool result. */
export function lastToolResult(messages: FakeMessage[]): string | undefined {
  return [...messages].reverse().find((m) => m.role === 'tool')?.content;
}

/**
 * The usual agent round trip: while no tool result follows the last user message, call `name` with
 * `args` (or `args(question)`); once a tool result is there, answer `answer(result, question)`.
 *
 *   fake.behaviour.answer = toolRoundTrip('search', (q) => ({ query: q }), (result) => `Found: ${result}`);
 */
export function toolRoundTrip(
  name: string,
  args: Record<string, unknown> | ((question: string) => Record<string, unknown>),
  answer: (result: string, question: string) => string,
): AnswerScript {
  return (messages) => {
    const question = lastUserMessage(messages);
    const lastUser = messages.map((m) => m.role).lastIndexOf('user');
    const result = messages.slice(lastUser + 1).reverse().find((m) => m.role === 'tool');
    if (result) return { answer: answer(result.content, question) };
    return { answer: '', tool_calls: [{ name, arguments: typeof args === 'function' ? args(question) : args }] };
  };
}

/** An answer of exactly `n` tokens (`tok0 tok1 ...`), e.g. for streaming benchmarks. */
export function tokensAnswer(n: number): AnswerScript {
  const answer = Array.from({ length: n }, (_, i) => `tok${i}`).join(' ');
  return () => ({ answer });
}

export const DEFAULT_BEHAVIOUR: FakeBehaviour = {
  answer: echoAnswer,
  ttftMs: 0,
  tokenDelayMs: 0,
  dims: 64,
  embedDelayMs: 0,
  reasoningStyle: 'field',
};

/** Splits text into streaming tokens: each word with its leading whitespace; concatenation gives back the text. */
export function splitTokens(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? [];
}

export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Hashed bag-of-words embedding, unit length; a text without words maps to the first axis. */
export function fakeEmbedding(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const w of words(text)) v[fnv1a(w) % dims]! += fnv1a(`${w}#sign`) & 1 ? 1 : -1;
  const norm = Math.hypot(...v);
  if (norm === 0) {
    v[0] = 1;
    return v;
  }
  return v.map((x) => x / norm);
}

/** Share of the query's distinct words that occur in the document, 0..1. */
export function overlapScore(query: string, document: string): number {
  const q = new Set(words(query));
  if (q.size === 0) return 0;
  const d = new Set(words(document));
  let hits = 0;
  for (const w of q) if (d.has(w)) hits++;
  return hits / q.size;
}

export function countTokens(texts: string[]): number {
  return texts.reduce((n, t) => n + splitTokens(t).length, 0);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface FakeToken {
  kind: 'reasoning' | 'answer';
  text: string;
}

/** The tokens a fake streams for a scripted answer, honouring the reasoning style. */
export function scriptedTokens(scripted: ScriptedAnswer, style: FakeBehaviour['reasoningStyle']): FakeToken[] {
  if (scripted.reasoning && style === 'think-tags') {
    return splitTokens(`<think>${scripted.reasoning}</think>\n\n${scripted.answer}`).map((text) => ({ kind: 'answer', text }));
  }
  return [
    ...splitTokens(scripted.reasoning ?? '').map((text) => ({ kind: 'reasoning' as const, text })),
    ...splitTokens(scripted.answer).map((text) => ({ kind: 'answer' as const, text })),
  ];
}

/** Emits tokens with the scripted time to first token and per-token delay; stops early if the client left. */
export async function playTokens(
  tokens: FakeToken[],
  behaviour: FakeBehaviour,
  closed: () => boolean,
  emit: (token: FakeToken) => void,
): Promise<void> {
  await sleep(behaviour.ttftMs);
  for (let i = 0; i < tokens.length; i++) {
    if (closed()) return;
    if (i > 0 && behaviour.tokenDelayMs > 0) await sleep(behaviour.tokenDelayMs);
    emit(tokens[i]!);
  }
}

/** A scripted tool call with its id settled and its arguments as the JSON text the model "produced". */
export interface PlannedToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  json: string;
}

/** Gives each scripted call an id (`call_<n>` from `nextId` unless the script chose one). */
export function planToolCalls(scripted: ScriptedAnswer, nextId: () => string): PlannedToolCall[] {
  return (scripted.tool_calls ?? []).map((c) => ({
    id: c.id ?? nextId(),
    name: c.name,
    arguments: c.arguments,
    json: JSON.stringify(c.arguments ?? {}),
  }));
}

/** Cuts a call's JSON arguments into pieces of at most `size` characters, as providers stream them. */
export function argumentPieces(json: string, size = 8): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < json.length; i += size) pieces.push(json.slice(i, i + size));
  return pieces;
}

/** A counter of call ids, one per fake server: `call_1`, `call_2`, ... */
export function callIds(): () => string {
  let n = 0;
  return () => `call_${++n}`;
}

/** Parses wire arguments (JSON text or an object) for a script; invalid JSON is kept as `{_raw: text}`. */
export function parseArguments(value: unknown): Record<string, unknown> {
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  if (typeof value !== 'string' || !value.trim()) return {};
  try {
    const parsed = JSON.parse(value) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { _raw: value };
  } catch {
    return { _raw: value };
  }
}

/** How long a non-streamed reply takes: the same time the stream would. */
export function replyDelay(tokens: number, behaviour: FakeBehaviour): number {
  return behaviour.ttftMs + Math.max(0, tokens - 1) * behaviour.tokenDelayMs;
}
