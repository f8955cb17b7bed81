/**
 * Agent run events on the wire, as RAGFlow sends them: canvas events in an envelope
 * (`{event, message_id, created_at, task_id, session_id, data}`), an error frame, `[DONE]`; the
 * non-stream answer aggregated from the events; and the OpenAI-compatible shapes.
 */
import type { ServerResponse } from 'node:http';
import { RUN_ERROR, type RunEvent } from '../events/types.js';
import type { AgentTurn } from '../services/agent-sessions.js';
import { SseStream, clientGone } from '../chat/sse.js';
import { describeFailure } from '../chat/failure.js';
import { ApiError } from '../errors.js';
import { countTokens } from '../text/tokens.js';
import { failedComponent, failureStatus, type RunFailure } from '../agents/run-failure.js';

export interface Envelope {
  event: string;
  message_id: string;
  created_at: number;
  task_id: string;
  session_id: string;
  data: any;
}

function envelope(turn: AgentTurn, ev: RunEvent): Envelope {
  return { event: ev.event, message_id: turn.messageId, created_at: turn.createdAt, task_id: turn.sessionId, session_id: turn.sessionId, data: ev.data };
}

/**
 * The run's failure as RAGFlow's stream error frame: `code` 400 when the canvas or its input caused it
 * (`data` names the component), 500 for a fault of Cairn's (RAGFlow sends 500 for every failure).
 */
function errorFrame(failure: RunFailure) {
  return { code: failureStatus(failure.kind), message: failure.message, data: failedComponent(failure) ?? false };
}

/** The run's failure as the non-stream answer: a 4xx naming the component, or a 500. */
function failureError(failure: RunFailure): ApiError {
  const status = failureStatus(failure.kind);
  return new ApiError(status, failure.message, status, failedComponent(failure));
}

/** Streams every canvas event; a failed run sends the error frame; then `data:[DONE]`. */
export async function streamAgentEvents(res: ServerResponse, turn: AgentTurn): Promise<void> {
  const sse = new SseStream(res);
  try {
    for await (const ev of turn.events(sse.signal)) {
      if (ev.event === RUN_ERROR) sse.send(errorFrame(ev.data as RunFailure));
      else sse.send(envelope(turn, ev));
    }
  } catch (err) {
    const failure = describeFailure(err);
    sse.send(errorFrame({ kind: failure.status < 500 ? 'user' : 'internal', message: failure.message || (err as Error).message }));
  }
  sse.sendText('[DONE]');
  sse.end();
}

/** Reads the whole run: every event, or the run's failure. Undefined when the caller left first. */
async function collect(res: ServerResponse, turn: AgentTurn): Promise<Envelope[] | undefined> {
  const signal = clientGone(res);
  const events: Envelope[] = [];
  for await (const ev of turn.events(signal)) {
    if (ev.event === RUN_ERROR) throw failureError(ev.data as RunFailure);
    events.push(envelope(turn, ev));
  }
  return signal.aborted ? undefined : events;
}

/**
 * RAGFlow's non-stream answer (reference §4.4): the last meaningful event, its data replaced by the
 * whole content, the reference, structured outputs per component, usage, and the trace if asked.
 */
