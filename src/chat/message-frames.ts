/**
 * The conversation Message frames of the RAGFlow-compatible completion routes.
 *
 * Every frame carries the full answer so far (spec: cumulative, unlike RAGFlow's deltas). Reasoning is
 * kept apart in `reasoning`, cumulative too, framed by a `start_to_think` and an `end_to_think` frame.
 * The final frame (`final: true`) carries the references. With `legacy`, reasoning is inlined as
 * `<think>…</think>` at the start of `answer` and there are no markers.
 */
import type { FinalEvent, TurnEvent, TurnIds } from './events.js';
import type { ChatReference } from './references.js';

export interface AnswerData {
  answer: string;
  reference: ChatReference | Record<string, never>;
  reasoning?: string;
  start_to_think?: true;
  end_to_think?: true;
  audio_binary: null;
  prompt: string;
  created_at: number;
  final: boolean;
  id: string;
  session_id: string;
  chat_id: string;
}

export interface Frame {
  code: number;
  message: string;
  data: AnswerData | true | { answer: string; reference: [] };
}

/** The last frame of every stream. */
export const DONE_FRAME: Frame = { code: 0, message: '', data: true };

export function errorFrame(code: number, message: string): Frame {
  return { code, message, data: { answer: `**ERROR**: ${message}`, reference: [] } };
}

export class MessageFrames {
  private reasoning = '';
  private answer = '';
  private thinking: 'no' | 'open' | 'closed' = 'no';

  constructor(
    private readonly ids: TurnIds,
    private readonly legacy: boolean,
    private readonly createdAt = Date.now() / 1000,
  ) {}

  /** The frames for one event (markers may add one). */
  frames(ev: TurnEvent): Frame[] {
    const out: Frame[] = [];
    if (ev.type === 'reasoning') {
      this.reasoning = ev.text;
      if (this.thinking === 'no' && !this.legacy) out.push(this.frame({ answer: '', reasoning: '', start_to_think: true }));
      this.thinking = 'open';
      out.push(this.frame(this.legacy ? { answer: `<think>${this.reasoning}` } : { answer: '', reasoning: this.reasoning }));
      return out;
    }
    if (ev.type === 'answer') {
      this.answer = ev.text;
      out.push(...this.closeThinking(), this.frame(this.content()));
      return out;
    }
    this.answer = ev.answer;
    this.reasoning = ev.reasoning;
    out.push(...this.closeThinking(), this.frame({ ...this.content(), reference: ev.reference, prompt: ev.prompt, final: true }));
    return out;
  }

  /** The whole answer as one message (non-streaming responses). */
  whole(ev: FinalEvent): AnswerData {
    return this.frames(ev).at(-1)!.data as AnswerData;
  }

  private closeThinking(): Frame[] {
    if (this.thinking !== 'open') return [];
    this.thinking = 'closed';
    return this.legacy ? [] : [this.frame({ answer: '', reasoning: this.reasoning, end_to_think: true })];
  }

  private content(): Partial<AnswerData> {
    if (this.legacy) return { answer: this.reasoning ? `<think>${this.reasoning}</think>${this.answer}` : this.answer };
    return this.reasoning ? { answer: this.answer, reasoning: this.reasoning } : { answer: this.answer };
  }

  private frame(fields: Partial<AnswerData>): Frame {
    return {
      code: 0,
      message: '',
      data: {
        answer: '',
        reference: {},
        audio_binary: null,
        prompt: '',
        created_at: this.createdAt,
        final: false,
        ...this.ids,
        ...fields,
      },
    };
  }
}
