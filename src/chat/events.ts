import type { ChatMessage } from '../models/types.js';
import type { ChatReference } from './references.js';

/**
 * What a conversation turn produces, independent of the wire format. `text` is everything so far,
 * `delta` what this event added; a turn ends with exactly one `final` (or throws).
 */
export type TurnEvent =
  | { type: 'reasoning'; delta: string; text: string }
  | { type: 'answer'; delta: string; text: string }
  | { type: 'final'; answer: string; reasoning: string; reference: ChatReference; prompt: string; messages: ChatMessage[] };

export type FinalEvent = Extract<TurnEvent, { type: 'final' }>;

export interface TurnIds {
  /** The turn id: the question and its answer share it in the session. */
  id: string;
  /** Empty for turns without a session (OpenAI-compatible route). */
  session_id: string;
  chat_id: string;
}

/** A conversation turn that passed validation; `events` runs retrieval and the model. */
export interface Turn {
  ids: TurnIds;
  /** Stage timings in ms, filled while the turn runs (for the request log). */
  timings: Record<string, number>;
  events(signal?: AbortSignal): AsyncGenerator<TurnEvent>;
}

/** Runs a turn to its end (non-streaming responses); undefined when the caller left first (`signal`). */
export async function finalOf(turn: Turn, signal: AbortSignal): Promise<FinalEvent | undefined> {
  try {
    for await (const ev of turn.events(signal)) if (ev.type === 'final') return ev;
  } catch (err) {
    if (signal.aborted) return undefined;
    throw err;
  }
  throw new Error('the conversation turn ended without a final answer');
}