export function aggregate(turn: AgentTurn, events: Envelope[], returnTrace: boolean) {
  let content = '';
  let reference: unknown = {};
  let usage: unknown;
  const structured: Record<string, unknown> = {};
  const trace: { component_id: string; trace: unknown[] }[] = [];
  let last: Envelope | undefined;
  for (const ev of events) {
    const d = ev.data ?? {};
    if (ev.event === 'message') {
      if (d.start_to_think) content += '<think>';
      else if (d.end_to_think) content += '</think>';
      else content += d.content ?? '';
    } else if (ev.event === 'message_end') {
      if (d.reference) reference = d.reference;
      last = ev;
    } else if (ev.event === 'node_finished') {
      if (d.outputs?.structured !== undefined) structured[d.component_id] = d.outputs.structured;
      trace.push({ component_id: d.component_id, trace: [d] });
    } else if (ev.event === 'workflow_finished' || ev.event === 'user_inputs') {
      if (ev.event === 'workflow_finished') usage = d.usage;
      last = ev;
    }
  }
  const base = last ?? { event: 'message_end', message_id: turn.messageId, created_at: turn.createdAt, task_id: turn.sessionId, session_id: turn.sessionId, data: {} };
  const data: Record<string, unknown> = { ...base.data, content, reference };
  if (Object.keys(structured).length) data.structured = structured;
  if (usage) data.usage = usage;
  if (returnTrace) data.trace = trace;
  return { ...base, data };
}

export async function answerAgentWhole(res: ServerResponse, turn: AgentTurn, returnTrace: boolean) {
  const events = await collect(res, turn);
  return events && aggregate(turn, events, returnTrace);
}

/** OpenAI-compatible answers: only the message text and the reference reach the caller. */
export class AgentOpenAIFrames {
  private first = true;
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly turn: AgentTurn,
    private readonly model: string,
    private readonly question: string,
  ) {}

  private ids() {
    return { id: this.turn.sessionId, object: 'chat.completion.chunk', created: this.created, model: this.model, system_fingerprint: '' };
  }

  usage(answer: string) {
    const prompt = countTokens(this.question);
    const completion = countTokens(answer);
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  }

  chunk(delta: Record<string, unknown>, finish: string | null = null, usage: unknown = null) {
    if (this.first) delta = { role: 'assistant', ...delta };
    this.first = false;
    return { ...this.ids(), choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage };
  }

  completion(answer: string, reference: unknown) {
    const message: Record<string, unknown> = { role: 'assistant', content: answer };
    if (reference && Object.keys(reference).length) message.reference = reference;
    return {
      id: this.turn.sessionId,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      param: null,
      usage: { ...this.usage(answer), completion_tokens_details: { reasoning_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 } },
      choices: [{ message, logprobs: null, finish_reason: 'stop', index: 0 }],
    };
  }
}

export async function streamAgentOpenAI(res: ServerResponse, turn: AgentTurn, frames: AgentOpenAIFrames): Promise<void> {
  const sse = new SseStream(res, { spaced: true });
  let answer = '';
  let reference: unknown;
  try {
    for await (const ev of turn.events(sse.signal)) {
      const d = (ev.data ?? {}) as Record<string, any>;
      if (ev.event === RUN_ERROR) {
        sse.send(frames.chunk({ content: `**ERROR**: ${d.message}` }));
      } else if (ev.event === 'message' && d.content) {
        answer += d.content;
        sse.send(frames.chunk({ content: d.content }));
      } else if (ev.event === 'message_end' && d.reference) {
        reference = d.reference;
      }
    }
    const delta: Record<string, unknown> = { content: null };
    if (reference) delta.reference = reference;
    sse.send(frames.chunk(delta, 'stop', frames.usage(answer)));
  } catch (err) {
    sse.send(frames.chunk({ content: `**ERROR**: ${describeFailure(err).message}` }, 'stop'));
  }
  sse.sendText('[DONE]');
  sse.end();
}

export async function answerAgentOpenAI(res: ServerResponse, turn: AgentTurn, frames: AgentOpenAIFrames) {
  let answer = '';
  let reference: unknown;
  const signal = clientGone(res);
  for await (const ev of turn.events(signal)) {
    const d = (ev.data ?? {}) as Record<string, any>;
    if (ev.event === RUN_ERROR) answer += `**ERROR**: ${d.message}`;
    else if (ev.event === 'message' && d.content) answer += d.content;
    else if (ev.event === 'message_end' && d.reference) reference = d.reference;
  }
  return signal.aborted ? undefined : frames.completion(answer, reference);
}
