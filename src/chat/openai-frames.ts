/**
 * OpenAI chat completion shapes (`chat.completion`, `chat.completion.chunk`) for the OpenAI-compatible
 * route. Chunks carry increments, as every OpenAI client expects; the last one repeats the whole answer
 * in `delta.final_content` and, when asked, the references in `delta.reference`.
 */
import { countTokens } from '../text/tokens.js';
import type { FinalEvent, TurnEvent } from './events.js';
import type { ReferenceChunk } from './references.js';

export interface CompletionIds {
  id: string;
  model: string;
  created: number;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export function usageOf(ev: FinalEvent): Usage {
  const prompt = ev.messages.reduce((n, m) => n + countTokens(m.content), 0);
  const completion = countTokens(ev.reasoning) + countTokens(ev.answer);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** The body of an OpenAI-style error (HTTP status set by the caller). */
export function openAIError(message: string, status: number) {
  const type = status === 401 ? 'authentication_error' : status === 404 ? 'not_found_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { message, type, param: null, code: String(status) } };
}

export class OpenAIChunks {
  private first = true;

  constructor(
    private readonly ids: CompletionIds,
    private readonly withReference: boolean,
  ) {}

  chunk(ev: TurnEvent) {
    if (ev.type === 'reasoning') return this.frame({ content: null, reasoning_content: ev.delta });
    if (ev.type === 'answer') return this.frame({ content: ev.delta });
    const delta: Record<string, unknown> = { content: null, final_content: ev.answer };
    if (this.withReference) delta.reference = ev.reference.chunks;
    return this.frame(delta, 'stop', usageOf(ev));
  }

  completion(ev: FinalEvent) {
    const message: Record<string, unknown> = { role: 'assistant', content: ev.answer };
    if (ev.reasoning) message.reasoning_content = ev.reasoning;
    if (this.withReference) message.reference = ev.reference.chunks as ReferenceChunk[];
    return {
      ...this.ids,
      object: 'chat.completion',
      choices: [{ index: 0, message, logprobs: null, finish_reason: 'stop' }],
      usage: usageOf(ev),
    };
  }

  private frame(delta: Record<string, unknown>, finish: string | null = null, usage: Usage | null = null) {
    if (this.first) delta = { role: 'assistant', ...delta };
    this.first = false;
    return {
      ...this.ids,
      object: 'chat.completion.chunk',
      system_fingerprint: '',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage,
    };
  }
}
